"""`grid_measures(store, run_ids)`: every grid measure per run and per sweep cell.

One pass over the runs (a batch at a time), each analysed whole (`analyse_run`: moves,
clusters, hashtags, text, top words), then reduced to the scalar `SUMMARY` figures and a few
series; cells average them with the chat measures' mean and 95% interval, so `llm-sim
measures` reads a grid sweep the way it reads a chat one.
"""

from __future__ import annotations

from typing import Any

from simulator.analysis.spend import SPEND_MEASURES, spend_measures
from simulator.analysis.world_cells import mean_series, summarise_cells
from simulator.errors import UserError
from simulator.worlds.grid.analysis.clusters import cluster_measures
from simulator.worlds.grid.analysis.emotions import (
    EMOTIONS,
    emotion_measures,
    emotion_note,
    emotion_summary,
)
from simulator.worlds.grid.analysis.hallucinations import hallucination_measures
from simulator.worlds.grid.analysis.hashtags import hashtag_measures
from simulator.worlds.grid.analysis.moves import move_measures, pooled_histogram
from simulator.worlds.grid.analysis.party import party_measures
from simulator.worlds.grid.analysis.party_paper import paper_summary
from simulator.worlds.grid.analysis.personality import personality_measures, personality_summary
from simulator.worlds.grid.analysis.runs import GridRun, load_runs
from simulator.worlds.grid.analysis.text import (
    Embedder,
    packaged_embedder,
    text_measures,
    top_words,
)
from simulator.worlds.grid.domain.rules import MOVES

PACKAGED = "packaged"  # `embed=PACKAGED`: the packaged sentence model, when installed
SUMMARY: dict[str, str] = {
    **{f"share_{m}": f"share of move replies that chose {m}" for m in MOVES},
    "share_fallback": "share of move replies naming no command (not counted as stay)",
    "fallbacks": "move replies naming no command (the agent did not move; not a stay)",
    "stay_at_step_1": "agents that chose stay at step 1 (fallbacks not included)",
    "mean_clusters": "mean DBSCAN cluster count over t = 0..T",
    "final_clusters": "clusters after the last stored step",
    "final_clustered_share": "share of agents in a cluster after the last step",
    "largest_final_cluster": "agents in the largest cluster after the last step",
    "unique_hashtags": "distinct hashtags in the run's messages",
    "longest_hashtag_lifespan": "longest run of consecutive steps one hashtag appeared",
    "widest_hashtag_spread": "most agents that used one hashtag",
    "mean_message_msd": "mean over steps of messages' mean squared displacement from step 1",
    "final_message_msd": "messages' mean squared displacement at the last stored step",
    "mean_memory_msd": "the same for memories",
    "final_memory_msd": "memories' mean squared displacement at the last stored step",
    "mean_message_dispersion": "mean over steps of messages' mean squared distance from centroid",
    "final_message_dispersion": "message dispersion at the last stored step",
    "mean_memory_dispersion": "the same for memories",
    "final_memory_dispersion": "memory dispersion at the last stored step",
    "hallucinated_messages": "messages naming an object the world lacks (hallucination_words)",
    "hallucination_share": "hallucinated messages / all messages",
    "hallucinations_in_clusters_share": "hallucinated messages sent from inside a cluster / all",
    "hallucination_words_found": "distinct listed words the messages named",
    "hallucinations_shared_in_clusters": "words two agents of one cluster named in one step",
    "steps_stored": "steps with stored rows",
    **SPEND_MEASURES,
    # a run with a `probe` (the party): interviews checked against memory
    "news_known_share": "share of agents who said they knew the news and whose memory names it",
    "news_said_yes": "agents who said yes to the news question",
    "news_unbacked_yes": "yes answers to the news question with no memory naming it",
    "news_unclear": "news answers that said neither yes nor no (read as no)",
    "news_heard": "agents who heard (or said) a message naming the news",
    "relationship_density": "pairs who both know each other (backed by memory) / all pairs",
    "attended": "agents within the radius of the gathering's place during its hours",
    # the party as Park et al. (2023, section 7) report it (analysis/grid/party_paper.py)
    "news_known_at_start": "agents whose seed memories name the news",
    "news_known_at_start_share": "share of agents whose seed memories name the news",
    "news_known": "agents who said they knew the news and whose memory names it",
    "relationship_density_at_start": "pairs whose seed memories name each other / all pairs",
    "interview_answers": "interview answers (the news question and every pair)",
    "hallucinated_answers": "interview answers that said yes with no memory behind them",
    "hallucinated_answer_share": "hallucinated answers / all interview answers",
    "invited": "agents who heard of the news before the gathering (not knowing it at the start)",
    "invited_attended": "invited agents who attended the gathering",
    # emotion per message (the NRC Emotion Lexicon; analysis/grid/emotions.py)
    **{f"emotion_{e}": f"mean {e} score of messages with an NRC emotion word" for e in EMOTIONS},
    "emotion_none_share": "share of messages with no NRC emotion word (no emotion score)",
    # the personality test at the first and last step (analysis/grid/personality.py)
    "personality_changed": "agents whose type after the last step differs from before step 1",
    "personality_types_first": "distinct types before step 1",
    "personality_types_last": "distinct types after the last step",
    "personality_fallbacks": "test answers that named neither A nor B (scored as the middle)",
}
SERIES = (
    "clusters",
    "stay",
    "unique_hashtags",
    "message_msd",
    "memory_msd",
    "message_dispersion",
    "memory_dispersion",
    "hallucinations",  # messages naming a listed word, per step
    "hallucinations_in_clusters",  # those sent from inside a cluster
    "news_remembered",  # a probed run's: agents whose memory names the news, t = 0..T
    "news_heard",  # agents who heard (or said) a message naming it, t = 0..T
    *(f"emotion_{e}" for e in EMOTIONS),  # mean score of the step's messages, per emotion
)


