"""Rewrites from one dialect to the next."""
