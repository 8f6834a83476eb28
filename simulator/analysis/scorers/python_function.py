"""`python:module.sub:function` or `python:/path/file.py:function`: a user's own scorer.

Why a plain function: a researcher's measure (word counts, a regex, a call to their own library)
should need no class and no registration. The function is called once per target:

* a message scorer (the default) as `fn(message)` or `fn(message, conversation)`;
* a conversation scorer (set `fn.target = "conversation"`) as `fn(conversation)`,
  `fn(conversation, messages)` or `fn(conversation, messages, summaries)`.

It returns a dict of JSON-able values (it may be `async`). An exception or a non-dict answer is a
failed score, reported and tried again on the next run. The scorer key is `python:module:function`
(or `python:FILE_STEM:function` for a file, so moving the file keeps its scores).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from simulator.analysis.scorers.base import ScoreResult, TargetKind, failed
from simulator.errors import UserError

FIX = "write python:package.module:function or python:/path/to/file.py:function"


class FunctionScorer:
    def __init__(self, name: str, function: Callable[..., Any]) -> None:
        self.name = name
        self.function = function
        kind = getattr(function, "target", "message")
        if kind not in ("message", "conversation"):
            raise UserError(
                f"{name}: target must be 'message' or 'conversation' (got {kind!r})",
                field="--scorer",
            )
        self.target_kind: TargetKind = kind
        self._arity = _positional_count(function)

    async def score(
        self, conversation: dict, messages: list[dict], summaries: list[dict]
    ) -> list[ScoreResult]:
        if self.target_kind == "conversation":
            args = (conversation, messages, summaries)
            return [await self._call(conversation["_id"], args)]
        return [await self._call(m["_id"], (m, conversation)) for m in messages]

    async def _call(self, target: str, args: tuple) -> ScoreResult:
        try:
            value = self.function(*args[: self._arity])
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:  # a user's bug must not stop the other targets
            return failed(target, f"{type(exc).__name__}: {exc}")
        if not isinstance(value, dict):
            return failed(target, f"the function returned {type(value).__name__}, not a dict")
        return target, value, {"function": self.name}


def _positional_count(function: Callable[..., Any]) -> int:
    params = inspect.signature(function).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return 3
    return sum(
        p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for p in params
    )


def _load_file(path: Path) -> Any:
    if not path.is_file():
        raise UserError(f"no Python file {str(path)!r}", field="--scorer", fix=FIX)
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    module_name = f"_sim_scorer_{path.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def create(argument: str, **_: Any) -> FunctionScorer:
    """Registry factory: import the module or file and look the function up."""
    ref, sep, function_name = argument.rpartition(":")
    if not sep or not ref or not function_name.isidentifier():
        raise UserError(f"{argument!r} does not name a function", field="--scorer", fix=FIX)
    try:
        if ref.endswith(".py") or "/" in ref or "\\" in ref:
            path = Path(ref).expanduser()
            module = _load_file(path)
            name = f"python:{path.stem}:{function_name}"
        else:
            module = importlib.import_module(ref)
            name = f"python:{ref}:{function_name}"
    except UserError:
        raise
    except Exception as exc:  # ImportError, SyntaxError, an error at import time
        raise UserError(
            f"could not import {ref!r}: {type(exc).__name__}: {exc}", field="--scorer", fix=FIX
        ) from None
    function = getattr(module, function_name, None)
    if not callable(function):
        raise UserError(f"{ref!r} has no function {function_name!r}", field="--scorer", fix=FIX)
    return FunctionScorer(name, function)
