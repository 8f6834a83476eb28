"""A conversation's 'Fork here' and 'Replay' in the browser.

Both go through the functions `llm-sim conversation fork` and `conversation replay` use
(services/forks.py and services/replays.py, shown by cli/fork_view.py and cli/replay_view.py), so
a fork or a replay made here is the one the commands would have made with the same answers.
"""

from __future__ import annotations

from simulator.cli.context import AppContext
from simulator.cli.fork_view import run_fork, show_plan
from simulator.cli.interactive import prompts as ask
from simulator.cli.replay_view import replay_cli
from simulator.domain.experiment import Experiment
from simulator.domain.fork import point_text
from simulator.domain.invisible_chars import visible
from simulator.domain.limits import MAX_SEED
from simulator.domain.variants import variant_slots
from simulator.domain.vocabulary import SPEAKER_METHODS
from simulator.errors import UserError
from simulator.services import forks, replays
from simulator.worlds.chat.domain.spec import ConversationSpec
from simulator.worlds.chat.engine.run import llm_name
from simulator.worlds.chat.services import runs as conv_service

KEEP = "\x00keep"  # "keep the parent's" in a picker (no model, method or variant starts with NUL)
TYPE = "\x00type"  # "type a model string"
WORDS = 8  # the first words of a message shown in the picker


def lineage_label(doc: dict) -> str:
    """Where a run comes from, short enough for a picker's line ('' for an original run)."""
    parts = []
    if doc.get("fork_of"):
        parts.append(f"fork of {doc['fork_of']} at {point_text(doc.get('fork_at'))}")
    if doc.get("replay_of"):
        parts.append(f"replay of {doc['replay_of']}")
    return ", ".join(parts)


def refusal(doc: dict) -> UserError | None:
    """Why this run cannot be forked (services/forks.py's own check), or None."""
    kind = replays.kind_of(doc)
    spec = (
        ConversationSpec.model_validate(doc["spec"])
        if kind == "chat"
        else ConversationSpec.model_construct()
    )
    try:
        forks.check_parent(doc, spec)
    except UserError as error:
        return error
    return None


def message_label(message: dict) -> str:
    """'[D:I] Speaker: first words…' for the picker; shared and edited messages say so."""
    words = " ".join((message.get("text") or "").split()).split(" ")
    start = " ".join(words[:WORDS]) + ("…" if len(words) > WORDS else "")
    flags = " (edited)" if message.get("edited") else ""
    flags += " (empty)" if not start else ""
    return visible(f"[{message['day']}:{message['index']}] {message['speaker']}: {start}{flags}")


def _pick_message(messages: list[dict]) -> dict | None:
    choices = [(message_label(m), i) for i, m in enumerate(messages)]
    picked = ask.select(
        "Fork at which message?",
        [*choices, ("Back", -1)],
        note="The fork shares every message before it; type [D:I] to find one.",
    )
    return None if picked == -1 else messages[picked]


def _ask_edit(app: AppContext, message: dict) -> str | None:
    """The researcher's text at the fork point, or None: the model speaks there again."""
    place = f"{message['day']}:{message['index']}"
    if not ask.confirm(
        f"Put your own text at {place} in place of {message['speaker']}'s?",
        default=False,
        note=f"No: the model speaks at {place} again.",
    ):
        return None
    text = ask.text_block(
        f"What {message['speaker']} says at {place}",
        default=message.get("text") or "",
        note="Empty: the model speaks there again.",
    )
    if not text:
        app.console.print(f"Empty: the message at {place} is generated again.", markup=False)
        return None
    return text


def _ask_model(app: AppContext, spec: ConversationSpec, experiment: Experiment) -> str | None:
    """One model for every agent from the fork point (--llm), or None to keep the parent's."""
    current = ", ".join(f"{role}: {llm_name(c)}" for role, c in spec.role_llms.items())
    choices = [(f"keep the parent's ({current})", KEEP)]
    choices += [(f"every agent on {llm_name(m)}", m.key) for m in experiment.llms]
    choices.append(("type a model string (e.g. ollama:llama3)", TYPE))
    picked = ask.select("Model for the agents from the fork point", choices, default=KEEP)
    if picked == KEEP:
        return None
    if picked == TYPE:
        return ask.ask_required("Model string (every agent uses it)")
    return picked


