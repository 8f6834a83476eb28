"""Validated models and pure rules of the grid world."""
