"""Naive UTC datetimes at millisecond precision: what MongoDB, litemongo and mongomock all keep."""

from __future__ import annotations

from datetime import UTC, datetime


def now() -> datetime:
    moment = datetime.now(UTC).replace(tzinfo=None)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)