def _ask_speaker(spec: ConversationSpec) -> str | None:
    """The speaker method from the fork point, or None to keep the parent's. A fork runs
    unattended, so manual is not offered (a manual parent's fork must pick another)."""
    from simulator.worlds.chat.cli.perform_menu import SPEAKER_HELP

    methods = [m for m in SPEAKER_METHODS if m != "manual"]
    choices = [(f"{m} — {SPEAKER_HELP[m]}", m) for m in methods]
    if spec.speaker_method != "manual":
        choices.insert(0, (f"keep the parent's ({spec.speaker_method})", KEEP))
    default = KEEP if spec.speaker_method != "manual" else "round_robin"
    picked = ask.select("How is the next speaker chosen from the fork point?", choices, default)
    return None if picked == KEEP else picked


def _ask_variants(spec: ConversationSpec, experiment: Experiment) -> list[str]:
    """SECTION=NAME for each section whose variant changes (asked only when some have any)."""
    slots = variant_slots(experiment)
    if not slots or not ask.confirm("Change the variants of sections?", default=False):
        return []
    chosen = []
    for section, names in slots.items():
        current = spec.variant.get(section)
        keep = f"keep ({current})" if current else "keep (the section's own content)"
        picked = ask.select(
            f"Variant of {section}", [(keep, KEEP), *((n, n) for n in names)], default=KEEP
        )
        if picked != KEEP:
            chosen.append(f"{section}={picked}")
    return chosen


def fork_here(app: AppContext, conversation_id: str) -> None:
    """Pick a message of a chat, ask what changes, show the plan, then run the forks."""
    data = conv_service.transcript(app.store, conversation_id)
    doc = data["conversation"]
    problem = refusal(doc)
    if problem is not None:
        ask.show_error(problem)
        return
    messages = data["messages"]  # a fork's shared prefix first
    if not messages:
        app.console.print(f"{conversation_id} has no message yet to fork at.", markup=False)
        return
    message = _pick_message(messages)
    if message is None:
        return
    spec = ConversationSpec.model_validate(doc["spec"])
    experiment = Experiment.from_stored(conv_service.experiment_snapshot(app.store, doc))
    edit = _ask_edit(app, message)
    llm = _ask_model(app, spec, experiment)
    speaker = _ask_speaker(spec)
    variants = _ask_variants(spec, experiment)
    repetitions = ask.ask_int("Repetitions (one continuation each)", 1, forks.MAX_REPETITIONS, 1)
    seed_note = "the parent's" if spec.seed is not None else "none, as the parent had none"
    seed = ask.ask_int(
        "Seed of the first continuation",
        0,
        MAX_SEED,
        default=spec.seed,
        optional=True,
        note=f"Each next continuation takes the next seed (+1). Blank: {seed_note}.",
    )
    try:
        plan = forks.plan(
            app.store,
            conversation_id,
            f"{message['day']}:{message['index']}",
            edit=edit,
            llm=llm,
            variants=variants,
            speaker=speaker,
            repetitions=repetitions or 1,
            seed=seed,
        )
    except UserError as error:
        ask.show_error(error)
        return
    show_plan(app, plan)
    total = len(plan.specs)
    if not ask.confirm(
        f"Start {total} continuation{'s' if total != 1 else ''}?",
        default=True,
        note="Ctrl-C stops at once; nothing stored is lost.",
    ):
        app.console.print("Nothing forked.")
        return
    try:
        outcomes = run_fork(app, plan)
    except KeyboardInterrupt:
        app.console.print("Stopped at once; what ran is kept, the one running marked interrupted.")
        return
    except UserError as error:
        ask.show_error(error)
        return
    ids = ", ".join(f"{o.conversation_id} ({o.status})" for o in outcomes)
    app.console.print(
        f"Forks of {conversation_id} at {plan.point}: {ids}; see them under Conversations.",
        markup=False,
    )


def replay(app: AppContext, conversation_id: str) -> None:
    """Re-run a done run exactly and show the verdict (what `conversation replay` does)."""
    if not ask.confirm(
        f"Replay {conversation_id}?",
        default=True,
        note=f"Replay {conversation_id} with its spec, seed and models, and compare the two.",
    ):
        return
    try:
        replay_cli(app, conversation_id, llm=None, force=False, as_json=False)
        return
    except KeyboardInterrupt:
        app.console.print("Stopped at once; the replay is kept, marked interrupted.")
        return
    except UserError as error:
        ask.show_error(error)
        if "--force" not in (error.fix or ""):
            return
    # the models answer as other weights than the original recorded: only on request
    if not ask.confirm("Replay anyway, with the difference stored on the replay?", default=False):
        app.console.print("Nothing replayed.")
        return
    try:
        replay_cli(app, conversation_id, llm=None, force=True, as_json=False)
    except KeyboardInterrupt:
        app.console.print("Stopped at once; the replay is kept, marked interrupted.")
    except UserError as error:
        ask.show_error(error)
