"""Validated models and pure rules of the chat world."""
