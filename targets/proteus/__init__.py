"""Proteus (seed 000_df708a39f4a23045.txt): clusters, synchronous cycles, complete exchange."""
