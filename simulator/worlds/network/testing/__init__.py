"""Loopback samples for tests of the opinion-network world."""
