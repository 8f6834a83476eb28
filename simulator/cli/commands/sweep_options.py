"""The options every sweep runner command takes, and the header a run starts with."""

from __future__ import annotations

import click

from simulator.cli.caps import cap_options
from simulator.cli.params import (
    LEASE_TTL,
    MAX_CONCURRENCY,
    MAX_LEASE_TTL_S,
    MIN_LEASE_TTL_S,
)
from simulator.domain.plural import count
from simulator.logs import redact

json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output only.")


def pools_header(verb: str, sweep_id: str, concurrency: int, sizes: dict[str, int]) -> str:
    """The run's first line: every default that changes what runs is said out loud."""
    set_by_user = redact(", ".join(f"{k}={v}" for k, v in sizes.items()))
    return (
        f"{verb} {sweep_id} with {count(concurrency, 'conversation')} at a time; "
        f"OpenAI-compatible and Ollama endpoints take up to {count(concurrency, 'call')} at once"
        + (f", except --pool {set_by_user}" if set_by_user else " (--pool ENDPOINT=N caps one)")
        + ". Each endpoint's pool is named when first used."
    )


FORK_OPTIONS = (  # a world whose sweeps fork a stored run lists these among its own
    click.Option(
        ["--fork-from"],
        metavar="CONV_ID",
        help="Fork sweep: every conversation branches this stored chat (its experiment's).",
    ),
    click.Option(
        ["--fork-at"],
        metavar="DAY:INDEX",
        help="The first message the branches do not share, as `conversation show` prints it.",
    ),
    click.Option(
        ["--fork-edit"],
        metavar="TEXT",
        help="The researcher's text in place of the message at the fork point.",
    ),
)


def fork_header(sweep: dict) -> list[str]:
    """A fork sweep's first lines: where its branches start, what they took from the parent."""
    fork = (sweep.get("plan") or {}).get("fork")
    if not fork:
        return []
    return [fork["headline"], *(f"default: {note}" for note in fork["from_parent"])]


def run_options(f):
    f = click.option(
        "--concurrency",
        type=click.IntRange(1, MAX_CONCURRENCY),
        default=8,
        show_default=True,
        help="Conversations at a time.",
    )(f)
    f = click.option(
        "--pool",
        "pools",
        multiple=True,
        metavar="ENDPOINT=N",
        help="Concurrent calls per backend endpoint or provider, e.g. openai=32.",
    )(f)
    f = click.option(
        "--lease-ttl",
        type=LEASE_TTL,
        default=60.0,
        show_default=True,
        help="Seconds before another worker may take over a silent worker's conversation "
        f"({MIN_LEASE_TTL_S:g} to {MAX_LEASE_TTL_S:g}; the heartbeat renews it every quarter).",
    )(f)
    f = cap_options(f)
    return json_option(f)
