"""Loopback replies for tests and demos of the grid world."""
