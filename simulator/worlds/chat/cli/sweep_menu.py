"""The experiment menu's 'Perform conversations (sweep)' entry.

It asks the reference tool's questions in its order, shows the plan, then creates the sweep and
runs it with the same service and progress display as `llm-sim sweep create` + `sweep run`, so
the sweep it makes is the one `llm-sim sweep list/status/resume` see.
"""

from __future__ import annotations

from simulator.cli.context import AppContext
from simulator.cli.estimate_display import print_estimate, sweep_estimate
from simulator.cli.interactive import prompts as ask
from simulator.cli.sweep_display import print_plan
from simulator.cli.sweep_running import run_sweep
from simulator.domain.limits import MAX_SEED
from simulator.domain.plural import count
from simulator.services import estimates
from simulator.services import sweeps as service
from simulator.services.experiments import ExperimentView
from simulator.worlds.chat.cli.perform_menu import (
    COUNTING_CHOICES,
    SPEAKER_HELP,
    enough_messages,
)
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.domain.spec import MIN_MESSAGES_PER_DAY, SPEAKER_METHODS
from simulator.worlds.chat.domain.variants import variant_slots

SWEEP_METHODS = [m for m in SPEAKER_METHODS if m != "manual"]  # sweeps run unattended
MAX_AGENTS = 99
LEASE_TTL_S = 60.0


def _at_least_one(what: str):
    def check(picked: list[str]) -> str | None:
        return None if picked else f"tick at least one {what} (space toggles, Enter accepts)"

    return check


def _method_label(method: str) -> str:
    return f"{method} — {SPEAKER_HELP[method]}"


def _ask_llms(models: list[str]) -> list[str]:
    """One LLM per conversation; each ticked model is one more value of that factor."""
    if len(models) == 1:
        ask.console.print(f"LLM: {models[0]}", markup=False)
        return models
    return ask.checkbox(
        "LLMs",
        models,
        checked=models[:1],
        check=_at_least_one("LLM"),
        note="One LLM per conversation; tick several to compare them.",
    )


def _ask_days(total: int) -> tuple[int, bool]:
    """Days N, and whether every value 1..N is tried."""
    days = ask.ask_int("Days", 1, total // MIN_MESSAGES_PER_DAY, default=1)
    assert days is not None
    every = days > 1 and ask.confirm(f"Try every value from 1 to {days}?", default=False)
    return days, every


def _ask_agents(exp: Experiment) -> tuple[dict[str, int], bool]:
    """Maximum agents per role, and whether every combination up to them is tried."""
    counts: dict[str, int] = {}
    for role in exp.roles:
        count = ask.ask_int(f"Maximum agents of role {role.name}", 1, MAX_AGENTS, default=1)
        assert count is not None
        counts[role.name] = count
    every = any(n > 1 for n in counts.values()) and ask.confirm(
        "Try every combination (1 to the maximum of each role)?", default=False
    )
    return counts, every


def _ask_methods() -> list[str]:
    labels = [_method_label(m) for m in SWEEP_METHODS]
    picked = ask.checkbox(
        "Speaker methods",
        labels,
        checked=labels[:1],
        check=_at_least_one("speaker method"),
        note="Manual is left out: sweeps run unattended.",
    )
    return [m for m in SWEEP_METHODS if _method_label(m) in picked]


def _ask_variants(exp: Experiment) -> dict[str, list[str]]:
    """Per section with variants: the section's own content only (no variation) unless more
    are ticked."""
    chosen: dict[str, list[str]] = {}
    for slot, names in variant_slots(exp).items():
        picked = ask.checkbox(
            f"Variants of {slot} (tick more to vary)",
            names,
            checked=names[:1],
            check=_at_least_one("variant"),
        )
        if picked != names[:1]:
            chosen[slot] = picked
    return chosen


def perform_sweep(app: AppContext, view: ExperimentView) -> None:
    """Ask every factor, show the plan, then create the sweep and run it with a progress bar."""
    exp = view.experiment
    models = [choice.key for choice in exp.llms]  # a label tells one model's entries apart
    repetitions = ask.ask_int("Conversations per setting", 1, 10_000, default=1)
    llms = _ask_llms(models)
    total = ask.ask_number("Total messages", int, enough_messages, default=10)
    assert total is not None
    counting = ask.select("How are messages counted?", COUNTING_CHOICES, default="agent_turns")
    days, every_day = _ask_days(total)
    agents, every_combination = _ask_agents(exp)
    methods = _ask_methods()
    manager = None
    if "auto" in methods and len(models) > 1:
        manager = ask.select(
            "Manager LLM for auto (picks the speakers)",
            [(m, m) for m in models],
            default=models[0],
        )
    elif "auto" in methods:
        manager = models[0]
    variants = _ask_variants(exp)
    seed = ask.ask_int("Seed, blank for none", 0, MAX_SEED, optional=True)
    spec = service.validate_spec(
        {
            "repetitions": repetitions,
            "llms": llms,
            "total_messages": total,
            "message_counting": counting,
            "days": days,
            "every_day_count": every_day,
            "agents": agents,
            "every_agent_combination": every_combination,
            "speaker_methods": methods,
            "variants": variants,
            "seed": seed,
            "manager_llm": manager,
        }
    )
    plan = service.plan(app.store, view, spec, app.user)
    print_plan(app, plan, view.kind)
    estimate = sweep_estimate(app, view, spec, plan)
    print_estimate(app, estimate)
    if exp.summarizer_sections:
        app.console.print("Each day's summary is written by the conversation's own LLM.")
    if not ask.confirm(
        "Create and run this sweep?",
        default=True,
        note="Ctrl-C stops it at once; nothing stored is lost.",
    ):
        app.console.print("Nothing created.")
        return
    concurrency = ask.ask_int("Conversations at a time", 1, 256, default=8)
    assert concurrency is not None
    doc, added = service.create(app.store, view, spec, app.user, plan)
    estimates.keep_with_sweep(app.store, doc["_id"], estimate)
    app.console.print(
        f"Sweep {doc['_id']}: {count(added, 'new conversation', thousands=True)} stored.",
        markup=False,
    )
    try:
        run_sweep(app, doc["_id"], concurrency, (), LEASE_TTL_S, False, "Running")
    except KeyboardInterrupt:
        app.console.print("Stopped at once.")
    status = service.status(app.store, doc["_id"])
    if not status["complete"]:
        app.console.print(
            f"Sweep {doc['_id']} is not complete; finish it with llm-sim sweep resume {doc['_id']}",
            markup=False,
        )
