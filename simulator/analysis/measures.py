"""Built-in measures: per message, per conversation, and per sweep cell with a 95% CI.

Pure functions over the rows of `tables.load_tables` (or stored documents with the same field
names), so they are tested on hand-built transcripts and reused by the CLI and the report.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from difflib import SequenceMatcher

from simulator.analysis.tables import to_number

REFUSAL_MARKERS: tuple[str, ...] = (
    "as an ai",
    "as a language model",
    "i cannot",
    "i can't",
    "i can not",
    "i am unable to",
    "i'm unable to",
    "i am not able to",
    "i'm not able to",
    "i won't be able to",
    "i must decline",
    "i'm sorry, but",
    "i am sorry, but",
    "i apologize, but",
)
NEAR_DUPLICATE_RATIO = 0.9  # difflib similarity of two normalised texts at or above: a repeat
ID_COLUMNS = ("conversation_id", "cell_key", "cell_label", "repetition", "status")

MEASURES: dict[str, str] = {
    "messages": "messages stored",
    "words": "mean words per message (whitespace-separated tokens of the clean text)",
    "chars": "mean characters per message (clean text)",
    "words_<Role>": "mean words per message of that role's agents",
    "chars_<Role>": "mean characters per message of that role's agents",
    "trimmed_share": "share of messages trimmed for role bleed",
    "empty_share": "share of empty replies",
    "refusal_share": "share of messages containing a refusal marker (REFUSAL_MARKERS)",
    "repetition_share": "share of messages (after the first) that nearly duplicate the message "
    "before them (difflib ratio >= 0.9 on lower-cased, whitespace-collapsed text)",
    "fallback_share": "share of messages whose speaker was chosen by fallback",
    "failed": "1 if the conversation failed, else 0 (its cell mean is the failure rate)",
    "calls": "LLM calls in the ledger (every attempt)",
    "call_failure_rate": "share of LLM calls that returned an error",
    "latency_s": "mean seconds per message (the successful call that produced it)",
    "tokens_in": "prompt tokens over all calls",
    "tokens_out": "completion tokens over all calls",
    "tokens_out_per_message": "mean completion tokens per message",
    "score_<scorer>_<field>": "a scorer's value (yes/no, true/false as 1/0); message-level "
    "scores averaged over the conversation's messages; with several users' scores, their mean",
    "score_<scorer>_<field>_by_<user>": "the same, one user's scores only; present when more "
    "than one user (or scores naming no user: 'unknown') scored with that scorer in the scope",
}

# two-sided 95% t quantiles; beyond the table the nearest smaller df is used (conservative)
_T95_1_TO_30 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
T95 = {**dict(enumerate(_T95_1_TO_30, start=1)), 40: 2.021, 60: 2.000, 120: 1.980}
_SPACE = re.compile(r"\s+")


def t_quantile(df: int) -> float:
    """The 97.5% quantile of Student's t with `df` degrees of freedom; 1.96 past 120."""
    if df < 1:
        raise ValueError("df must be at least 1")
    if df > 120:
        return 1.96
    return T95[max(k for k in T95 if k <= df)]


def normalise(text: str | None) -> str:
    return _SPACE.sub(" ", (text or "").replace("\u2019", "'").lower()).strip()


def is_refusal(text: str | None) -> bool:
    clean = normalise(text)
    return any(marker in clean for marker in REFUSAL_MARKERS)


def near_duplicate(a: str | None, b: str | None) -> bool:
    """Two messages saying (almost) the same thing; two empty texts are not a repeat."""
    left, right = normalise(a)[:2000], normalise(b)[:2000]
    if not left or not right:
        return False
    if left == right:
        return True
    matcher = SequenceMatcher(None, left, right, autojunk=False)
    return matcher.quick_ratio() >= NEAR_DUPLICATE_RATIO and matcher.ratio() >= NEAR_DUPLICATE_RATIO


def message_measures(message: dict) -> dict:
    """Measures of one message (a stored message or a `messages` table row)."""
    text = message.get("text") or ""
    return {
        "words": len(text.split()),
        "chars": len(text),
        "trimmed": int(bool(message.get("trimmed"))),
        "empty": int(bool(message.get("empty")) or not text.strip()),
        "refusal": int(is_refusal(text)),
        "fallback": int(bool(message.get("speaker_fallback"))),
        "latency_s": message.get("latency_s"),
        "tokens_in": message.get("tokens_in"),
        "tokens_out": message.get("tokens_out"),
    }


