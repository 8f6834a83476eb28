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


class StoreUnavailable(Exception):
    """The store stopped taking writes (its disk is full, its server went away): no fault of
    the run, so runs stop resumable and the CLI says it in one sentence, with exit status 75
    (EX_TEMPFAIL: try again later). `what` names the store (a path or a host, never a
    password); `then` says what to do once it is fixed; a command sets `resume` to itself."""

    exit_code = 75

    def __init__(self, what: str, then: str, *, server_lost: bool = False):
        self.what = what
        self.then = then
        self.server_lost = server_lost  # every further write would wait for the timeout
        self.resume = "run the same command again"
        super().__init__(what)

    def render(self) -> str:
        return f"{self.what}; everything stored before that is kept: {self.then} {self.resume}."
