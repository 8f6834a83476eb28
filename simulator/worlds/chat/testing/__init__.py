"""Loopback samples for tests of the group-chat world."""
