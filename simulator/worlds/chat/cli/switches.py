"""The chat switches as the run header and a sweep's plan print them."""

from __future__ import annotations

from simulator.worlds.chat.domain.profile import profile_of

CLEANING_NOTES = {
    "speakers_echoes": "recited instructions and invented day headers are left out of the clean "
    "text too; the raw replies are kept",
    "none": "replies are kept whole, lines written for other speakers included, as the reference "
    "tool kept them",
}
FORMAT_NOTES = {
    "name_field": "each other speaker's turn is its own message, the raw text with the speaker "
    "in the message's name field, as autogen's GroupChat sent it",
}


def switch_lines(reply_cleaning: str, speaker_format: str) -> list[str]:
    """One line per chat switch not at its default, after the profile they make up; none at
    the defaults, so the default header is as it was before the switches existed."""
    lines = []
    profile = profile_of({"reply_cleaning": reply_cleaning, "speaker_format": speaker_format})
    if profile not in (None, "default"):
        lines.append(f"profile: {profile}")
    if reply_cleaning != "speakers":
        lines.append(f"reply_cleaning: {reply_cleaning} ({CLEANING_NOTES[reply_cleaning]})")
    if speaker_format != "prefix":
        lines.append(f"speaker_format: {speaker_format} ({FORMAT_NOTES[speaker_format]})")
    return lines
