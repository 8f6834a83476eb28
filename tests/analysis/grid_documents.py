"""A scripted grid run written straight into a store, for the grid analysis and report tests.

Four agents on a 10 x 10 torus, message range 1, six steps. The moves, messages and memories
are fixed below, so every measure has a number worked out by hand (see the tests). The rows
are built with the domain's own delivery and move rules, as the engine builds them.
"""

from __future__ import annotations

from simulator.domain.llm_choice import LLMChoice
from simulator.worlds.grid.domain.experiment import GridExperiment, GridPrompts, GridSpec, GridWorld
from simulator.worlds.grid.domain.rules import (
    agent_names,
    delivery,
    moved,
    parse_move,
    received_text,
)

WIDTH = HEIGHT = 10
RADIUS = 1
START = [(0, 0), (9, 9), (5, 5), (5, 8)]  # agent0 and agent1 are neighbours across the corner
REPLIES = [  # the raw move reply of each agent at steps 1..6
    ["stay", "stay", "stay", "stay"],
    ["x+1", "I go x-1", "y+1", "y-1"],
    ["x+1", "x+1", "north!", "y-1"],  # agent2's reply names no move: stay, counted
    ["y+1", "x+1", "stay", "stay"],
    ["stay", "y+1", "x+1", "x-1"],
    ["x-1", "stay", "stay", "x+1"],
]
MESSAGES = [
    ["Hello #Cooperation", "hi", "hi", "hi there friend"],
    ["moving on", "#cooperation is key", "#peace", "quiet"],
    ["#cooperation #Cooperation again", "hello", "calm", "#peace"],
    ["nothing", "waiting", "#peace and #Unity", "still"],
    ["hmm", "#cooperation", "ok", "ok"],
    ["bye", "bye", "bye", "#peace #cooperation"],
]
EVIL = (
    "<script>document.title='PWNED'</script><img src=x onerror=\"document.body.dataset.pwned='1'\">"
)


def memory_text(step: int, agent: int) -> str:
    return f"memory of agent{agent} after step {step}: garden {step * 10 + agent}"


def grid_experiment(
    name: str = "Grid test", models: tuple[str, ...] = ("mock:a",)
) -> GridExperiment:
    return GridExperiment(
        name=name,
        llms=[LLMChoice(model=m) for m in models],
        world=GridWorld(
            width=WIDTH, height=HEIGHT, agents=4, steps=6, radius=RADIUS, positions=START
        ),
        prompts=GridPrompts(
            message="You are {name} at ({x}, {y}). Memory: {memory}. Heard: {messages}",
            memory="You are {name}. Memory: {memory}. Heard: {messages}. Summarise.",
            move="You are {name} at ({x}, {y}). Memory: {memory}. Move: x+1 x-1 y+1 y-1 stay",
        ),
    )


def scripted_rows(
    run_id: str, steps: int = 6, evil_at: tuple[int, int] | None = None
) -> list[dict]:
    """The run's grid_steps rows (before GridStepsRepository.document)."""
    names = agent_names(4)
    positions = list(START)
    rows = []
    for step in range(1, steps + 1):
        messages = list(MESSAGES[step - 1])
        if evil_at and evil_at[0] == step:
            messages[evil_at[1]] = EVIL
        recipients, senders = delivery(positions, RADIUS, WIDTH, HEIGHT)
        after = []
        for i, name in enumerate(names):
            reply = REPLIES[step - 1][i]
            move, fallback = parse_move(reply)
            after.append(moved(positions[i], move, WIDTH, HEIGHT))
            rows.append(
                {
                    "conversation_id": run_id,
                    "step": step,
                    "agent": name,
                    "agent_index": i,
                    "position_before": list(positions[i]),
                    "position_after": list(after[i]),
                    "message": messages[i],
                    "recipients": [names[r] for r in recipients[i]],
                    "heard_from": [names[s] for s in senders[i]],
                    "received": received_text(names, messages, senders[i]),
                    "memory": memory_text(step, i),
                    "move_reply": reply,
                    "move": move,
                    "move_fallback": fallback,
                }
            )
        positions = after
    return rows


def store_run(
    store,
    experiment_id: str,
    experiment: GridExperiment,
    *,
    model: str = "mock:a",
    steps: int = 6,
    sweep_id: str | None = None,
    order: int = 0,
    repetition: int = 0,
    status: str = "done",
    evil_at: tuple[int, int] | None = None,
) -> str:
    """A grid run document and its step rows; returns the run id."""
    spec = GridSpec(world=experiment.world, start=START, llm=LLMChoice(model=model), seed=3)
    cell = {"radius": RADIUS, "agents": 4, "steps": 6, "llm": model}
    doc = {
        "kind": "grid",
        "experiment_id": experiment_id,
        "owner": "alice",
        "status": status,
        "counters": {"calls": 3 * 4 * steps, "tokens_out": 100},
        "spec": spec.model_dump(mode="json"),
        "experiment": experiment.model_dump(mode="json"),
    }
    if sweep_id:
        label = " ".join(f"{k}={v}" for k, v in cell.items())
        doc.update(
            sweep_id=sweep_id, cell=cell, cell_label=label, repetition=repetition, order=order
        )
    run = store.conversations.create(doc)
    rows = scripted_rows(run["_id"], steps, evil_at)
    store.db.grid_steps.insert_many([store.grid_steps.document(r) for r in rows])
    return run["_id"]


def store_sweep(
    store, experiment_id: str, experiment: GridExperiment, models: list[str], reps: int
) -> tuple[str, list[str]]:
    """A grid sweep over `models` with `reps` repetitions each, every run the scripted one."""
    sweep = store.sweeps.create(
        {
            "kind": "grid",
            "key": f"grid-test-{experiment_id}",
            "experiment_id": experiment_id,
            "experiment": experiment.model_dump(mode="json"),
            "owner": "alice",
            "name": "grid sweep",
            "plan": {"cells": len(models), "repetitions": reps},
            "spec": {"llms": models, "repetitions": reps},
        }
    )
    ids = []
    order = 0
    for model in models:
        for rep in range(reps):
            ids.append(
                store_run(
                    store,
                    experiment_id,
                    experiment,
                    model=model,
                    sweep_id=sweep["_id"],
                    order=order,
                    repetition=rep,
                )
            )
            order += 1
    return sweep["_id"], ids
