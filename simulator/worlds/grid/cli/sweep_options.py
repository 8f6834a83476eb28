"""`llm-sim sweep create` flags for grid experiments, and the spec they make with a file."""

from __future__ import annotations

from collections.abc import Callable

import click

from simulator.domain.yaml_io import load_model
from simulator.errors import UserError
from simulator.worlds.grid.domain.sweep import GridSweepSpec
from simulator.worlds.grid.services import sweeps as grid_sweeps

CHAT_ONLY = (
    ("manager_llm", "--manager-llm"),
    ("summarizer_llm", "--summarizer-llm"),
    ("total_messages", "--messages"),
    ("message_counting", "--message-counting"),
    ("allow_repeat_speaker", "--allow-repeat-speaker"),
    ("days", "--days"),
    ("every_day_count", "--every-day-count"),
    ("every_combination", "--every-combination"),
    ("speakers", "--speaker"),
    ("variants", "--variant"),
    ("profile", "--profile"),
    ("reply_cleaning", "--reply-cleaning"),
    ("speaker_format", "--speaker-format"),
)
GRID_ONLY = (
    ("radius", "--radius"),
    ("steps", "--steps"),
    ("seeds", "--seeds"),
    ("memory", "--memory"),
)


def grid_sweep_options(command: Callable) -> Callable:
    for name, metavar, text in reversed(
        (
            ("--radius", "N,…", "Grid: message ranges to try, e.g. 0,5,25."),
            ("--steps", "N,…", "Grid: step counts to try, e.g. 5,100."),
            ("--seeds", "N,…", "Grid and network: one run per seed, e.g. 1,2."),
            (
                "--memory",
                "LEVEL,…",
                "Grid: memory levels to try over the experiment's memory block, e.g. "
                "full,no_reflection,no_memory,summary.",
            ),
        )
    ):
        command = click.option(name, metavar=metavar, help=text)(command)
    return command


def numbers(text: str | None, flag: str) -> list[int] | None:
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


def names(text: str | None, flag: str) -> list[str] | None:
    """`a, b` as ["a", "b"]; each name is checked by the sweep spec."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise UserError("no name given", field=flag, fix=f"write e.g. {flag} full,no_memory")
    return parts


def given(value: object) -> bool:
    return value not in (None, (), [], False)


def refuse_grid_sweep_flags(flags: dict) -> None:
    named = [flag for key, flag in GRID_ONLY if given(flags.get(key))]
    if named:
        raise UserError(
            f"{', '.join(named)} belong to grid experiments; this is a group chat",
            field=named[0],
            fix="leave them out, or sweep a grid experiment (kind: grid)",
        )


def grid_sweep_spec(file: str | None, flags: dict) -> GridSweepSpec:
    """The file's spec with the flags over it; a chat-only flag is refused, never dropped."""
    named = [flag for key, flag in CHAT_ONLY if given(flags.get(key))]
    if named:
        raise UserError(
            f"{', '.join(named)} belong to group chats; this is a grid experiment",
            field=named[0],
            fix="leave them out; a grid sweep takes --llm, --agents, --steps, --radius, "
            "--memory, --seeds, --seed, --repetitions and --name",
        )
    data: dict = {}
    if file is not None:
        data = load_model(file, GridSweepSpec, "sweep").model_dump(mode="json", exclude_unset=True)
    overrides = {
        "name": flags.get("name"),
        "repetitions": flags.get("repetitions"),
        "seed": flags.get("seed"),
        "llms": list(flags.get("llms") or ()) or None,
        "agents": numbers(flags.get("agents"), "--agents"),
        "steps": numbers(flags.get("steps"), "--steps"),
        "radius": numbers(flags.get("radius"), "--radius"),
        "seeds": numbers(flags.get("seeds"), "--seeds"),
        "memory": names(flags.get("memory"), "--memory"),
    }
    data.update({k: v for k, v in overrides.items() if v is not None})
    data["kind"] = "grid"
    return grid_sweeps.validate_spec(data, source=str(file) if file else None)
