"""`llm-sim demo`: the zero-setup path, the shipped prison experiment on the bundled model."""

from __future__ import annotations

import click

from simulator.cli.commands.run import execute
from simulator.cli.context import AppContext
from simulator.domain.experiment import Experiment
from simulator.domain.yaml_io import load_model
from simulator.prompting.templates import PROMPTS_DIR
from simulator.services import conversations as conv_service
from simulator.services import experiments as exp_service
from simulator.store.repositories.experiments import experiment_version

PRISON = PROMPTS_DIR / "experiments" / "prison.yaml"


def ensure_prison(app: AppContext) -> exp_service.ExperimentView:
    """The shipped prison experiment, imported once (matched by content version)."""
    experiment = load_model(PRISON, Experiment, "experiment")
    version = experiment_version(experiment)
    for view in exp_service.list_views(app.store, app.user):
        if view.version == version:
            return view
    return exp_service.create(app.store, experiment, app.user)


@click.command("demo")
@click.option("--messages", "total_messages", type=int, default=6, show_default=True)
@click.option("--days", type=int, default=2, show_default=True)
@click.option("--llm", default="local:smollm2", show_default=True, help="Model for every agent.")
@click.option("--seed", type=int, default=7, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print only the result, as JSON.")
@click.pass_obj
def demo(
    app: AppContext, total_messages: int, days: int, llm: str, seed: int, as_json: bool
) -> None:
    """Import the prison experiment if absent and run one short conversation, live."""
    view = ensure_prison(app)
    if not as_json:
        app.err.print(
            f"Experiment {view.id} ({view.experiment.name}), 1 guard and 1 prisoner on {llm}."
        )
    spec = conv_service.build_spec(
        view,
        agents="guard=1,prisoner=1",
        total_messages=total_messages,
        days=days,
        llm=llm,
        summarizer_llm=llm,
        seed=seed,
    )
    outcome = execute(app, view, spec, as_json)
    if not as_json:
        app.err.print(
            f"Stored as {outcome.conversation_id}. See it again: llm-sim conversation show "
            f"{outcome.conversation_id}"
        )
    if outcome.status == "failed":
        raise SystemExit(1)
