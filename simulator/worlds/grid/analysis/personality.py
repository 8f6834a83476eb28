"""The personality test's results (domain/personality.py): each agent's type before step 1 and
after the last step, and the run's table of types as Takata et al. (2024, Table 2 and Figure
11E) tabulate them: how many agents changed type, and how many hold each type at each time.

Read from the run document (`personality`, stored with the final status): a run cut short
before its end has no stored test, and reads as not tested. An answer that named neither A nor
B counts the scale's middle in the score (the inventory's `unanswered`) and is counted apart.
"""

from __future__ import annotations

from collections import Counter

from simulator.worlds.grid.analysis.runs import GridRun
from simulator.worlds.grid.domain.personality import WHEN, load_inventory


def personality_measures(run: GridRun) -> dict | None:
    """Per agent and time: type, scale scores, letter shares and fallbacks; per time: the
    count of each type; and how many agents changed type. None for a run without the test."""
    asked = run.spec.get("personality")
    if asked is None:
        return None
    inventory = load_inventory(asked.get("inventory") or "oejts")
    names = run.names
    types: dict[str, dict[str, str | None]] = {n: dict.fromkeys(WHEN) for n in names}
    scores: dict[str, dict[str, dict]] = {n: {} for n in names}
    shares: dict[str, dict[str, dict]] = {n: {} for n in names}
    fallbacks: dict[str, dict[str, int]] = {n: {} for n in names}
    for test in run.doc.get("personality") or []:
        name, when, choices = test["agent"], test["when"], test["choices"]
        if name not in types or len(choices) != len(inventory.items):
            continue
        types[name][when] = inventory.type_of(choices)
        scores[name][when] = inventory.score(choices)
        shares[name][when] = inventory.letter_shares(choices)
        fallbacks[name][when] = sum(c is None for c in choices)
    counts = {
        when: dict(Counter(t[when] for t in types.values() if t[when] is not None)) for when in WHEN
    }
    both = [t for t in types.values() if t["first"] is not None and t["last"] is not None]
    tested = any(t[when] for t in types.values() for when in WHEN)
    return {
        "inventory": inventory.name,
        "at": list(asked.get("at") or WHEN),
        "types": types,
        "scores": scores,
        "letter_shares": shares,
        "fallbacks": fallbacks,
        "counts": counts,
        "changed": sum(t["first"] != t["last"] for t in both) if both else None,
        "compared": len(both),
        "fallbacks_total": sum(sum(f.values()) for f in fallbacks.values()) if tested else None,
    }


def personality_summary(found: dict | None) -> dict:
    """The scalar figures of `measures`: agents whose type changed, distinct types at each
    time, answers that named neither letter (None where the run took no test)."""
    found = found or {}
    counts = found.get("counts") or {}
    return {
        "personality_changed": found.get("changed"),
        "personality_types_first": len(counts["first"]) if counts.get("first") else None,
        "personality_types_last": len(counts["last"]) if counts.get("last") else None,
        "personality_fallbacks": found.get("fallbacks_total"),
    }


def personality_rows(run: GridRun, found: dict | None) -> list[dict]:
    """The export's `grid_personality` table: one row per agent and time tested, scalars only
    (each scale's score, each letter's share of the answered items)."""
    if not found:
        return []
    rows = []
    for index, name in enumerate(run.names):
        for when in WHEN:
            kind = found["types"][name][when]
            if kind is None:
                continue
            shares = found["letter_shares"][name][when]
            rows.append(
                {
                    "conversation_id": run.id,
                    "cell_key": run.cell_key,
                    "repetition": run.repetition,
                    "inventory": found["inventory"],
                    "agent": name,
                    "agent_index": index,
                    "when": when,
                    "type": kind,
                    **{f"score_{k}": v for k, v in found["scores"][name][when].items()},
                    **{f"share_{k}": v for k, v in shares.items()},
                    "fallbacks": found["fallbacks"][name][when],
                    "changed": (
                        None
                        if None in found["types"][name].values()
                        else found["types"][name]["first"] != found["types"][name]["last"]
                    ),
                }
            )
    return rows
