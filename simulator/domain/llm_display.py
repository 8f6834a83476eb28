"""How the headers, live views and menus name an LLM entry, whatever the world."""

from __future__ import annotations

from simulator.domain.llm_choice import LLMChoice


def llm_name(choice: LLMChoice) -> str:
    """How displays name an LLM entry: its model, and its label when it has one."""
    return f"{choice.model} as {choice.label}" if choice.label else choice.model
