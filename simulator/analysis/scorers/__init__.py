"""Scorers as plug-ins: a spec string such as `judge:prison_goal` to a scorer, imported lazily.

Kinds:

* `judge:NAME_OR_PATH` — an LLM judge with a rubric (`prompts/rubrics/NAME.yaml`, else a path
  to a rubric YAML file; see `rubric.py` for the format); needs `--llm`. Scores conversations.
* `classifier:MODEL_PATH_OR_ID` — a Hugging Face text-classification pipeline on each message
  (needs the `hf` extra).
* `python:module.sub:function` or `python:/path/file.py:function` — a user's function.
* `moderation:MODEL` — the OpenAI moderation API (e.g. omni-moderation-latest) on each message.

Why lazy: the classifier imports torch and transformers, which a judge user should not need.
Scores are written by `simulator.services.scoring`, never by the scorers themselves.
"""

from __future__ import annotations

import difflib
import importlib
from types import MappingProxyType
from typing import Any

from simulator.analysis.scorers.base import Scorer, ScoreResult, TargetKind
from simulator.errors import UserError

KINDS: MappingProxyType[str, str] = MappingProxyType(
    {
        "judge": "simulator.analysis.scorers.judge:create",
        "classifier": "simulator.analysis.scorers.classifier:create",
        "python": "simulator.analysis.scorers.python_function:create",
        "moderation": "simulator.analysis.scorers.moderation:create",
    }
)
EXAMPLES = (
    "judge:prison_goal, classifier:/path/to/model, python:my_module:my_function, "
    "moderation:omni-moderation-latest"
)

__all__ = ["KINDS", "ScoreResult", "Scorer", "TargetKind", "create_scorer"]


def create_scorer(spec: str, *, llm: str | None = None, llms: Any = None) -> Scorer:
    """Build the scorer for `spec`; a bad spec is a UserError naming the fix (exit 2)."""
    kind, sep, argument = (spec or "").strip().partition(":")
    kind = kind.strip().lower()
    if not sep or not argument.strip():
        raise UserError(
            f"{spec!r} is not a scorer of the form KIND:ARGUMENT",
            field="--scorer",
            fix=f"write it like one of: {EXAMPLES}.",
        )
    if kind not in KINDS:
        near = difflib.get_close_matches(kind, list(KINDS), n=1, cutoff=0.5)
        hint = f"did you mean '{near[0]}:{argument}'? " if near else ""
        raise UserError(
            f"unknown scorer kind {kind!r} in {spec!r}",
            field="--scorer",
            fix=f"{hint}Known kinds: {', '.join(f'{k}:' for k in KINDS)}.",
        )
    module_name, _, attr = KINDS[kind].partition(":")
    factory = getattr(importlib.import_module(module_name), attr)
    return factory(argument.strip(), llm=llm, llms=llms)