def _mean(values: list) -> float | None:
    present = [float(v) for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _group(rows: list[dict], key: str = "conversation_id") -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        grouped[row.get(key)].append(row)
    return grouped


def conversation_measures(tables: dict[str, list[dict]]) -> list[dict]:
    """One row per conversation: ids, status and every measure (see MEASURES)."""
    messages = _group(sorted(tables.get("messages", []), key=lambda m: m.get("seq") or 0))
    calls = _group(tables.get("calls", []))
    scores = _group(tables.get("scores", []))
    shared = _scorers_with_several_users(tables.get("scores", []))
    conversations = tables.get("conversations", [])
    roles = list(
        dict.fromkeys(
            k.removeprefix("agents_") for c in conversations for k in c if k.startswith("agents_")
        )
    )
    rows = []
    for conv in conversations:
        cid = conv["conversation_id"]
        row = {k: conv.get(k) for k in ID_COLUMNS}
        row.update(_message_part(messages.get(cid, []), roles))
        row["failed"] = int(conv.get("status") == "failed")
        conv_calls = calls.get(cid, [])
        row["calls"] = len(conv_calls)
        failures = sum(1 for c in conv_calls if c.get("error") is not None)
        row["call_failure_rate"] = failures / len(conv_calls) if conv_calls else None
        row["tokens_in"] = sum(c.get("tokens_in") or 0 for c in conv_calls)
        row["tokens_out"] = sum(c.get("tokens_out") or 0 for c in conv_calls)
        n = row["messages"]
        row["tokens_out_per_message"] = (
            _mean([m.get("tokens_out") for m in messages.get(cid, [])]) if n else None
        )
        row.update(_score_part(scores.get(cid, []), shared))
        rows.append(row)
    return rows


def _message_part(messages: list[dict], roles: list[str]) -> dict:
    measured = [(m, message_measures(m)) for m in messages]
    n = len(measured)

    def share(name: str) -> float | None:
        return sum(x[name] for _, x in measured) / n if n else None

    part: dict = {
        "messages": n,
        "words": _mean([x["words"] for _, x in measured]),
        "chars": _mean([x["chars"] for _, x in measured]),
    }
    for role in roles:
        own = [x for m, x in measured if m.get("role") == role]
        part[f"words_{role}"] = _mean([x["words"] for x in own])
        part[f"chars_{role}"] = _mean([x["chars"] for x in own])
    part["trimmed_share"] = share("trimmed")
    part["empty_share"] = share("empty")
    part["refusal_share"] = share("refusal")
    repeats = [
        near_duplicate(messages[i - 1].get("text"), messages[i].get("text")) for i in range(1, n)
    ]
    part["repetition_share"] = sum(repeats) / len(repeats) if repeats else None
    part["fallback_share"] = share("fallback")
    part["latency_s"] = _mean([x["latency_s"] for _, x in measured])
    return part


def _scorers_with_several_users(scores: list[dict]) -> set[str]:
    users: dict[str, set] = defaultdict(set)
    for row in scores:
        users[row.get("scorer")].add(row.get("scored_by"))
    return {scorer for scorer, who in users.items() if len(who) > 1}


def _score_part(scores: list[dict], shared: set[str] = frozenset()) -> dict:
    """`score_<scorer>_<field>`: the conversation's own value, else the mean over messages
    (pooled over users); `..._by_<user>` columns for scorers several users scored with."""
    own: dict[str, list[float]] = defaultdict(list)
    per_message: dict[str, list[float]] = defaultdict(list)
    for row in scores:
        number = row.get("value_num", to_number(row.get("value")))
        if number is not None:
            kept = own if row.get("target_kind") == "conversation" else per_message
            name = f"score_{row['scorer']}_{row['field']}"
            kept[name].append(number)
            if row.get("scorer") in shared:
                kept[f"{name}_by_{row.get('scored_by') or 'unknown'}"].append(number)
    merged = {**per_message, **own}
    return {name: sum(v) / len(v) for name, v in sorted(merged.items())}


def mean_ci(values: list) -> tuple[float | None, float | None, float | None]:
    """Mean and 95% t interval; with one value the interval is (None, None): unknown spread."""
    present = [float(v) for v in values if v is not None]
    n = len(present)
    if n == 0:
        return None, None, None
    mean = sum(present) / n
    if n == 1:
        return mean, None, None
    sd = math.sqrt(sum((v - mean) ** 2 for v in present) / (n - 1))
    half = t_quantile(n - 1) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def numeric_measures(rows: list[dict]) -> list[str]:
    """Columns that hold a number in some row and nothing but numbers or None in all."""
    names = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in ID_COLUMNS]
    return [
        name
        for name in names
        if any(isinstance(r.get(name), int | float) for r in rows)
        and all(r.get(name) is None or isinstance(r.get(name), int | float) for r in rows)
    ]


