"""Rewrites inside one dialect."""
