"""`llm-sim sweep create` flags of group chats (cli/sweep_parts.py), and the spec they make
with a sweep file: the conversations' length, days, agents, speaker methods, variants and
switches, and a fork sweep's parent and point."""

from __future__ import annotations

from typing import get_args

import click

from simulator.cli.commands.sweep_options import FORK_OPTIONS
from simulator.errors import UserError
from simulator.services import sweeps as service
from simulator.services.experiments import ExperimentView
from simulator.services.sweeps import Plan
from simulator.worlds.chat.cli.switches import switch_lines
from simulator.worlds.chat.domain.profile import PROFILE_NAMES, profile_switches
from simulator.worlds.chat.domain.spec import SPEAKER_METHODS, ReplyCleaning, SpeakerFormat
from simulator.worlds.chat.services import roles

NOUN = "a group chat"
PLURAL = "group chats"
FIX = None

OPTIONS = (
    click.Option(
        ["--manager-llm"],
        help="Model that picks speakers for --speaker auto (default: the agents').",
    ),
    click.Option(
        ["--summarizer-llm"], help="Model that writes the daily summaries (default: the agents')."
    ),
    click.Option(
        ["--messages", "total_messages"],
        type=int,
        help="Total messages of each conversation: agent turns, or with --message-counting "
        "reference as the reference tool counted them.",
    ),
    click.Option(
        ["--message-counting"],
        type=click.Choice(["agent_turns", "reference"]),
        help="reference: count as the reference tool did (the day's opening is one of the "
        "messages, so 20 gives 19 agent turns; odd totals allowed).",
    ),
    click.Option(
        ["--allow-repeat-speaker"],
        is_flag=True,
        default=None,
        help="Let auto / manual pick the agent who just spoke (the reference never did).",
    ),
    click.Option(
        ["--profile"],
        type=click.Choice(PROFILE_NAMES),
        help="A set of the chat switches: reference = --reply-cleaning none --speaker-format "
        "name_field (as the reference tool ran a chat); over the file, under the two flags.",
    ),
    click.Option(
        ["--reply-cleaning"],
        type=click.Choice(get_args(ReplyCleaning)),
        help="What each reply's clean text leaves out (default speakers; none keeps it whole).",
    ),
    click.Option(
        ["--speaker-format"],
        type=click.Choice(get_args(SpeakerFormat)),
        help="How other speakers' turns reach a model (default prefix; name_field: one message "
        "each, the speaker in the message's name field).",
    ),
    click.Option(["--days"], type=int, help="Days the messages are split over (default 1)."),
    click.Option(
        ["--every-day-count/--exact-days"],
        default=None,
        help="Try every day count from 1 to --days.",
    ),
    click.Option(
        ["--agents"],
        metavar="ROLE=N,…",
        help="Agents per role (the maximum with --every-combination).",
    ),
    click.Option(
        ["--every-combination/--fixed-agents"],
        default=None,
        help="Every agent combination up to the maximum.",
    ),
    click.Option(
        ["--speaker", "speakers"],
        multiple=True,
        type=click.Choice([m for m in SPEAKER_METHODS if m != "manual"]),
        help="A speaker method to try (default round_robin); repeatable.",
    ),
    click.Option(
        ["--variant", "variants"],
        multiple=True,
        metavar="SECTION=NAME,…|all",
        help="e.g. 'Guard/Personality=all'.",
    ),
    *FORK_OPTIONS,
)


def spec_data(view: ExperimentView | None, data: dict, flags: dict) -> dict:
    """The flags over the file's mapping: --profile over the file's switches and under the
    two switch flags, --llm in place of the file's llm_assignments, the fork flags over the
    file's `fork:` block."""
    overrides = {
        "manager_llm": flags.get("manager_llm"),
        "summarizer_llm": flags.get("summarizer_llm"),
        "total_messages": flags.get("total_messages"),
        "message_counting": flags.get("message_counting"),
        "allow_repeat_speaker": flags.get("allow_repeat_speaker"),
        "days": flags.get("days"),
        "every_day_count": flags.get("every_day_count"),
        "every_agent_combination": flags.get("every_combination"),
        "speaker_methods": list(flags.get("speakers") or ()) or None,
        "reply_cleaning": flags.get("reply_cleaning"),
        "speaker_format": flags.get("speaker_format"),
    }
    if flags.get("profile") is not None:  # over the file's switches, under the two flags
        data.update(profile_switches(flags["profile"]))
    if flags.get("agents"):
        assert view is not None
        overrides["agents"] = roles.parse_counts(flags["agents"], view.experiment, field="--agents")
    if flags.get("variants"):
        overrides["variants"] = service.parse_variant_flags(flags["variants"])
    if flags.get("llms") and data.get("llm_assignments"):
        data.pop("llm_assignments")
    data.update({k: v for k, v in overrides.items() if v is not None})
    named = {k: flags.get(f"fork_{k}") for k in ("from", "at", "edit")}
    if any(v is not None for v in named.values()):  # the flags win over the file's fork:
        data["fork"] = {
            **(data.get("fork") or {}),
            **{k: v for k, v in named.items() if v is not None},
        }
    if ("total_messages" not in data or "agents" not in data) and not data.get("fork"):
        raise UserError(
            "a sweep needs total messages and agents per role",
            field="sweep",
            fix="give a sweep file or --messages N --agents ROLE=N,… (a fork sweep, "
            "--fork-from CONV_ID --fork-at D:I, takes them from the conversation it forks)",
        )
    return data


def plan_lines(plan: Plan) -> list[str]:
    """The chat switches every conversation of the plan runs with, when not at their defaults."""
    if not plan.switches:
        return []
    return switch_lines(plan.switches["reply_cleaning"], plan.switches["speaker_format"])
