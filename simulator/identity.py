"""Who is acting: --user/SIM_USER, else the DB user, else the name remembered on this machine."""

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


def resolve_user(flag_user: str | None, db_username: str | None) -> str | None:
    """The acting user, or None when only the interactive CLI can ask."""
    for candidate, field in (
        (flag_user, "--user/SIM_USER"),
        (os.environ.get("SIM_USER"), "SIM_USER"),
        (db_username, "DB_USER"),
    ):
        if candidate:
            return check_user_name(candidate, field)
    return remembered_user()


def fallback_user() -> str:
    """For non-interactive commands with nobody remembered: the OS login name."""
    try:
        return check_user_name(getpass.getuser())
    except (UserError, OSError, KeyError):
        return "anonymous"
