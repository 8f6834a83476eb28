"""What a world supplies so one suite of checks can run it end to end through the command line.

Each world ships a module `simulator/worlds/<kind>/testing/sample.py`: plain data (no imports
from the upper layers) describing a small experiment of the world, the `llm-sim run` options that
make a run of a few calls, the loopback model's replies the world's prompts need, and what a
finished run must show (rows, fork point, export tables, measures). The checks read it through
`sample_of(kind)`, which fills in the values the worlds share; a world added to the registry is
checked as soon as it ships its sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class WorldSample(Protocol):
    """The names a world's `testing.sample` module defines (those after `# optional` may be
    left out)."""

    EXPERIMENT_YAML: str  # a small experiment of the world, as a researcher writes it
    RUN_ARGS: tuple[str, ...]  # `llm-sim run EXP_ID --llm MODEL <RUN_ARGS>`: a run of a few calls
    ROWS: str  # the key of `conversation show --json` that lists the run's stored rows
    UNIT: tuple[str, ...]  # the fields that name one row (no two rows of a run share them)
    ROW_COUNT: int  # the rows a finished run of RUN_ARGS stores
    FORK_AT: str  # `conversation fork --at`: a unit inside the run
    FORK_POINT: dict[str, int]  # FORK_AT as the fork's `fork_at` stores it
    FORK_SHARED: int  # the rows before FORK_AT a fork reads from its parent
    FORK_CALLS: int  # the calls a fork at FORK_AT makes (the parent's last ones again)
    # optional
    REPLIES: tuple[tuple[str, str], ...]  # (words in a prompt, the model's reply), first match
    SHOW_TEXT: tuple[str, ...]  # words `experiment show` prints for the experiment
    EXPORT_FORMATS: tuple[str, ...]  # the `export --format` values the world supports
    EXPORT_TABLES: tuple[str, ...]  # the tables (file stems) an export of one run writes
    MEASURES: tuple[tuple[str, float], ...]  # (measure, its mean in `measures RUN_ID --json`)
    REPORT_TEXT: tuple[str, ...]  # words the HTML report holds


@dataclass(frozen=True)
class Sample:
    """A world's sample with the shared defaults filled in."""

    kind: str
    experiment_yaml: str
    run_args: tuple[str, ...]
    rows: str
    unit: tuple[str, ...]
    row_count: int
    fork_at: str
    fork_point: dict[str, int]
    fork_shared: int
    fork_calls: int
    replies: tuple[tuple[str, str], ...] = ()
    show_text: tuple[str, ...] = ()
    export_formats: tuple[str, ...] = ("jsonl", "csv", "parquet")
    export_tables: tuple[str, ...] = ()
    measures: tuple[tuple[str, float], ...] = ()
    report_text: tuple[str, ...] = ()

    def reply(self, prompt: str, fallback: str) -> str:
        """The loopback model's answer to `prompt`: the first REPLIES entry whose words the
        prompt holds, else `fallback` (the caller's reply that depends on the prompt only)."""
        for words, text in self.replies:
            if words in prompt:
                return text
        return fallback


_OPTIONAL = {
    "REPLIES": "replies",
    "SHOW_TEXT": "show_text",
    "EXPORT_FORMATS": "export_formats",
    "EXPORT_TABLES": "export_tables",
    "MEASURES": "measures",
    "REPORT_TEXT": "report_text",
}


def sample_of(kind: str) -> Sample:
    """The sample the world `kind` ships, with the shared defaults where it gives none."""
    from simulator.worlds import part

    module = part(kind, "testing.sample")
    optional = {
        field: tuple(getattr(module, name))
        for name, field in _OPTIONAL.items()
        if hasattr(module, name)
    }
    return Sample(
        kind=kind,
        experiment_yaml=module.EXPERIMENT_YAML,
        run_args=tuple(module.RUN_ARGS),
        rows=module.ROWS,
        unit=tuple(module.UNIT),
        row_count=int(module.ROW_COUNT),
        fork_at=str(module.FORK_AT),
        fork_point=dict(module.FORK_POINT),
        fork_shared=int(module.FORK_SHARED),
        fork_calls=int(module.FORK_CALLS),
        **optional,
    )
