"""`conversation replay`: re-run a stored run (chat, grid or network) exactly, as a new stored
run linked to it (`replay_of`), through the world's own create and run (its part:
services/fork_parts.py), and compare the two ledgers (domain/replay_verdict.py). The model each
call would use is checked against the identity the original's ledger recorded before anything
is stored."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, ValidationError

from simulator.domain.llm_choice import LLMChoice
from simulator.domain.replay_verdict import (
    Verdict,
    compare,
    describe_identity,
    determinism_caveat,
    fingerprint,
)
from simulator.domain.world import domain_of
from simulator.engine import events as ev
from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.llm.base import FatalBackendError
from simulator.services import runs as run_service
from simulator.services.experiments import ExperimentView
from simulator.services.fork_parts import models, replay_refusal, spec_of, with_models
from simulator.services.runs import RunOutcome, experiment_snapshot, run_view
from simulator.store.store import Store
from simulator.worlds import has_part, kind_of


@dataclass
class ReplayPlan:
    """What a replay will run: the original's spec (models replaced under `--llm`)."""

    original: dict
    kind: str
    view: ExperimentView
    spec: BaseModel
    llm: str | None  # --llm: the model every call of the replay uses instead
    notes: list[str] = field(default_factory=list)  # printed and stored on the replay
    warnings: list[str] = field(default_factory=list)  # identity differences under --force

    @property
    def original_id(self) -> str:
        return self.original["_id"]

    def choices(self) -> list[tuple[LLMChoice, LLMChoice]]:
        """(original, replay) model of every LLM the run uses, each once."""
        originals = models(self.kind, spec_of(self.kind, self.original["spec"]))
        replays = models(self.kind, self.spec)
        pairs, seen = [], set()
        for pair in zip(originals, replays, strict=True):
            key = (pair[0].model, pair[0].base_url, pair[1].model, pair[1].base_url)
            if key not in seen:
                seen.add(key)
                pairs.append(pair)
        return pairs


def _replaced(choice: LLMChoice, model: str, experiment: object) -> LLMChoice:
    """`choice` on `model`, with the original's sampling parameters; the base URL of the
    experiment's entry for `model` when it lists one."""
    listed = next(
        (c for c in getattr(experiment, "llms", []) if model.strip() in (c.key, c.model)), None
    )
    try:
        return LLMChoice(
            model=listed.model if listed else model.strip(),
            params=choice.params,
            base_url=listed.base_url if listed else None,
            label=listed.label if listed else None,
        )
    except ValidationError as exc:
        raise UserError(
            exc.errors()[0]["msg"].removeprefix("Value error, "),
            field="--llm",
            fix="use a model string such as local:smollm2 or ollama:llama3",
        ) from None


def plan(store: Store, run_id: str, llm: str | None = None) -> ReplayPlan:
    """Read and check the original; refuse (UserError) what cannot be replayed as it ran."""
    doc = store.conversations.get(run_id)
    kind = _replayable_kind(doc)
    if kind is None:
        kind_name = doc.get("kind")
        raise UserError(f"{run_id} is a run of kind {kind_name!r}, which replay does not know")
    if doc.get("status") != "done":
        raise UserError(
            f"{run_id} is {doc.get('status')}: a replay is compared with a finished run",
            fix=f"finish it first (llm-sim run resumes it), then replay {run_id}",
        )
    experiment = domain_of(kind).from_stored(experiment_snapshot(store, doc))
    spec = spec_of(kind, doc["spec"])
    refusal = replay_refusal(kind, doc, spec, llm)
    if refusal is not None:
        raise refusal
    view = run_view(doc, experiment)
    notes = [f"replay of {run_id} ({kind}): its spec, seed and experiment snapshot"]
    if llm:
        spec = _replace_models(kind, spec, llm, experiment)
        notes.append(
            f"model: every call on {llm.strip()} (--llm), with the original's sampling parameters"
        )
    return ReplayPlan(doc, kind, view, spec, llm.strip() if llm else None, notes)


def _replayable_kind(doc: dict) -> str | None:
    """The world of a stored run, or None when no world this tool knows replays it."""
    try:
        kind = kind_of(doc)
    except UserError:
        return None
    return kind if has_part(kind, "services.forking") else None


def _replace_models(kind: str, spec: BaseModel, llm: str, experiment: object) -> BaseModel:
    return with_models(kind, spec, lambda choice: _replaced(choice, llm, experiment))


