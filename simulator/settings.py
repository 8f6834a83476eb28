"""Where settings come from: flags, then environment, then `.env`, then defaults.

Flags are handled by click (each option has a `SIM_*` env var); this module resolves what the
store and the user need from the environment, which `.env` has been loaded into without
overriding anything already set.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote_plus, unquote_plus

import platformdirs
from dotenv import find_dotenv, load_dotenv

from simulator.errors import UserError

APP_NAME = "llm-sim"
DEFAULT_DB_NAME = "llm_simulator"
MONGO_SCHEMES = ("mongodb://", "mongodb+srv://")


def load_env_file() -> str | None:
    """Load `.env` from the working directory (or a parent); real environment values win."""
    path = find_dotenv(usecwd=True)
    if path:
        load_dotenv(path, override=False)
    return path or None


def data_dir() -> Path:
    return Path(os.environ.get("SIM_DATA_DIR") or platformdirs.user_data_dir(APP_NAME))


def config_dir() -> Path:
    return Path(os.environ.get("SIM_CONFIG_DIR") or platformdirs.user_config_dir(APP_NAME))


def log_dir() -> Path:
    """Where session logs go: SIM_LOG_DIR, else the user's log directory (never the current
    folder, which a command run from anywhere would litter)."""
    return Path(os.environ.get("SIM_LOG_DIR") or platformdirs.user_log_dir(APP_NAME))


def default_store_path() -> Path:
    return data_dir() / "store"


def db_timeout_ms() -> int:
    """How long to wait for a MongoDB server before saying it cannot be reached."""
    value = os.environ.get("SIM_DB_TIMEOUT_MS", "5000")
    if not value.isdigit() or int(value) < 1:
        raise UserError(
            f"{value!r} is not a positive whole number of milliseconds",
            field="SIM_DB_TIMEOUT_MS",
            fix="set it to e.g. 5000",
        )
    return int(value)


def db_name() -> str:
    """SIM_DB_NAME, else the reference tool's DB_NAME, else llm_simulator."""
    return explicit_db_name() or DEFAULT_DB_NAME


def explicit_db_name() -> str | None:
    """The database name the environment (or `.env`) gives, or None when it gives none."""
    return os.environ.get("SIM_DB_NAME") or os.environ.get("DB_NAME") or None


def openai_base_url() -> str | None:
    """OPENAI_BASE_URL, else the reference tool's OPENAI_API_BASE; None for the official API."""
    return os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE") or None


@dataclass(frozen=True)
class DatabaseTarget:
    """A resolved database location and the variable a user should fix if it is wrong."""

    uri: str
    source: str  # "--db/SIM_DB", "MONGODB_URI", "DB_CLUSTER_URL", "default"
    username: str | None = None


def resolve_database(flag_value: str | None = None, password: str | None = None) -> DatabaseTarget:
    """Pick the database: --db/SIM_DB, MONGODB_URI, DB_USER+DB_PASSWORD+DB_CLUSTER_URL, default."""
    if flag_value is not None:  # an empty --db is refused when opened, not silently ignored
        return DatabaseTarget(flag_value, "--db/SIM_DB", uri_username(flag_value))
    if os.environ.get("MONGODB_URI"):
        uri = os.environ["MONGODB_URI"]
        return DatabaseTarget(uri, "MONGODB_URI", uri_username(uri))
    cluster = os.environ.get("DB_CLUSTER_URL")
    if cluster:
        user = os.environ.get("DB_USER")
        secret = password if password is not None else os.environ.get("DB_PASSWORD")
        uri = build_cluster_uri(cluster, user, secret)
        return DatabaseTarget(uri, "DB_CLUSTER_URL", uri_username(uri))
    return DatabaseTarget(str(default_store_path()), "default")


def build_cluster_uri(cluster: str, user: str | None, password: str | None) -> str:
    """The reference tool's DB_USER/DB_PASSWORD/DB_CLUSTER_URL, escaped properly.

    DB_CLUSTER_URL may be a bare host (Atlas-style `cluster0.x.mongodb.net` -> mongodb+srv,
    `host:port` or localhost -> mongodb) or a full URL, into which the credentials are inserted.
    """
    cluster = cluster.strip()
    if cluster.startswith(MONGO_SCHEMES):
        scheme, rest = cluster.split("://", 1)
        scheme += "://"
    else:
        host = cluster.split("/", 1)[0]
        local = host.split(":")[0] in {"localhost", "127.0.0.1", "::1"}
        scheme = "mongodb://" if (":" in host or local) else "mongodb+srv://"
        rest = cluster
    if "@" in rest.split("/", 1)[0]:
        return scheme + rest  # credentials already present in the URL
    if user and password is None:
        raise UserError(
            "DB_USER is set but DB_PASSWORD is not",
            field="DB_PASSWORD",
            fix="set DB_PASSWORD in the environment or .env, or run the interactive menu to be "
            "asked for it",
        )
    creds = f"{quote_plus(user)}:{quote_plus(password or '')}@" if user else ""
    return scheme + creds + rest


def uri_netloc(uri: str) -> str:
    """The `user:password@host:port,...` part of a URI, without a parser that can raise."""
    if "://" not in uri:
        return ""
    rest = uri.split("://", 1)[1]
    for end in "/?#":
        rest = rest.split(end, 1)[0]
    return rest


def uri_username(uri: str) -> str | None:
    if not uri.startswith(MONGO_SCHEMES):
        return None
    netloc = uri_netloc(uri)
    if "@" not in netloc:
        return None
    # unquote_plus, as pymongo reads it: the name the server authenticates ("re+searcher" is
    # "re searcher", the way build_cluster_uri escapes DB_USER)
    return unquote_plus(netloc.rsplit("@", 1)[0].split(":", 1)[0]) or None


def redact_uri(uri: str) -> str:
    """The URI with any password replaced, safe to show or log (any scheme)."""
    if "://" not in uri:
        return uri
    scheme, rest = uri.split("://", 1)
    netloc = uri_netloc(uri)
    tail = rest[len(netloc) :]
    if "@" in netloc:
        creds, host = netloc.rsplit("@", 1)
        user = creds.split(":", 1)[0]
        netloc = f"{user}:***@{host}" if ":" in creds else f"{user}@{host}"
    return f"{scheme}://{netloc}{tail}"


def uri_hosts(uri: str) -> str:
    if not uri.startswith(MONGO_SCHEMES):
        return uri
    return uri_netloc(uri).rsplit("@", 1)[-1]
