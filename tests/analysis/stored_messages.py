"""A stored message as the recorder writes it, for tests that build transcripts directly."""

from __future__ import annotations


def message_doc(conversation_id: str, seq: int, text: str, **extra: object) -> dict:
    """Day 1, guards on even seqs and prisoners on odd ones, clean text equal to the raw text."""
    role = "Guard" if seq % 2 == 0 else "Prisoner"
    return {
        "conversation_id": conversation_id,
        "day": 1,
        "index": seq,
        "seq": seq,
        "speaker": f"{role}_1",
        "role": role,
        "model": "mock:a",
        "text": text,
        "raw_text": text,
        "trimmed": False,
        "empty": False,
        **extra,
    }
