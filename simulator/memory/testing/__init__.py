"""Loopback replies for tests and demos of memory streams."""