def cell_measures(
    conversation_rows: list[dict], labels: dict[str, str] | None = None
) -> list[dict]:
    """One row per cell: n conversations and `m_mean`, `m_ci_low`, `m_ci_high` per measure;
    `label` is what tells the cell apart from the others (see `cell_labels`)."""
    names = numeric_measures(conversation_rows)
    result = []
    for cell_key, rows in _group(conversation_rows, "cell_key").items():
        stored = rows[0].get("cell_label")
        out: dict = {
            "cell_key": cell_key,
            "cell_label": stored,
            "label": (labels or {}).get(cell_key) or stored or cell_key,
            "n": len(rows),
        }
        for name in names:
            mean, low, high = mean_ci([r.get(name) for r in rows])
            out[f"{name}_mean"], out[f"{name}_ci_low"], out[f"{name}_ci_high"] = mean, low, high
        result.append(out)
    return result


def _varies(rows: list[dict], column: str) -> bool:
    return len({repr(r.get(column)) for r in rows}) > 1


def _models(row: dict, columns: list[str]) -> str:
    """One model name when every role of the cell uses it, else `Role→model` per role."""
    used = {c.removeprefix("llm_"): row.get(c) for c in columns if row.get(c) is not None}
    if len(set(used.values())) == 1:
        return str(next(iter(used.values())))
    return " ".join(f"{role}→{model}" for role, model in used.items())


def cell_labels(conversations: list[dict]) -> dict[str, str]:
    """Each cell named by only the factors that differ between the cells given, in full:
    e.g. `Guard=2 Prisoner=1 · Personality=abusive`. `conversations` are rows of the
    `conversations` table (one per conversation; the first of each cell is used).

    The stored `cell_label` names every factor and is shortened on a narrow screen until two
    cells look the same; this one stays short, and cells whose factors are all equal still
    get distinct labels (their key is added)."""
    first: dict[str, dict] = {}
    for row in conversations:
        first.setdefault(str(row.get("cell_key")), row)
    if len(first) <= 1:
        return {key: str(row.get("cell_label") or key) for key, row in first.items()}
    rows = list(first.values())
    columns = list(dict.fromkeys(k for r in rows for k in r))
    llm_columns = [c for c in columns if c.startswith("llm_")]
    agent_columns = [c for c in columns if c.startswith("agents_")]
    variants = [c for c in columns if c.startswith("variant_") and _varies(rows, c)]
    short = {c: c.removeprefix("variant_").split("/")[-1] for c in variants}
    if len(set(short.values())) < len(short):  # Guard/Goal and Prisoner/Goal: keep the role
        short = {c: c.removeprefix("variant_") for c in variants}
    show_models = any(_varies(rows, c) for c in llm_columns)
    show_agents = any(_varies(rows, c) for c in agent_columns)
    labels: dict[str, str] = {}
    for key, row in first.items():
        parts = []
        if show_models:
            parts.append(_models(row, llm_columns))
        if show_agents:
            parts.append(
                " ".join(f"{c.removeprefix('agents_')}={row.get(c) or 0}" for c in agent_columns)
            )
        for column, name in (
            ("manager_llm", "manager"),
            ("summarizer_llm", "summarizer"),
            ("days", "days"),
            ("speaker_method", "speaker"),
        ):
            if _varies(rows, column):
                value = row.get(column)
                parts.append(f"{name}={'none' if value is None else value}")
        if variants:
            parts.append(" ".join(f"{short[c]}={row.get(c) or '(default)'}" for c in variants))
        labels[key] = " · ".join(parts) or str(row.get("cell_label") or key)
    seen = Counter(labels.values())
    return {k: f"{v} · cell {k}" if seen[v] > 1 else v for k, v in labels.items()}
