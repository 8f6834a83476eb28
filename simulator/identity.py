"""Who is acting: on a MongoDB server with credentials, the database user; elsewhere --user/
SIM_USER, else the name remembered on this machine."""

from __future__ import annotations

import getpass
import json
import os
import re
from pathlib import Path

from simulator.errors import UserError
from simulator.settings import config_dir

USER_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@\-]{0,63}$")


def config_file() -> Path:
    return config_dir() / "config.json"


def remembered_user() -> str | None:
    """The name stored for auto-login. The file never holds passwords or API keys."""
    try:
        data = json.loads(config_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    name = data.get("user") if isinstance(data, dict) else None
    return name if isinstance(name, str) and USER_PATTERN.match(name) else None


def remember_user(name: str) -> Path:
    name = check_user_name(name)
    path = config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"user": name}, indent=2) + "\n", encoding="utf-8")
    return path


def check_user_name(name: str, field: str = "user") -> str:
    name = (name or "").strip()
    if not USER_PATTERN.match(name):
        raise UserError(
            f"{name!r} is not a usable user name",
            field=field,
            fix="use 1-64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit",
        )
    return name


def resolve_user(
    flag_user: str | None, db_username: str | None, *, server: bool = False
) -> str | None:
    """The acting user, or None when only the interactive CLI can ask.

    Why the database user wins on a server: there the name is what MongoDB authenticated, and
    ownership checks (delete, sweeps, scores) rest on it; `--user` may not claim another name.
    Without credentials in the URI (or on the embedded store) `--user` is only a label.
    """
    if server and db_username:
        account = check_user_name(db_username, "DB_USER")
        env_user = os.environ.get("SIM_USER")
        flag_field = "SIM_USER" if flag_user == env_user else "--user"  # click reads SIM_USER too
        for claimed, field in ((flag_user, flag_field), (env_user, "SIM_USER")):
            if claimed and claimed.strip() != account:
                raise UserError(
                    f"on a shared MongoDB you act as the database user {account!r}; "
                    f"{field} {claimed.strip()} is for the embedded store",
                    field="--user/SIM_USER",
                    fix=f"leave out --user and SIM_USER, or connect with {claimed.strip()}'s own "
                    "database credentials (the user name in MONGODB_URI, --db or DB_USER)",
                )
        return account
    for candidate, field in (
        (flag_user, "--user/SIM_USER"),
        (os.environ.get("SIM_USER"), "SIM_USER"),
        (db_username, "DB_USER"),
    ):
        if candidate:
            return check_user_name(candidate, field)
    return remembered_user()


def user_note(server: bool, db_username: str | None) -> str:
    """How far the acting user's name can be trusted, in words for `info`."""
    if server and db_username:
        return "the authenticated database user"
    if server:
        return "a label; the server did not authenticate a user"
    return "a label on the embedded store, not a login"


def fallback_user() -> str:
    """For non-interactive commands with nobody remembered: the OS login name."""
    try:
        return check_user_name(getpass.getuser())
    except (UserError, OSError, KeyError):
        return "anonymous"
