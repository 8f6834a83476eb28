"""A replay's verdict: two runs' ledgers compared call by call (pure; no store, no model).

Done calls are matched by where they sit, (purpose, day/step, index, agent) and their order
among calls at that place, and walked in the original's `seq` order. Embedding requests are
not compared: which texts a run sends depends on what its process had cached, and vectors are
no reply. The first call whose prompt
or reply differs is the divergence, with a unified diff of the prompts (when those differ: the
cause) or of the replies. Model identities are compared by what names the weights: a GGUF's
sha256, an Ollama digest, a Hugging Face commit; else provider, model and fingerprint."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass

from simulator.domain.embedding_rows import is_embedding
from simulator.domain.fork import EDIT_PURPOSE
from simulator.domain.plural import count

WEIGHT_FIELDS = ("sha256", "digest", "commit")
NAME_FIELDS = ("provider", "model", "path_or_id", "system_fingerprint")


def fingerprint(identity: dict | None) -> dict:
    """The fields of a recorded `model_identity` that say which weights answered ({}: unknown)."""
    if not identity:
        return {}
    weights = {k: identity[k] for k in WEIGHT_FIELDS if identity.get(k)}
    if weights:
        return weights
    return {k: identity[k] for k in NAME_FIELDS if identity.get(k)}


def describe_identity(identity: dict | None) -> str:
    found = fingerprint(identity)
    if not found:
        return "unknown"
    return ", ".join(f"{k} {v}" for k, v in found.items())


@dataclass(frozen=True)
class Divergence:
    """The first call where the replay differs from the original."""

    purpose: str
    day: int
    index: int
    agent: str | None
    what: str  # "prompt", "reply", "missing" (the replay made no such call), "extra"
    original_seq: int | None
    replay_seq: int | None
    diff: str

    def headline(self) -> str:
        where = f"{self.purpose} call at day/step {self.day}, index {self.index}"
        if self.agent is not None:
            where += f", agent {self.agent}"
        return {
            "prompt": f"the prompt of the {where} differs",
            "reply": f"the reply to the {where} differs (same prompt)",
            "missing": f"the replay made no {where}",
            "extra": f"the replay made a {where} the original did not",
        }[self.what]


@dataclass(frozen=True)
class Verdict:
    original_id: str
    replay_id: str
    identical: bool
    compared: int  # calls matched and equal before the divergence (all of them when identical)
    original_calls: int
    replay_calls: int
    divergence: Divergence | None
    caveat: str | None  # why the backend or run does not promise the same replies

    def headline(self) -> str:
        if self.identical:
            if not self.original_calls:
                return "identical: neither run made a model call (nothing to compare)"
            calls = count(self.original_calls, "call")
            return f"identical: all {calls}, same prompts and same replies"
        assert self.divergence is not None
        same = count(self.compared, "identical call")
        return f"diverged after {same}: {self.divergence.headline()}"

    def to_json(self) -> dict:
        data = asdict(self)
        data["verdict"] = "identical" if self.identical else "diverged"
        data["headline"] = self.headline()
        return data


def _place(row: dict) -> tuple:
    return (row.get("purpose"), row.get("day"), row.get("index"), _agent(row.get("agent")))


def _agent(agent: object) -> str | None:
    return None if agent is None else str(agent)


def _done_by_place(rows: Iterable[dict]) -> dict[tuple, dict]:
    """Done calls keyed by their place and their order among calls at that place."""
    seen: dict[tuple, int] = {}
    keyed: dict[tuple, dict] = {}
    done = (r for r in rows if r.get("state") == "done" and not is_embedding(r))
    for row in sorted(done, key=lambda r: r["seq"]):
        place = _place(row)
        n = seen.get(place, 0)
        seen[place] = n + 1
        keyed[(*place, n)] = row
    return keyed


def prompt_text(messages: list[dict]) -> str:
    """A stored prompt as lines a diff can show: each message under its role."""
    return "\n".join(f"[{m.get('role')}]\n{m.get('content', '')}" for m in messages)


def _diff(a: str, b: str, original: str, replay: str) -> str:
    return "\n".join(
        difflib.unified_diff(
            a.splitlines(), b.splitlines(), fromfile=original, tofile=replay, lineterm=""
        )
    )


def compare(
    original_id: str,
    replay_id: str,
    original_rows: list[dict],
    replay_rows: list[dict],
    prompt_of: Callable[[str], list[dict]],
    caveat: str | None = None,
) -> Verdict:
    """The verdict on `replay_rows` against `original_rows` (ledger rows of the two runs);
    `prompt_of(hash)` gives a stored prompt's messages, read only for a differing prompt."""
    ours, theirs = _done_by_place(original_rows), _done_by_place(replay_rows)
    compared = 0
    divergence = None
    for key, row in ours.items():  # in the original's seq order
        other = theirs.get(key)
        purpose, day, index, agent, _ = key
        if other is None:
            diff = _diff(row.get("response") or "", "", original_id, f"{replay_id} (no call)")
            divergence = Divergence(purpose, day, index, agent, "missing", row["seq"], None, diff)
            break
        if row.get("prompt_hash") != other.get("prompt_hash"):
            a = prompt_text(prompt_of(row["prompt_hash"]))
            b = prompt_text(prompt_of(other["prompt_hash"]))
            diff = _diff(a, b, f"{original_id} prompt", f"{replay_id} prompt")
            divergence = Divergence(
                purpose, day, index, agent, "prompt", row["seq"], other["seq"], diff
            )
            break
        if (row.get("response") or "") != (other.get("response") or ""):
            diff = _diff(
                row.get("response") or "",
                other.get("response") or "",
                f"{original_id} reply",
                f"{replay_id} reply",
            )
            divergence = Divergence(
                purpose, day, index, agent, "reply", row["seq"], other["seq"], diff
            )
            break
        compared += 1
    if divergence is None:
        extra = [row for key, row in theirs.items() if key not in ours]
        if extra:
            row = min(extra, key=lambda r: r["seq"])
            purpose, day, index, agent = _place(row)
            diff = _diff("", row.get("response") or "", f"{original_id} (no call)", replay_id)
            divergence = Divergence(purpose, day, index, agent, "extra", None, row["seq"], diff)
    return Verdict(
        original_id,
        replay_id,
        divergence is None,
        compared,
        len(ours),
        len(theirs),
        divergence,
        caveat,
    )


def determinism_caveat(rows: Iterable[dict]) -> str | None:
    """One sentence when the calls' backends or seeds do not promise the same replies: a
    difference then need not mean that anything changed (None: they do promise it)."""
    reasons: list[str] = []
    unseeded = False
    for row in rows:
        if row.get("state") != "done" or row.get("purpose") == EDIT_PURPOSE or is_embedding(row):
            continue
        model = str(row.get("model") or "")
        seeded = (row.get("params") or {}).get("seed") is not None
        if not seeded:
            unseeded = True
        if model.startswith("openai:"):
            reason = f"{model} is served by an OpenAI-compatible server, which does not promise "
            reason += "the same reply for the same seed"
        elif model.startswith("hf:"):
            reason = f"{model} runs on transformers, which batches concurrent requests and does "
            reason += "not promise the same reply across batches"
        elif model.startswith("ollama:") and not seeded:
            reason = f"{model} is called without a seed"
        else:
            continue
        if reason not in reasons:
            reasons.append(reason)
    if unseeded and not any("without a seed" in r for r in reasons):
        reasons.append("some calls carry no seed (the run has none)")
    if not reasons:
        return None
    return "Not promised to be reproducible, so a difference need not mean anything changed: " + (
        "; ".join(reasons) + "."
    )