def resolve_embedder(embed: Embedder | str | None) -> tuple[Embedder | None, list[str]]:
    """The embedder to use and notes for the reader: None skips the text measures, PACKAGED
    loads the packaged model or says what to install."""
    if embed is None:
        return None, ["text measures skipped (no embedder)"]
    if embed == PACKAGED:
        try:
            return packaged_embedder(), []
        except UserError as exc:
            return None, [f"{exc.message}; {exc.fix}" if exc.fix else exc.message]
    return embed, []  # type: ignore[return-value]


def analyse_run(run: GridRun, embed: Embedder | None, store: Any = None) -> dict:
    """Everything measured on one run (the report draws from this); with the store, a probed
    run's party measures too (they read its memory streams)."""
    clusters = cluster_measures(run)
    return {
        "run": run,
        "party": party_measures(store, run) if store is not None else None,
        "moves": move_measures(run),
        "clusters": clusters,
        "hashtags": hashtag_measures(run),
        "hallucinations": hallucination_measures(run, clusters),
        "text": text_measures(run, embed) if embed is not None and run.rows else None,
        "top_words": top_words(run),
        "emotions": emotion_measures(run),
        "personality": personality_measures(run),
    }


def summary_of(analysis: dict) -> dict:
    """The run's scalar figures (`SUMMARY`) with its identity, and its series over steps."""
    run: GridRun = analysis["run"]
    moves, clusters, tags = analysis["moves"], analysis["clusters"], analysis["hashtags"]
    seen = analysis["hallucinations"]
    text = analysis["text"] or {}
    news = (analysis.get("party") or {}).get("news") or {}
    emotions = analysis.get("emotions") or {}
    row: dict[str, Any] = {
        "conversation_id": run.id,
        "cell_key": run.cell_key,
        "cell_label": run.cell_label,
        "cell": run.cell,
        "repetition": run.repetition,
        "status": run.status,
        **{f"share_{m}": moves["shares"][m] for m in MOVES},
        "share_fallback": moves["shares"]["fallback"],
        "fallbacks": moves["fallbacks"],
        "stay_at_step_1": moves["stay_per_step"][0] if moves["stay_per_step"] else None,
        "mean_clusters": clusters["mean_count"],
        "final_clusters": clusters["final_count"],
        "final_clustered_share": clusters["final_clustered_share"],
        "largest_final_cluster": clusters["largest_final"],
        "unique_hashtags": tags["unique"],
        "longest_hashtag_lifespan": tags["longest_lifespan"],
        "widest_hashtag_spread": tags["widest_spread"],
        **{name: text.get(name) for name in SUMMARY if name.endswith(("_msd", "_dispersion"))},
        "hallucinated_messages": seen["hallucinated"],
        "hallucination_share": seen["share"],
        "hallucinations_in_clusters_share": seen["in_clusters_share"],
        "hallucination_words_found": seen["words_found"],
        "hallucinations_shared_in_clusters": seen["shared_in_clusters"],
        "steps_stored": run.last_step,
        **spend_measures(run.doc),
        **party_summary(analysis.get("party")),
        **emotion_summary(analysis.get("emotions")),
        **personality_summary(analysis.get("personality")),
    }
    row["moves"] = moves["overall"]
    row["moves_per_agent"] = moves["per_agent"]
    row["series"] = {
        "clusters": clusters["count"],
        "stay": moves["stay_per_step"],
        "unique_hashtags": tags["unique_per_step"],
        "message_msd": text.get("message_msd"),
        "memory_msd": text.get("memory_msd"),
        "message_dispersion": text.get("message_dispersion"),
        "memory_dispersion": text.get("memory_dispersion"),
        "hallucinations": seen["per_step"],
        "hallucinations_in_clusters": seen["in_clusters_per_step"],
        "news_remembered": news.get("remembered_by_step"),
        "news_heard": news.get("heard_by_step"),
        **{f"emotion_{e}": (emotions.get("per_step") or {}).get(e) for e in EMOTIONS},
    }
    row["hashtags"] = [{k: v for k, v in t.items() if k != "steps"} for t in tags["tags"]]
    row["hallucination_words"] = seen["words_list"]  # the list the run was measured with
    row["hallucinations"] = [{k: v for k, v in w.items() if k != "steps"} for w in seen["words"]]
    row["hallucinations_per_agent"] = seen["per_agent"]
    row["top_words"] = {name: [w for w, _ in top] for name, top in analysis["top_words"].items()}
    row["emotion_dominant_shares"] = emotions.get("dominant_shares")
    personality = analysis.get("personality")
    row["personality"] = (
        {k: personality[k] for k in ("inventory", "types", "counts", "letter_shares")}
        if personality
        else None
    )
    return row


