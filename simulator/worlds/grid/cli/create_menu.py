"""Creating a grid experiment (the 2D community) by answering questions.

Every answer starts from the shipped experiment (prompts/experiments/takata_grid.yaml, the
paper's defaults), so pressing Enter through the flow gives the paper's set-up; the three
prompt templates are edited like any section. Nothing reaches the store before "Save?".
"""

from __future__ import annotations

import yaml

from simulator.cli.context import AppContext
from simulator.cli.interactive import prompts as ask
from simulator.cli.interactive.llms import ask_llms
from simulator.domain.yaml_io import validate_model
from simulator.errors import UserError
from simulator.prompting.templates import PROMPTS_DIR
from simulator.services import experiments as service
from simulator.worlds.grid.cli.views import grid_detail
from simulator.worlds.grid.domain.experiment import (
    MAX_GRID_AGENTS,
    MAX_GRID_SIDE,
    MAX_GRID_STEPS,
    STAGES,
    TEMPLATE_FIELDS,
    GridExperiment,
    check_template,
)

SHIPPED = PROMPTS_DIR / "experiments" / "takata_grid.yaml"


def shipped_defaults() -> dict:
    """The shipped grid experiment as plain data (the paper's world and templates)."""
    return yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))


def _template_problem(stage: str):
    def problem(text: str) -> str | None:
        try:
            check_template(text, f"prompts.{stage}")
        except ValueError as exc:
            return str(exc)
        return None

    return problem


def ask_world(world: dict) -> dict:
    """The world's numbers, each offered with its current value."""
    world = dict(world)
    world["width"] = ask.ask_int("Field width", 1, MAX_GRID_SIDE, world["width"])
    world["height"] = ask.ask_int("Field height", 1, MAX_GRID_SIDE, world["height"])
    world["torus"] = ask.confirm("Wrap around at the edges (a torus)?", default=world["torus"])
    world["agents"] = ask.ask_int("Number of agents", 1, MAX_GRID_AGENTS, world["agents"])
    world["steps"] = ask.ask_int("Steps per run", 1, MAX_GRID_STEPS, world["steps"])
    world["radius"] = ask.ask_int(
        "Message range (Chebyshev distance)", 0, 2 * MAX_GRID_SIDE, world["radius"]
    )
    world.pop("positions", None)  # random cells from each run's seed; YAML can give cells
    return world


def ask_prompts(prompts: dict) -> dict:
    fields = " ".join(f"{{{name}}}" for name in TEMPLATE_FIELDS)
    ask.console.print(f"Fields the templates may use: {fields}", markup=False, highlight=False)
    return {
        stage: ask.text_block(
            f"The {stage} prompt", prompts[stage], required=True, check=_template_problem(stage)
        )
        for stage in STAGES
    }


def run_create_grid(app: AppContext) -> None:
    data = shipped_defaults()
    data["name"] = ask.ask_required("Experiment name", data["name"])
    if not ask.confirm(
        f"Use the shipped models ({', '.join(m['model'] for m in data['llms'])})?", default=True
    ):
        data["llms"] = ask_llms()
    while True:
        data["world"] = ask_world(data["world"])
        data["prompts"] = ask_prompts(data["prompts"])
        data["note"] = ask.text("Note", data.get("note", ""))
        data["favourite"] = ask.confirm("Mark as favourite?", default=False)
        try:
            experiment = validate_model(data, GridExperiment, "experiment")
        except UserError as error:
            ask.show_error(error)
            continue
        for part in grid_detail(experiment):
            app.console.print(part)
        answer = ask.select(
            "Save?",
            [("Yes, save it", "save"), ("Change an answer", "change"), ("No, discard it", "no")],
        )
        if answer == "no":
            app.console.print("Nothing saved.")
            return
        if answer == "save":
            break
    view = service.create(app.store, experiment, app.user)
    app.console.print(f"Created experiment {view.id} ({experiment.name}).", markup=False)
