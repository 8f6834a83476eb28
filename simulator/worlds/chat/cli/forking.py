"""The group chat's forks on screen (simulator/cli/fork_parts.py): the browser's questions
of what a fork changes from its message on (fork_questions.py)."""

from __future__ import annotations

from pydantic import BaseModel

from simulator.cli.context import AppContext

__all__ = ["ask_changes"]


def ask_changes(app: AppContext, doc: dict, spec: BaseModel) -> dict:
    """The menu's questions (`forks.plan`'s llm, speaker and variants)."""
    from simulator.worlds.chat.cli import fork_questions  # questionary: the menus only

    return fork_questions.ask_changes(app, doc, spec)  # type: ignore[arg-type]
