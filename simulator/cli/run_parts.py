"""What a world tells `llm-sim run`: its own options, how it names itself in a refusal, how it
checks its options and plans, its header and its live view.

Each world's `cli/run.py` is a module with these names (the registry's `part(kind, "cli.run")`).
The `run` command offers the options every world shares (the experiment, --llm, --seed,
--pool, --json, -W) and, under one heading per world, the options the worlds declare; a flag
only other worlds take is refused naming them. `execute` runs a planned spec live for any world.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import click
from pydantic import BaseModel

from simulator.cli.context import AppContext
from simulator.cli.estimate_display import print_estimate
from simulator.cli.interrupts import StoppedRuns, run_until_stopped
from simulator.cli.live import run_access
from simulator.cli.run_result import print_run_json
from simulator.engine import budget
from simulator.engine import events as ev
from simulator.errors import UserError
from simulator.services import estimates, runs
from simulator.services.experiments import ExperimentView
from simulator.services.runs import RunOutcome
from simulator.services.spend import require_embedder_prices, require_prices, run_embedders
from simulator.worlds import has_part, names, part


class LiveSink(Protocol):
    """What a run shows while it runs: an engine event sink that `close` ends."""

    def __call__(self, event: ev.Event) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class RunChoices:
    """The options every world's run takes (`llm-sim run`'s common options)."""

    llm: str | None = None
    seed: int | None = None
    as_json: bool = False
    pools: dict[str, int] = field(default_factory=dict)
    dry_run: bool = False  # print the header and the estimate; run nothing


class RunCLIPart(Protocol):
    GROUP: str  # the heading of its options in `run --help`, e.g. "2D community options"
    THIS: str  # how a refusal names one of its experiments, e.g. "a grid experiment"
    THESE: str  # how a refusal names the experiments its flags belong to: "grid experiments"
    TAKES: str  # what a run of it takes, the refusal's fix: "a grid run takes --agents N, …"
    # its own options; a flag two worlds both take has the same name and type in each
    OPTIONS: tuple[click.Option, ...]

    def run(
        self, app: AppContext, view: ExperimentView, options: dict[str, Any], choices: RunChoices
    ) -> RunOutcome:
        """Check the options (by their names in OPTIONS; others, from -W, are the world's
        settings by name), plan the spec and run it (`execute`)."""

    def print_header(self, app: AppContext, spec: BaseModel) -> None:
        """What will run, every value the tool chose because nobody said included (stderr)."""

    def live_view(self, app: AppContext, as_json: bool) -> LiveSink:
        """What the run shows as it runs (nothing for --json but its id where the world's
        view prints it)."""


def run_cli_part(kind: str) -> RunCLIPart:
    """The world `kind`'s `run` part (imported on first use)."""
    return part(kind, "cli.run")  # type: ignore[return-value]


def world_parts() -> list[tuple[str, RunCLIPart]]:
    """Every registered world that can be run from `llm-sim run`, in the registry's order."""
    return [(kind, run_cli_part(kind)) for kind in names() if has_part(kind, "cli.run")]


def execute(
    app: AppContext,
    view: ExperimentView,
    spec: BaseModel,
    as_json: bool,
    pools: dict[str, int] | None = None,
    dry_run: bool = False,
    **world: Any,
) -> RunOutcome:
    """Check the models, store the run, run it live (the header first, unless --json; the
    result as JSON with --json); `world` holds the world's own run keywords. `dry_run`: the
    header and the estimate only (services/estimates.py), nothing checked or stored."""
    cli = run_cli_part(view.kind)
    if dry_run:
        return dry_run_estimate(app, view, spec, as_json)
    cap = budget.current()  # `run --max-cost`: every model's price known before anything runs
    require_prices(runs.models(view.kind, spec), cap.caps if cap else None)
    require_embedder_prices(run_embedders(spec), cap.caps if cap else None)
    live = cli.live_view(app, as_json)
    llms = run_access(app.err, as_json, pools)
    stopped = StoppedRuns(live)

    async def go(stop: asyncio.Event) -> RunOutcome:
        try:
            return await runs.start(
                app.store,
                view,
                spec,
                app.user,
                llms,
                on_created=lambda doc: stopped.add(doc["_id"]),
                on_event=stopped,
                stop=stop,
                **world,
            )
        finally:
            live.close()
            await llms.aclose()

    if not as_json:
        cli.print_header(app, spec)
    outcome = run_until_stopped(go, app.err, stopped)
    if as_json:
        print_run_json(app, outcome, view.kind)
    return outcome


def plan_and_execute(
    app: AppContext,
    view: ExperimentView,
    options: dict[str, Any],
    choices: RunChoices,
    **world: Any,
) -> RunOutcome:
    """Plan the run from the world's options and run it live (`execute`)."""
    spec = runs.plan(view, options, llm=choices.llm, seed=choices.seed)
    return execute(app, view, spec, choices.as_json, choices.pools, choices.dry_run, **world)


