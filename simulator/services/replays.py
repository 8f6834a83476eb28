"""`conversation replay`: re-run a stored run (chat, grid or network) exactly, as a new stored
run linked to it (`replay_of`), through the world's own create and run, and compare the two
ledgers (domain/replay_verdict.py). The model each call would use is checked against the
identity the original's ledger recorded before anything is stored."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, ValidationError

from simulator.domain.experiment import Experiment, LLMChoice
from simulator.domain.replay_verdict import (
    Verdict,
    compare,
    describe_identity,
    determinism_caveat,
    fingerprint,
)
from simulator.engine import events as ev
from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.llm.base import FatalBackendError
from simulator.services import runs
from simulator.services.experiments import ExperimentView
from simulator.store.store import Store
from simulator.worlds.chat.domain.spec import ConversationSpec
from simulator.worlds.chat.services import runs as conversations
from simulator.worlds.chat.services.runs import RunOutcome, experiment_snapshot, run_view
from simulator.worlds.grid.domain.experiment import GridExperiment, GridSpec
from simulator.worlds.grid.services import runs as grid_runs
from simulator.worlds.network.domain.experiment import NetworkExperiment, NetworkSpec
from simulator.worlds.network.services import runs as network_runs

KINDS = {"chat": (Experiment, ConversationSpec), "grid": (GridExperiment, GridSpec)}
KINDS["network"] = (NetworkExperiment, NetworkSpec)


RUNNERS = {"chat": conversations.run, "grid": grid_runs.run, "network": network_runs.run}


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
        originals = _choices(self.kind, _spec_of(self.kind, self.original["spec"]))
        replays = _choices(self.kind, self.spec)
        pairs, seen = [], set()
        for pair in zip(originals, replays, strict=True):
            key = (pair[0].model, pair[0].base_url, pair[1].model, pair[1].base_url)
            if key not in seen:
                seen.add(key)
                pairs.append(pair)
        return pairs


def kind_of(doc: dict) -> str:
    """chat, grid or network: the world a stored run belongs to."""
    kind = doc.get("kind") or "chat"
    return "chat" if kind == "conversation" else kind


def _spec_of(kind: str, data: dict) -> BaseModel:
    return KINDS[kind][1].model_validate(data)


def _choices(kind: str, spec: BaseModel) -> list[LLMChoice]:
    if kind == "chat":
        assert isinstance(spec, ConversationSpec)
        extra = (c for c in (spec.manager_llm, spec.summarizer_llm) if c)
        return [*spec.role_llms.values(), *extra]
    llm = getattr(spec, "llm", None)
    return [llm] if llm is not None else []


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
    kind = kind_of(doc)
    if kind not in KINDS:
        raise UserError(f"{run_id} is a run of kind {kind!r}, which replay does not know")
    if doc.get("status") != "done":
        raise UserError(
            f"{run_id} is {doc.get('status')}: a replay is compared with a finished run",
            fix=f"finish it first (llm-sim run resumes it), then replay {run_id}",
        )
    experiment_model, spec_model = KINDS[kind]
    experiment = experiment_model.from_stored(experiment_snapshot(store, doc))
    spec = spec_model.model_validate(doc["spec"])
    if kind == "chat" and spec.speaker_method == "manual":  # type: ignore[attr-defined]
        raise UserError(
            f"{run_id} chose its speakers by hand (speaker method manual), and a replay "
            "cannot ask you again",
            fix="replay a run whose speakers the engine chose",
        )
    if kind == "network" and spec.is_theory and llm:  # type: ignore[attr-defined]
        raise UserError("a theory run has no model", field="--llm", fix="leave --llm out")
    view = run_view(doc, experiment)
    notes = [f"replay of {run_id} ({kind}): its spec, seed and experiment snapshot"]
    if llm:
        spec = _replace_models(kind, spec, llm, experiment)
        notes.append(
            f"model: every call on {llm.strip()} (--llm), with the original's sampling parameters"
        )
    return ReplayPlan(doc, kind, view, spec, llm.strip() if llm else None, notes)


def _replace_models(kind: str, spec: BaseModel, llm: str, experiment: object) -> BaseModel:
    if kind == "chat":
        assert isinstance(spec, ConversationSpec)
        update: dict = {
            "role_llms": {r: _replaced(c, llm, experiment) for r, c in spec.role_llms.items()}
        }
        for name in ("manager_llm", "summarizer_llm"):
            choice = getattr(spec, name)
            if choice is not None:
                update[name] = _replaced(choice, llm, experiment)
        return spec.model_copy(update=update)
    choice = getattr(spec, "llm")  # noqa: B009
    return spec.model_copy(update={"llm": _replaced(choice, llm, experiment)})


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
    spec = plan.spec
    if plan.kind == "chat":
        assert isinstance(spec, ConversationSpec)
        return conversations.create(store, plan.view, spec, user, extra)
    if plan.kind == "grid":
        assert isinstance(spec, GridSpec)
        document = grid_runs.run_document(plan.view, spec, user, extra)
    else:
        assert isinstance(spec, NetworkSpec)
        document = {**network_runs.run_document(plan.view, spec, user), **extra}
    return runs.create(store, document, user)


async def run(
    store: Store,
    plan: ReplayPlan,
    replay_id: str,
    llms: LLMAccess,
    on_event: Callable[[ev.Event], None] = lambda e: None,
    stop: asyncio.Event | None = None,
) -> RunOutcome:
    return await RUNNERS[plan.kind](store, replay_id, llms, on_event=on_event, stop=stop)


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
