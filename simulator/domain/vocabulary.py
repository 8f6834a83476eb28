"""Words several layers share, defined once: speaker methods, conversation statuses, and the
counters a conversation keeps. The store, the engine, services, analysis and the CLI import
them from here rather than spelling them again."""

from __future__ import annotations

from typing import Literal, get_args

SpeakerMethod = Literal["round_robin", "random", "role_alternating", "auto", "manual"]
SPEAKER_METHODS: tuple[str, ...] = get_args(SpeakerMethod)

# a conversation's life: stored pending, claimed running, then one of the last three
# ("interrupted" is resumable, like "pending")
ConversationStatus = Literal["pending", "running", "done", "failed", "interrupted"]
CONVERSATION_STATUSES: tuple[str, ...] = get_args(ConversationStatus)
FINISHED_STATUSES: tuple[str, ...] = ("done", "failed", "interrupted")

# what the recorder counts per conversation (simulator/engine/recorder.py); one table column each
COUNTER_NAMES: tuple[str, ...] = (
    "messages",
    "calls",
    "failed_calls",
    "tokens_in",
    "tokens_out",
    "trimmed",
    "empty",
    "fallbacks",
    "summaries",
)