def dry_run_estimate(
    app: AppContext, view: ExperimentView, spec: BaseModel, as_json: bool
) -> RunOutcome:
    """`run --dry-run`: the header and what the run is estimated to cost; nothing is stored
    and no model is asked (the outcome's status is "planned")."""
    estimate = estimates.run_estimate(app.store, view, spec, runs.models(view.kind, spec))
    if as_json:
        app.print_json(
            {"dry_run": True, "spec": spec.model_dump(mode="json"), "estimate": estimate}
        )
    else:
        run_cli_part(view.kind).print_header(app, spec)
        print_estimate(app, estimate)
    return RunOutcome("", "planned", None, {})


def given(option: click.Option, value: object) -> bool:
    """Whether a flag was given: a value other than nothing and other than its default."""
    return value not in (None, (), False) and value != option.default


def refuse_foreign(kind: str, values: dict[str, object]) -> None:
    """Flags only other worlds take would be silently ignored: refuse them, naming the worlds
    they belong to."""
    parts = dict(world_parts())
    own = {option.name for option in parts[kind].OPTIONS}
    owners: dict[str, list[str]] = {}  # flag -> the worlds that take it
    for other, cli in parts.items():
        for option in cli.OPTIONS:
            if option.name in own or not given(option, values.get(option.name)):
                continue
            owners.setdefault(option.opts[0], []).append(other)
    if not owners:
        return
    groups: dict[tuple[str, ...], list[str]] = {}
    for flag, kinds in owners.items():
        groups.setdefault(tuple(kinds), []).append(flag)
    said = [
        f"{', '.join(flags)} belong to {' and '.join(parts[k].THESE for k in kinds)}"
        for kinds, flags in groups.items()
    ]
    this = parts[kind]
    raise UserError(
        f"{'; '.join(said)}; this is {this.THIS}",
        field=next(iter(owners)),
        fix=f"leave them out; {this.TAKES}",
    )


def world_settings(
    ctx: click.Context, kind: str, pairs: tuple[str, ...], values: dict[str, object]
) -> dict[str, object]:
    """`-W NAME=VALUE` pairs as the world's options: a name one of its options takes (its flag
    or its name, `-` or `_`) means what the option means and is checked as the option checks
    it; any other name is a setting of the world's experiment, checked when the run is planned.
    A setting given twice (as a flag and with -W, or twice with -W) is refused."""
    options = {}
    for option in run_cli_part(kind).OPTIONS:
        assert option.name is not None
        options[option.name] = option
        for flag in option.opts:
            options[flag.lstrip("-").replace("-", "_")] = option
    chosen: dict[str, object] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise UserError(
                f"{pair!r} is not NAME=VALUE", field="--world", fix="write e.g. -W steps=5"
            )
        option = options.get(key)
        name = option.name if option is not None else key
        assert name is not None
        if name in chosen or (option is not None and given(option, values.get(name))):
            raise UserError(
                f"{name} is given twice",
                field="--world",
                fix="give each setting once, as its flag or with -W",
            )
        chosen[name] = text.strip() if option is None else _convert(ctx, option, text.strip())
    return chosen


def _convert(ctx: click.Context, option: click.Option, text: str) -> object:
    """A -W value as the option would have it (a flag: true or false)."""
    if option.is_flag:
        return click.BOOL.convert(text, option, ctx)
    value = option.type.convert(text, option, ctx)
    return (value,) if option.multiple else value


class WorldOptionsCommand(click.Command):
    """A command whose options are its own and, under one heading per world, those the
    registered worlds declare (a flag two worlds take is parsed once, listed under each)."""

    def world_params(self) -> list[click.Option]:
        seen: dict[str, click.Option] = {}
        for _, cli in world_parts():
            for option in cli.OPTIONS:
                assert option.name is not None
                first = seen.setdefault(option.name, option)
                if first.opts != option.opts:
                    raise ValueError(f"two worlds declare {option.name!r} with other flags")
        return list(seen.values())

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        params = [*self.params, *self.world_params()]
        help_option = self.get_help_option(ctx)
        return [*params, help_option] if help_option is not None else params

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        common = [p.get_help_record(ctx) for p in self.params if isinstance(p, click.Option)]
        help_option = self.get_help_option(ctx)
        if help_option is not None:
            common.append(help_option.get_help_record(ctx))
        with formatter.section("Options"):
            formatter.write_dl([r for r in common if r is not None])
        for _, cli in world_parts():
            records = [o.get_help_record(ctx) for o in cli.OPTIONS]
            with formatter.section(cli.GROUP):
                formatter.write_dl([r for r in records if r is not None])


def world_command(name: str) -> Callable[[Callable], click.Command]:
    """`@world_command("run")`: a click command with the worlds' options (WorldOptionsCommand)."""
    return click.command(name, cls=WorldOptionsCommand)