def recorded_identity(rows: list[dict], choice: LLMChoice) -> dict | None:
    """The identity the original's last done call of `choice`'s model recorded."""
    done = [r for r in rows if r.get("state") == "done" and r.get("model") == choice.model]
    return done[-1].get("model_identity") if done else None


async def check_identity(store: Store, plan: ReplayPlan, llms: LLMAccess, force: bool) -> None:
    """Preflight every model, then compare its identity now with the original's record. A
    difference is refused (UserError, nothing stored) unless `force`, which keeps it as a
    warning on the plan; an identity known only from replies is noted, not refused."""
    rows = store.calls.for_conversation(plan.original_id)
    pairs = plan.choices()
    try:
        await llms.preflight([replay for _, replay in pairs])
    except FatalBackendError as exc:
        raise UserError(str(exc)) from None
    for original, replay in pairs:
        recorded = recorded_identity(rows, original)
        if not fingerprint(recorded):
            plan.notes.append(f"model identity: {original.model} recorded none; not checked")
            continue
        try:
            now = await llms.get(replay).identity()
        except FatalBackendError as exc:
            raise UserError(str(exc)) from None
        if not fingerprint(now):
            plan.notes.append(
                f"model identity: {replay.model} tells its identity only in its replies; not "
                "checked before the run"
            )
            continue
        if fingerprint(now) == fingerprint(recorded):
            continue
        same = replay.model == original.model
        which = replay.model if same else f"{replay.model} (in place of {original.model})"
        sentence = (
            f"the model of this replay is not the one {plan.original_id} ran on: {which} is "
            f"{describe_identity(now)}, and {plan.original_id} recorded "
            f"{describe_identity(recorded)}"
        )
        if not force:
            raise UserError(
                sentence + "; a replay on other weights shows nothing about whether the run "
                "reproduces, so nothing was stored",
                fix="replay on the original model, or pass --force to replay anyway with the "
                "difference stored on the replay",
            )
        plan.warnings.append(sentence + " (--force)")


def create(store: Store, plan: ReplayPlan, user: str) -> dict:
    """Store the replay, pending, linked to its original."""
    extra = {
        # a replay of a fork is a fork of the same parent at the same place: it shares the
        # same prefix (counted in listings: fork_shared) and re-runs the continuation
        **{
            k: plan.original[k]
            for k in ("fork_of", "fork_at", "fork_edit", "fork_shared")
            if k in plan.original
        },
        "replay_of": plan.original_id,
        "replay_llm": plan.llm,
        "replay_notes": list(plan.notes),
        "replay_warnings": list(plan.warnings),
    }
    return run_service.create_run(store, plan.view, plan.spec, user, extra)


async def run(
    store: Store,
    plan: ReplayPlan,
    replay_id: str,
    llms: LLMAccess,
    on_event: Callable[[ev.Event], None] = lambda e: None,
    stop: asyncio.Event | None = None,
) -> RunOutcome:
    return await run_service.run(store, replay_id, llms, on_event, stop)


def verdict(store: Store, original_id: str, replay_id: str) -> Verdict:
    """The two ledgers compared call by call."""
    ours = store.calls.for_conversation(original_id)
    theirs = store.calls.for_conversation(replay_id)
    return compare(
        original_id,
        replay_id,
        ours,
        theirs,
        store.calls.prompt,
        determinism_caveat([*ours, *theirs]),
    )


@dataclass
class ReplayResult:
    plan: ReplayPlan
    outcome: RunOutcome
    verdict: Verdict


async def replay(
    store: Store,
    plan: ReplayPlan,
    llms: LLMAccess,
    user: str,
    force: bool = False,
    on_event: Callable[[ev.Event], None] = lambda e: None,
    stop: asyncio.Event | None = None,
    on_checked: Callable[[ReplayPlan], None] = lambda plan: None,
) -> ReplayResult:
    """Check the models, store the replay, run it, and compare it with the original;
    `on_checked` hears the plan with its notes and warnings before anything is stored."""
    await check_identity(store, plan, llms, force)
    on_checked(plan)
    doc = create(store, plan, user)
    outcome = await run(store, plan, doc["_id"], llms, on_event, stop)
    return ReplayResult(plan, outcome, verdict(store, plan.original_id, doc["_id"]))
