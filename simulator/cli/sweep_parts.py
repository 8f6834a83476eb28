"""`llm-sim sweep create`'s flags, each world's own.

Each world's `cli/sweep_options.py` (the registry's `part(kind, "cli.sweep_options")`) is a
module with the names of `SweepOptions`: the flags its sweeps take besides the ones every sweep
takes (--name, --repetitions, --llm, --seed), and how they go over a sweep file's mapping. The
command lists every world's flags (`--help` shows them world by world), takes any of them as
`-W/--world KEY=VALUE` too, and refuses a flag the experiment's world does not take, naming the
worlds it belongs to: a flag is never silently dropped.

Two worlds may take the same flag (--agents, --seeds) with their own meaning and help; it is
one flag of the command, so both must declare it alike (a text flag in both, say).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

import click
from pydantic import BaseModel

from simulator.domain.yaml_io import load_model, validate_model
from simulator.domain.yaml_reading import read_yaml_file
from simulator.errors import UserError
from simulator.services.experiments import ExperimentView
from simulator.services.spend import file_caps
from simulator.services.sweep_parts import sweep_part
from simulator.services.sweeps import Plan, validate_sweep
from simulator.worlds import has_part, names, part, row

COMMON = ("name", "repetitions", "llms", "seed")  # the flags every world's sweep takes
FORK = ("fork_from", "fork_at", "fork_edit")  # a fork sweep's (services/fork_sweeps.py)


class SweepOptions(Protocol):
    """A world's `sweep create` flags (`simulator/worlds/<kind>/cli/sweep_options.py`)."""

    OPTIONS: tuple[click.Option, ...]  # its own flags, in the order `--help` lists them
    NOUN: str  # one of its experiments in a refusal: "a grid experiment"
    PLURAL: str  # its experiments in a refusal: "grid experiments"
    FIX: str | None  # what to do about another world's flag (None: the house's words)

    def spec_data(self, view: ExperimentView | None, data: dict, flags: dict) -> dict:
        """The sweep file's mapping (`data`: the keys the file sets, the common flags already
        over it) with this world's flags over it. `flags` holds the command's flags by name;
        one not given is None or empty."""


def sweep_options(kind: str) -> SweepOptions:
    return part(kind, "cli.sweep_options")  # type: ignore[return-value]


def plan_lines(kind: str, plan: Plan) -> list[str]:
    """What the world prints of a plan after its sample cell (its own `plan_lines(plan)`; none
    by default)."""
    if not has_part(kind, "cli.sweep_options"):
        return []
    own = getattr(sweep_options(kind), "plan_lines", None)
    return own(plan) if own is not None else []


def given(value: object) -> bool:
    return value not in (None, (), [], False)


def names_list(text: str | None, flag: str, example: str) -> list[str] | None:
    """`a, b` as ["a", "b"]; each name is checked by the sweep spec."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise UserError("no name given", field=flag, fix=f"write e.g. {flag} {example}")
    return parts


@dataclass(frozen=True)
class WorldFlags:
    """Every world's sweep flags: one command option per flag name, and who takes it."""

    groups: tuple[tuple[str, tuple[click.Option, ...]], ...]  # (kind, its own options)
    params: tuple[click.Option, ...]  # one per name, the first world's declaration
    owners: dict[str, tuple[str, ...]]  # option name -> the worlds that take it

    def flag(self, name: str) -> str:
        option = next(p for p in self.params if p.name == name)
        return max(option.opts, key=len)


def world_flags() -> WorldFlags:
    """The flags of the worlds registered now (a world registered later brings its own)."""
    return _flags_of(names())


@cache
def _flags_of(kinds: tuple[str, ...]) -> WorldFlags:
    groups = tuple(
        (kind, tuple(sweep_options(kind).OPTIONS))
        for kind in kinds
        if has_part(kind, "cli.sweep_options")
    )
    first: dict[str, click.Option] = {}
    owners: dict[str, list[str]] = {}
    for kind, options in groups:
        for option in options:
            assert option.name is not None
            seen = first.setdefault(option.name, option)
            if _shape(seen) != _shape(option):
                raise ValueError(
                    f"{kind}'s sweep flag {option.opts} differs in form from "
                    f"{owners[option.name][0]}'s; a flag two worlds take is declared alike"
                )
            owners.setdefault(option.name, []).append(kind)
    return WorldFlags(groups, tuple(first.values()), {k: tuple(v) for k, v in owners.items()})


world_flags.cache_clear = _flags_of.cache_clear  # type: ignore[attr-defined]


def _shape(option: click.Option) -> tuple:
    return (tuple(option.opts), option.multiple, option.is_flag, type(option.type))


WORLD_OPTION = click.Option(
    ["-W", "--world", "world_values"],
    multiple=True,
    metavar="KEY=VALUE",
    help="A flag of the experiment's world by its name, e.g. -W steps=5,100 as --steps 5,100 "
    "(its values as the flag takes them; a switch takes true or false); repeatable.",
)


def add_world_options(command: WorldOptionsCommand, before: str) -> None:
    """Give `command` -W/--world in front of the option `before`; the flags of the worlds
    registered when it parses stand in front of it (`get_params`), so a world registered later
    brings its flags and one unregistered takes them away."""
    own = {p.name for p in command.params}
    clash = [p.name for p in world_flags().params if p.name in own]
    if clash:
        raise ValueError(f"a world's sweep flags {clash} are flags every sweep takes already")
    at = next(i for i, p in enumerate(command.params) if p.name == before)
    command.params[at:at] = [WORLD_OPTION]


