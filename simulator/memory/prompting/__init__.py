"""Prompt assembly of memory streams."""
