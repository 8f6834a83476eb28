"""Prompt assembly of the network world."""
