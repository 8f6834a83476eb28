"""Chat profiles: named sets of the switches that decide how a chat reaches its models.

`default` is this tool's own choices; `reference` is how the reference tool (autogen's GroupChat,
from 2024-05-30 on) ran a chat: replies kept whole, other speakers in the message's `name` field.
The per-model sampling of a profile lives with the experiment's LLM entries, not here.
"""

from __future__ import annotations

from typing import Literal, get_args

ChatProfile = Literal["default", "reference"]
PROFILE_NAMES: tuple[str, ...] = get_args(ChatProfile)

# profile -> the switches it fixes; the switches' own defaults are the `default` profile.
PROFILES: dict[str, dict[str, str]] = {
    "default": {"reply_cleaning": "speakers", "speaker_format": "prefix"},
    "reference": {"reply_cleaning": "none", "speaker_format": "name_field"},
}
SWITCHES: tuple[str, ...] = ("reply_cleaning", "speaker_format")


def profile_switches(profile: str) -> dict[str, str]:
    """The switch values of `profile` (a copy, so callers may update it)."""
    return dict(PROFILES[profile])


def profile_of(switches: dict[str, str]) -> str | None:
    """The profile whose switches these are, or None when they mix two."""
    for name, values in PROFILES.items():
        if all(switches.get(k, PROFILES["default"][k]) == v for k, v in values.items()):
            return name
    return None
