"""Prompt assembly of the grid world."""
