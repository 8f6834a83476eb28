"""Built-in measures: per message, per conversation, and per sweep cell with a 95% CI.

Pure functions over the rows of `tables.load_tables` (or stored documents with the same field
names), so they are tested on hand-built transcripts and reused by the CLI and the report.

A fork (domain/fork.py) stores only its own messages, from its fork point on: its measures
cover those (the researcher's edited message included, with no latency or tokens: no model
wrote it); `parent_id` and `fork_at` say so on its row. The report's branch view measures the
parent from the same point (`from_point`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

from simulator.analysis.similarity import (  # noqa: F401 (re-exported: measures' vocabulary)
    NEAR_DUPLICATE_RATIO,
    REFUSAL_MARKERS,
    is_refusal,
    lcs_bound,
    near_duplicate,
    near_duplicate_clean,
    normalise,
)
from simulator.analysis.spend import SPEND_MEASURES, calls_measures
from simulator.analysis.tables import to_number
from simulator.domain.fork import EDIT_PURPOSE, ForkPoint

ID_COLUMNS = (
    "conversation_id",
    "cell_key",
    "cell_label",
    "repetition",
    "status",
    "parent_id",  # a fork's parent (its measures start at fork_at); empty otherwise
    "fork_at",
)

MEASURES: dict[str, str] = {
    "messages": "messages stored (a fork's own: from its fork point on)",
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
    "calls": "model calls in the ledger, a memory stream's embedding requests included (every "
    "attempt; a fork's edit is not a call)",
    "call_failure_rate": "share of LLM calls that returned an error",
    "latency_s": "mean seconds per message (the successful call that produced it)",
    "tokens_in": "prompt tokens over all calls",
    "tokens_out": "completion tokens over all calls",
    "tokens_out_per_message": "mean completion tokens per message",
    **SPEND_MEASURES,
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


def t_quantile(df: int) -> float:
    """The 97.5% quantile of Student's t with `df` degrees of freedom; 1.96 past 120."""
    if df < 1:
        raise ValueError("df must be at least 1")
    if df > 120:
        return 1.96
    return T95[max(k for k in T95 if k <= df)]


def message_measures(message: dict, clean: str | None = None) -> dict:
    """Measures of one message (a stored message or a `messages` table row); `clean`: its
    text normalised, when the caller has it already."""
    text = message.get("text") or ""
    clean = normalise(text) if clean is None else clean
    return {
        "words": len(text.split()),
        "chars": len(text),
        "trimmed": int(bool(message.get("trimmed"))),
        "empty": int(bool(message.get("empty")) or not text.strip()),
        "refusal": int(any(marker in clean for marker in REFUSAL_MARKERS)),
        "fallback": int(bool(message.get("speaker_fallback"))),
        # a researcher's edit took no model time: left out of the mean, not counted as 0
        "latency_s": None if message.get("edited") else message.get("latency_s"),
        "tokens_in": message.get("tokens_in"),
        "tokens_out": message.get("tokens_out"),
    }


def from_point(rows: Iterable[dict], point: ForkPoint) -> list[dict]:
    """Messages or calls at or after a fork point (rows naming no place are left out): what
    a parent said from where its branches start, measured beside them."""
    return [
        r
        for r in rows
        if r.get("day") is not None and not point.holds(int(r["day"]), int(r.get("index") or 0))
    ]


