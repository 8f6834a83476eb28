"""`llm-sim run EXP_ID …`: one run of the experiment's world, shown live, stored as it happens.

The options every world shares are declared here; each world's own come from its `cli.run`
part (cli/run_parts.py) and are listed under its heading in `--help`.
"""

from __future__ import annotations

import click

from simulator.cli.caps import cap_options, caps_from, exit_if_capped
from simulator.cli.context import AppContext
from simulator.cli.params import SEED, pool_sizes
from simulator.cli.run_parts import (
    RunChoices,
    execute,
    refuse_foreign,
    run_cli_part,
    world_command,
    world_settings,
)
from simulator.engine.budget import using
from simulator.services import experiments as exp_service
from simulator.services.spend import run_budget

__all__ = ["execute", "run_cmd"]  # `demo` and the menus run a planned spec with `execute`


@world_command("run")
@click.argument("experiment_id")
@click.option("--llm", help="Model for every agent (default: the experiment's first LLM).")
@click.option(
    "--seed",
    type=SEED,
    help="Seed of the run (0 to 2^63-1): every model call's seed is derived from it, and the "
    "world's random draws follow it.",
)
@click.option(
    "-W",
    "--world",
    "world_pairs",
    multiple=True,
    metavar="NAME=VALUE",
    help="One setting of the experiment's world by name, e.g. -W steps=5; repeatable. A name "
    "one of the world's options below takes means what the option means; any other name is "
    "a setting of the experiment's world block, over the experiment's value.",
)
@click.option(
    "--pool",
    "pools",
    multiple=True,
    metavar="ENDPOINT=N",
    help="Concurrent calls per backend endpoint or provider, e.g. openai=64 (default: the "
    "provider's pool size).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the run's header and its estimate (calls, tokens, money, time); run nothing.",
)
@cap_options
@click.option("--json", "as_json", is_flag=True, help="Print only the result, as JSON.")
@click.pass_context
def run_cmd(
    ctx: click.Context,
    experiment_id: str,
    llm: str | None,
    seed: int | None,
    world_pairs: tuple[str, ...],
    pools: tuple[str, ...],
    dry_run: bool,
    as_json: bool,
    max_cost: float | None,
    max_tokens: int | None,
    max_calls: int | None,
    **flags: object,
) -> None:
    """Run EXPERIMENT_ID once, shown live and stored as it happens (the options under the
    heading of the experiment's world apply to it)."""
    app: AppContext = ctx.obj
    view = exp_service.get(app.store, experiment_id, app.user)
    sizes = pool_sizes(pools)
    refuse_foreign(view.kind, flags)
    cli = run_cli_part(view.kind)
    options = {o.name: flags.get(o.name) for o in cli.OPTIONS if o.name is not None}
    options.update(world_settings(ctx, view.kind, world_pairs, flags))
    budget = run_budget(caps_from(max_cost, max_tokens, max_calls))
    with using(budget):  # every call of the run checks it before it leaves
        outcome = cli.run(app, view, options, RunChoices(llm, seed, as_json, sizes, dry_run))
    if outcome is None:  # a dry run: nothing ran
        return
    run_id = outcome.conversation_id
    spent = (app.store.conversations.get(run_id).get("spend") or {}) if budget else {}
    exit_if_capped(app, budget, spent, f"continue it with llm-sim conversation resume {run_id}")
    if outcome.status == "failed":
        raise SystemExit(1)
