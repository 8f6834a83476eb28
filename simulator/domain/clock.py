"""Naive UTC datetimes at millisecond precision: what MongoDB, litemongo and mongomock all keep."""

from __future__ import annotations

from datetime import UTC, datetime


def now() -> datetime:
    moment = datetime.now(UTC).replace(tzinfo=None)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def as_datetime(value: object) -> datetime | None:
    """A stored time as a datetime.

    nx-27017 (the wire-compatible test server) stores datetimes given to `$set` as strings, so
    times are normalised on read; times that queries compare (leases) are kept as epoch
    milliseconds instead, which every flavour stores and compares alike.
    """
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, str):
        return datetime.fromisoformat(value.replace("Z", "")).replace(tzinfo=None)
    raise TypeError(f"not a stored time: {value!r}")


def epoch_ms(moment: datetime | None = None) -> int:
    moment = moment or now()
    return int(moment.replace(tzinfo=UTC).timestamp() * 1000)