def _mean(values: list) -> float | None:
    present = [float(v) for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _group(rows: list[dict], key: str = "conversation_id") -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        grouped[row.get(key)].append(row)
    return grouped


def roles_of(conversations: list[dict]) -> list[str]:
    """The roles with an `agents_<Role>` column, in first-seen order."""
    return list(
        dict.fromkeys(
            k.removeprefix("agents_") for c in conversations for k in c if k.startswith("agents_")
        )
    )


def conversation_measures(tables: dict[str, list[dict]]) -> list[dict]:
    """One row per conversation: ids, status and every measure (see MEASURES)."""
    messages = _group(sorted(tables.get("messages", []), key=lambda m: m.get("seq") or 0))
    calls = _group(tables.get("calls", []))
    scores = _group(tables.get("scores", []))
    shared = _scorers_with_several_users(tables.get("scores", []))
    conversations = tables.get("conversations", [])
    roles = roles_of(conversations)
    return [
        finish_record(
            conversation_record(
                conv,
                messages.get(conv["conversation_id"], []),
                calls.get(conv["conversation_id"], []),
                scores.get(conv["conversation_id"], []),
            ),
            roles,
            shared,
        )
        for conv in conversations
    ]


# a conversation's measures, compact: what a scope of 100,000 conversations keeps in memory
Record = tuple[tuple, tuple, tuple, tuple]
HEAD = ("messages", "words", "chars")
TAIL = (
    "trimmed_share",
    "empty_share",
    "refusal_share",
    "repetition_share",
    "fallback_share",
    "latency_s",
    "failed",
    "calls",
    "call_failure_rate",
    "tokens_in",
    "tokens_out",
    "tokens_out_per_message",
    *SPEND_MEASURES,
)


def conversation_record(conv: dict, messages: list[dict], calls: list[dict], scores: list[dict]):
    """The measures of one conversation (its messages in seq order) as a `Record`: ids, fixed
    measures (HEAD + TAIL), (role, words, chars) per role that spoke, score means."""
    head, roles, tail = _message_part(messages)
    calls = [c for c in calls if c.get("purpose") != EDIT_PURPOSE]  # no model was called
    failures = sum(1 for c in calls if c.get("error") is not None)
    tail += (
        int(conv.get("status") == "failed"),
        len(calls),
        failures / len(calls) if calls else None,
        sum(c.get("tokens_in") or 0 for c in calls),
        sum(c.get("tokens_out") or 0 for c in calls),
        _mean([m.get("tokens_out") for m in messages]) if messages else None,
        *calls_measures(calls),
    )
    ids = tuple(conv.get(k) for k in ID_COLUMNS)
    return ids, head + tail, roles, _score_part(scores)


def finish_record(record: Record, roles: list[str], shared: set[str]) -> dict:
    """The conversation's row: `roles` of the scope, `_by_<user>` columns of `shared` scorers."""
    ids, fixed, spoke, scores = record
    row = dict(zip(ID_COLUMNS, ids, strict=True))
    row.update(zip(HEAD, fixed[: len(HEAD)], strict=True))
    by_role = {role: (words, chars) for role, words, chars in spoke}
    for role in roles:
        row[f"words_{role}"], row[f"chars_{role}"] = by_role.get(role, (None, None))
    row.update(zip(TAIL, fixed[len(HEAD) :], strict=True))
    row.update((name, mean) for name, scorer, mean in scores if scorer is None or scorer in shared)
    return row


def _message_part(messages: list[dict]) -> tuple[tuple, tuple, tuple]:
    clean = [normalise(m.get("text")) for m in messages]
    measured = [message_measures(m, c) for m, c in zip(messages, clean, strict=True)]
    n = len(measured)

    def share(name: str) -> float | None:
        return sum(x[name] for x in measured) / n if n else None

    head = (n, _mean([x["words"] for x in measured]), _mean([x["chars"] for x in measured]))
    spoken: dict = defaultdict(list)
    for message, x in zip(messages, measured, strict=True):
        spoken[message.get("role")].append(x)
    roles = tuple(
        (role, _mean([x["words"] for x in own]), _mean([x["chars"] for x in own]))
        for role, own in spoken.items()
        if isinstance(role, str)
    )
    short = [text[:2000] for text in clean]
    repeats = [near_duplicate_clean(short[i - 1], short[i]) for i in range(1, n)]
    tail = (
        share("trimmed"),
        share("empty"),
        share("refusal"),
        sum(repeats) / len(repeats) if repeats else None,
        share("fallback"),
        _mean([x["latency_s"] for x in measured]),
    )
    return head, roles, tail


def _scorers_with_several_users(scores: list[dict]) -> set[str]:
    users: dict[str, set] = defaultdict(set)
    for row in scores:
        users[row.get("scorer")].add(row.get("scored_by"))
    return {scorer for scorer, who in users.items() if len(who) > 1}


def _score_part(scores: list[dict]) -> tuple:
    """(name, scorer, mean) per `score_<scorer>_<field>`: the conversation's own value, else
    the mean over messages (pooled over users), scorer None; and per user
    (`..._by_<user>`, named scorer: kept only for scorers several users scored with)."""
    own: dict[tuple, list[float]] = defaultdict(list)
    per_message: dict[tuple, list[float]] = defaultdict(list)
    for row in scores:
        number = row.get("value_num", to_number(row.get("value")))
        if number is not None:
            kept = own if row.get("target_kind") == "conversation" else per_message
            name = f"score_{row['scorer']}_{row['field']}"
            kept[(name, None)].append(number)
            kept[(f"{name}_by_{row.get('scored_by') or 'unknown'}", row["scorer"])].append(number)
    merged = {**per_message, **own}
    ordered = sorted(merged.items(), key=_first_of_key)
    return tuple((name, scorer, sum(v) / len(v)) for (name, scorer), v in ordered)


def _first_of_key(item: tuple) -> str:
    return item[0][0]


def mean_ci(values: Iterable) -> tuple[float | None, float | None, float | None]:
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


def numeric_measures(rows: Iterable[dict]) -> list[str]:
    """Columns that hold a number in some row and nothing but numbers or None in all
    (one pass: rows may be generated)."""
    seen: dict[str, list[bool]] = {}  # name -> [a number somewhere, numbers or None only]
    for row in rows:
        for name, value in row.items():
            flags = seen.setdefault(name, [False, True])
            if isinstance(value, int | float):
                flags[0] = True
            elif value is not None:
                flags[1] = False
    return [n for n, (some, only) in seen.items() if some and only and n not in ID_COLUMNS]


def cell_measures(
    conversation_rows: list[dict], labels: dict[str, str] | None = None
) -> list[dict]:
    """One row per cell: n conversations and `m_mean`, `m_ci_low`, `m_ci_high` per measure;
    `label` is what tells the cell apart from the others (see `cell_labels`)."""
    names = numeric_measures(conversation_rows)
    grouped = _group(conversation_rows, "cell_key")
    return [cell_row(key, rows, names, labels) for key, rows in grouped.items()]


def cell_row(cell_key: str, rows: list[dict], names: list[str], labels: dict | None) -> dict:
    """One cell's row of `cell_measures` from its conversations' rows."""
    columns = {name: [r.get(name) for r in rows] for name in names}
    return cell_row_of_columns(cell_key, rows[0], len(rows), columns, labels)


def cell_row_of_columns(
    cell_key: str, first: dict, n: int, columns: dict[str, Sequence], labels: dict | None
) -> dict:
    """`cell_row` from the cell's first row, its size and each measure's values in row order
    (None or left out where a row has none): what a scope too large for its rows keeps."""
    stored = first.get("cell_label")
    out: dict = {
        "cell_key": cell_key,
        "cell_label": stored,
        "label": (labels or {}).get(cell_key) or stored or cell_key,
        "n": n,
    }
    if first.get("fork_at"):  # a cell of forks: measured from its fork point
        out["parent_id"], out["fork_at"] = first.get("parent_id"), first["fork_at"]
    for name, values in columns.items():
        mean, low, high = mean_ci(values)
        out[f"{name}_mean"], out[f"{name}_ci_low"], out[f"{name}_ci_high"] = mean, low, high
    return out
