"""Click parameter types shared by commands: each refuses out-of-range input with one sentence.

Why here: `--seed`, `--concurrency` and `--lease-ttl` appear on several commands and must mean
the same and be bounded the same everywhere (a NaN lease or a zero TTL livelocks a sweep).
"""

from __future__ import annotations

import math

import click

from simulator.domain.limits import MAX_SEED
from simulator.errors import UserError

MAX_CONCURRENCY = 4096
MIN_LEASE_TTL_S = 2.0
MAX_LEASE_TTL_S = 86_400.0

SEED = click.IntRange(0, MAX_SEED)


def heartbeat_for(lease_ttl_s: float) -> float:
    """A worker renews its lease four times per TTL, at least every second."""
    return max(1.0, lease_ttl_s / 4)


class LeaseTTL(click.ParamType):
    """Seconds, finite, long enough that the heartbeat renews the lease before it expires."""

    name = "seconds"

    def convert(self, value, param, ctx) -> float:
        if isinstance(value, float | int) and not isinstance(value, bool):
            seconds = float(value)
        else:
            try:
                seconds = float(str(value).strip())
            except ValueError:
                self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or not MIN_LEASE_TTL_S <= seconds <= MAX_LEASE_TTL_S:
            self.fail(
                f"{value!r} is outside {MIN_LEASE_TTL_S:g}..{MAX_LEASE_TTL_S:g} seconds; a lease "
                "must be finite and outlive its heartbeat (renewed every quarter of it, at least "
                "every second), e.g. --lease-ttl 60",
                param,
                ctx,
            )
        return seconds


LEASE_TTL = LeaseTTL()


def pool_sizes(pools: tuple[str, ...]) -> dict[str, int]:
    """`--pool ENDPOINT=N` values as {endpoint: N}; a malformed one is refused by name."""
    sizes = {}
    for pool in pools:
        key, sep, size = pool.rpartition("=")
        if not sep or not key or not size.isdigit() or int(size) < 1:
            raise UserError(
                f"{pool!r} is not ENDPOINT=N", field="--pool", fix="write e.g. --pool openai=32"
            )
        sizes[key] = int(size)
    return sizes


def numbers(text: str | None, flag: str) -> list[int] | None:
    """`0,5,25` as [0, 5, 25] (absent: None); anything but whole numbers is refused by name."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts or not all(p.isascii() and p.isdigit() for p in parts):
        raise UserError(
            f"{text!r} is not a list of whole numbers",
            field=flag,
            fix=f"write e.g. {flag} 0,5,25",
        )
    return [int(p) for p in parts]