def party_summary(party: dict | None) -> dict:
    """The party's scalar figures (None where the run's probe did not ask for them)."""
    party = party or {}
    news = party.get("news") or {}
    heard = news.get("heard_by_step") or []
    return {
        "news_known_share": news.get("known_share"),
        "news_said_yes": news.get("said_yes") if news.get("asked") else None,
        "news_unbacked_yes": news.get("unbacked_yes") if news.get("asked") else None,
        "news_unclear": news.get("unclear") if news.get("asked") else None,
        "news_heard": heard[-1] if heard else None,
        "relationship_density": (party.get("relationships") or {}).get("density"),
        "attended": (party.get("attendance") or {}).get("count"),
        **paper_summary(party),
    }


def cell_summaries(rows: list[dict]) -> list[dict]:
    """One entry per cell (first-seen order): n runs, `<measure>_mean/_ci_low/_ci_high`, the
    pooled move histogram and each series averaged step by step."""
    return summarise_cells(
        rows,
        SUMMARY,
        # its factors as numbers, for figures against them
        head=lambda members: {"cell": members[0].get("cell")},
        tail=lambda members: {
            "moves": pooled_histogram([r["moves"] for r in members]),
            "series": {name: mean_series([r["series"][name] for r in members]) for name in SERIES},
        },
    )


def grid_measures(store: Any, run_ids: list[str], embed: Embedder | str | None = PACKAGED) -> dict:
    """Per run (`runs`: SUMMARY figures, series, move histograms, hashtags, top words) and per
    sweep cell (`cells`), with `notes` (e.g. text measures left out: what to install)."""
    embedder, notes = resolve_embedder(embed)
    notes += emotion_note()
    rows = [summary_of(analyse_run(run, embedder, store)) for run in load_runs(store, run_ids)]
    return {"measures": SUMMARY, "runs": rows, "cells": cell_summaries(rows), "notes": notes}
