"""Errors a user can fix. The CLI renders them as one paragraph and exits with status 2."""

from __future__ import annotations


class UserError(Exception):
    """Bad input or an unusable environment: names the field, what is wrong and how to fix it."""

    exit_code = 2

    def __init__(self, message: str, *, field: str | None = None, fix: str | None = None):
        self.field = field
        self.fix = fix
        self.message = message
        super().__init__(self.render())

    def render(self) -> str:
        parts = []
        if self.field:
            parts.append(f"{self.field}: {self.message}")
        else:
            parts.append(self.message)
        if self.fix:
            parts.append(f"Fix: {self.fix}")
        return " ".join(p.rstrip() for p in parts)


class PermissionRefused(UserError):
    """A change to a record that belongs to someone else."""


class NotFound(UserError):
    """An id that names nothing in the store."""