class WorldOptionsCommand(click.Command):
    """A command whose `--help` lists its own options, then each world's under its name."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        """Its parameters, with the flags of the worlds registered now in front of -W/--world
        (a world's flag of a name the command has is another world's too)."""
        params = super().get_params(ctx)
        taken = {p.name for p in params}
        if WORLD_OPTION not in params:
            return params
        later = [p for p in world_flags().params if p.name not in taken]
        at = params.index(WORLD_OPTION)
        return [*params[:at], *later, *params[at:]]

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        worlds = world_flags()
        own = [
            record
            for p in self.get_params(ctx)
            if isinstance(p, click.Option)
            and p.name not in worlds.owners
            and (record := p.get_help_record(ctx))
        ]
        with formatter.section("Options"):
            formatter.write_dl(own)
        for kind, options in worlds.groups:
            records = [r for o in options if (r := o.get_help_record(ctx))]
            if records:
                with formatter.section(f"Options for {row(kind).description} (kind: {kind})"):
                    formatter.write_dl(records)


def apply_world_values(flags: dict, ctx: click.Context | None = None) -> None:
    """`-W KEY=VALUE` as the flag KEY would be: converted by the flag's type, and refused when
    the flag itself is given too (or KEY is no world's flag)."""
    worlds = world_flags()
    by_key: dict[str, click.Option] = {}
    for option in worlds.params:
        assert option.name is not None
        for key in (option.name, *(o.lstrip("-") for o in option.opts if o.startswith("--"))):
            by_key.setdefault(key.replace("-", "_"), option)
    from_pairs: dict[str, list[Any]] = {}
    for pair in flags.pop("world_values", None) or ():
        key, sep, value = pair.partition("=")
        option = by_key.get(key.strip().lstrip("-").replace("-", "_"))
        if not sep or option is None:
            known = ", ".join(sorted({max(o.opts, key=len).lstrip("-") for o in worlds.params}))
            raise UserError(
                f"{pair!r} is not KEY=VALUE with KEY a world's sweep flag",
                field="--world",
                fix=f"write e.g. -W steps=5,100; the keys: {known}",
            )
        assert option.name is not None
        flag = worlds.flag(option.name)
        if given(flags.get(option.name)):
            raise UserError(
                f"{flag} is given twice: as {flag} and as -W {pair}",
                field=flag,
                fix="give it once",
            )
        try:
            converted = option.type.convert(value.strip(), option, ctx)
        except click.BadParameter as exc:
            raise UserError(
                f"-W {pair}: {exc.message}", field=flag, fix=f"see {flag} in --help"
            ) from None
        from_pairs.setdefault(option.name, []).append(converted)
    for name, values in from_pairs.items():
        option = next(p for p in worlds.params if p.name == name)
        if option.multiple:
            flags[name] = tuple(values)
        elif len(values) > 1:
            flag = worlds.flag(name)
            raise UserError(f"{flag} is given twice with -W", field=flag, fix="give it once")
        else:
            flags[name] = values[0]


def refuse_other_worlds(kind: str, flags: dict) -> None:
    """A flag the world does not take would be silently ignored: refuse it, naming the worlds
    it belongs to."""
    worlds = world_flags()
    named = [
        name
        for name, owners in worlds.owners.items()
        if kind not in owners and given(flags.get(name))
    ]
    if not named:
        return
    owners = [k for k in names() if any(k in worlds.owners[n] for n in named)]
    mine = sweep_options(kind)
    theirs = [sweep_options(k) for k in owners]
    fix = mine.FIX or "leave them out, or sweep " + " or ".join(
        f"{o.NOUN} (kind: {k})" for o, k in zip(theirs, owners, strict=True)
    )
    flag_names = [worlds.flag(n) for n in named]
    raise UserError(
        f"{', '.join(flag_names)} belong to {' and '.join(o.PLURAL for o in theirs)}; "
        f"this is {mine.NOUN}",
        field=flag_names[0],
        fix=fix,
    )


def takes(kind: str, option_names: Iterable[str]) -> bool:
    return all(kind in world_flags().owners.get(n, ()) for n in option_names)


def sweep_spec(
    kind: str, file: str | None, flags: dict, view: ExperimentView | None = None
) -> BaseModel:
    """The world's sweep model from FILE (YAML) with the flags over it (the flags win); a flag
    of another world is refused, never dropped."""
    refuse_other_worlds(kind, flags)
    spec_model = sweep_part(kind).Spec
    data: dict = {}
    if file is not None:
        data = _spec_of_file(file, spec_model).model_dump(mode="json", exclude_unset=True)
    common = {
        "name": flags.get("name"),
        "repetitions": flags.get("repetitions"),
        "seed": flags.get("seed"),
        "llms": list(flags.get("llms") or ()) or None,
    }
    data.update({k: v for k, v in common.items() if v is not None})
    data = sweep_options(kind).spec_data(view, data, flags)
    if "kind" in spec_model.model_fields:
        data["kind"] = kind
    return validate_sweep(spec_model, data, source=str(file) if file else None)


def _spec_of_file(file: str, spec_model: type[BaseModel]) -> BaseModel:
    """The sweep file as the world's sweep model; its `caps:` are the runners' (read apart)."""
    raw, marks = read_yaml_file(file)
    if not isinstance(raw, dict) or "caps" not in raw:
        return load_model(file, spec_model, "sweep")
    rest, _ = file_caps(raw)
    return validate_model(rest, spec_model, "sweep", source=str(file), marks=marks)
