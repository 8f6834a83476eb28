"""`llm-sim conversation show|memory|replay|fork|resume|delete|favourite`: loaded when one of
them runs (simulator/cli/commands/conversation.py lists them)."""

from __future__ import annotations

import sys
from typing import Any

import click

from simulator.cli.context import AppContext
from simulator.cli.params import SEED
from simulator.cli.read_only import read_only
from simulator.cli.transcript_view import show_prompts, show_transcript
from simulator.errors import UserError
from simulator.memory.domain.records import MEMORY_TYPES
from simulator.services import conversation_deletion as deletion
from simulator.services import runs

json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output only.")


@click.command("show")
@click.argument("conversation_id")
@click.option(
    "--prompts", "with_prompts", is_flag=True, help="Show the exact prompts of every call."
)
@json_option
@click.pass_obj
def show_cmd(app: AppContext, conversation_id: str, with_prompts: bool, as_json: bool) -> None:
    """Show a conversation (anyone may view any conversation)."""
    data, calls = read_only(
        app,
        lambda store: (
            runs.transcript(store, conversation_id),
            runs.prompts(store, conversation_id) if with_prompts else None,
        ),
    )
    if as_json:
        if calls is not None:
            data["calls"] = calls
        app.print_json(data)
        return
    show_transcript(app.console, data)
    if calls is not None:
        show_prompts(app.console, calls)


@click.command("memory")
@click.argument("run_id")
@click.option("--agent", help="Only this agent (its name, or its index from 0).")
@click.option("--type", "kind", type=click.Choice(MEMORY_TYPES), help="Only memories of this type.")
@click.option("--tree", is_flag=True, help="Show each thought over the records it rests on.")
@click.option("--step", type=int, help="Show what the prompts of this step (round) showed.")
@json_option
@click.pass_obj
def memory_cmd(
    app: AppContext,
    run_id: str,
    agent: str | None,
    kind: str | None,
    tree: bool,
    step: int | None,
    as_json: bool,
) -> None:
    """Browse a run's memory streams: each agent's memories over time with their importance,
    the evidence under each thought (--tree), and what one step's prompts showed (--step)."""
    from simulator.memory.analysis.browser import browse_memories
    from simulator.memory.cli.view import show_memories

    browse = browse_memories(app.store, run_id, agent=agent, type=kind, step=step)
    if as_json:
        app.print_json(browse.to_json())
    else:
        show_memories(app.console, browse, tree=tree)


@click.command("replay")
@click.argument("run_id")
@click.option("--llm", help="Replay every call on this model instead.")
@click.option(
    "--force", is_flag=True, help="Replay even when the model's identity differs from the record."
)
@json_option
@click.pass_obj
def replay_cmd(app: AppContext, run_id: str, llm: str | None, force: bool, as_json: bool) -> None:
    """Re-run a stored run (chat, grid or network) exactly, as a new run linked to it, and say
    whether every call got the same prompt and reply, or where it first diverged."""
    from simulator.cli.replay_view import replay_cli

    replay_cli(app, run_id, llm=llm, force=force, as_json=as_json)


@click.command("fork")
@click.argument("conversation_id")
@click.option(
    "--at",
    required=True,
    metavar="DAY:INDEX|N",
    help="The first message not shared, as `conversation show` prints it, e.g. 1:3; for a "
    "grid run the first step not shared, for a network run the first round (e.g. 2).",
)
@click.option("--edit", help="The text the same agent says at the fork point instead (a chat).")
@click.option("--llm", help="Model for every agent from the fork point on.")
@click.option("--llm-for", multiple=True, metavar="ROLE=MODEL", help="Model for one role's agents.")
@click.option(
    "--variant", "variants", multiple=True, metavar="SECTION=NAME", help="A prompt variant."
)
@click.option("--speaker", help="Speaker method from the fork point on.")
@click.option(
    "--repetitions", type=int, default=1, show_default=True, help="Continuations, one seed each."
)
@click.option("--seed", type=SEED, help="Seed of the first continuation (default: the parent's).")
@json_option
@click.pass_obj
def fork_cmd(app: AppContext, conversation_id: str, at: str, as_json: bool, **changes: Any) -> None:
    """Branch a conversation at one message: the new conversation shares the messages before
    it (read from the original, not copied), optionally says your text there, and continues
    under the changed settings, once per repetition. A grid run branches at a step and a
    network run at a round (--at N): the fork shares the steps (rounds) before N and continues
    under --llm and --seed."""
    from simulator.cli.fork_view import fork_cli

    outcomes = fork_cli(app, conversation_id, at, as_json=as_json, **changes)
    if any(o.status == "failed" for o in outcomes):
        raise SystemExit(1)


@click.command("resume")
@click.argument("run_id")
@json_option
@click.pass_obj
def resume_cmd(app: AppContext, run_id: str, as_json: bool) -> None:
    """Finish a run that stopped (killed, interrupted, failed) and belongs to no sweep."""
    from simulator.cli.fork_view import resume_cli

    if resume_cli(app, run_id, as_json).status == "failed":
        raise SystemExit(1)


@click.command("favourite")
@click.argument("conversation_id")
@click.option("--off", is_flag=True, help="Remove it from your favourites.")
@click.pass_obj
def favourite_cmd(app: AppContext, conversation_id: str, off: bool) -> None:
    """Mark a conversation as one of your favourites."""
    runs.set_favourite(app.store, conversation_id, app.user, not off)
    app.console.print(f"{conversation_id} {'removed from' if off else 'added to'} your favourites.")


@click.command("delete")
@click.argument("conversation_id")
@click.option(
    "--with-forks",
    is_flag=True,
    help="Also delete every fork of it, whoever made them (you must own the conversation).",
)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_obj
def delete_cmd(app: AppContext, conversation_id: str, with_forks: bool, yes: bool) -> None:
    """Delete a conversation you own with its messages, calls, summaries and scores; with
    --with-forks, together with its forks (listed and counted before you confirm)."""
    question = deletion.plan(app.store, conversation_id, app.user, with_forks).question()
    if not yes:
        if not sys.stdin.isatty():
            raise UserError(
                f"deleting needs confirmation ({question})",
                field="--yes",
                fix="pass --yes when not at a terminal",
            )
        if not click.confirm(question, default=False):
            app.console.print("Nothing deleted.")
            return
    done = deletion.delete(app.store, conversation_id, app.user, with_forks)
    app.console.print(done.done_message(), markup=False)
