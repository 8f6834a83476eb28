"""Prompt assembly of the chat world."""
