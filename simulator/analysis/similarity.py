"""Text checks of the built-in measures: refusals and near-duplicate messages.

The near-duplicate test is difflib's ratio, which is quadratic in Python; it is guarded by
exact upper bounds so that the answer never changes and unlike texts cost a fraction of it.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

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
_SPACE = re.compile(r"\s+")


def normalise(text: str | None) -> str:
    return _SPACE.sub(" ", (text or "").replace("\u2019", "'").lower()).strip()


def is_refusal(text: str | None) -> bool:
    clean = normalise(text)
    return any(marker in clean for marker in REFUSAL_MARKERS)


def near_duplicate(a: str | None, b: str | None) -> bool:
    """Two messages saying (almost) the same thing; two empty texts are not a repeat."""
    return near_duplicate_clean(normalise(a)[:2000], normalise(b)[:2000])


def near_duplicate_clean(left: str, right: str) -> bool:
    """`near_duplicate` of normalised texts. difflib's ratio() is quadratic in Python; it runs
    only when two cheaper upper bounds of it (lengths, then the longest common subsequence:
    difflib's matching blocks are a common subsequence) reach the threshold, so the answer
    is the same and unlike texts cost a fraction of it."""
    if not left or not right:
        return False
    if left == right:
        return True
    total = len(left) + len(right)
    if 2.0 * min(len(left), len(right)) / total < NEAR_DUPLICATE_RATIO:  # real_quick_ratio
        return False
    if 2.0 * lcs_bound(left, right, NEAR_DUPLICATE_RATIO * total / 2.0) / total < (
        NEAR_DUPLICATE_RATIO
    ):
        return False
    matcher = SequenceMatcher(None, left, right, autojunk=False)
    return matcher.quick_ratio() >= NEAR_DUPLICATE_RATIO and matcher.ratio() >= NEAR_DUPLICATE_RATIO


def lcs_bound(a: str, b: str, needed: float = 0.0) -> int:
    """The length of the longest common subsequence of `a` and `b` (bit-parallel, Hyyrö 2004),
    or an upper bound of it below `needed` once it can no longer reach `needed`."""
    if len(a) > len(b):
        a, b = b, a  # loop over the shorter, bits over the longer
    masks: dict[str, int] = {}
    for i, char in enumerate(b):
        masks[char] = masks.get(char, 0) | (1 << i)
    full = (1 << len(b)) - 1
    row = full
    for i, char in enumerate(a, start=1):
        match = row & masks.get(char, 0)
        row = ((row + match) | (row - match)) & full
        if i % 32 == 0 and len(b) - row.bit_count() + len(a) - i < needed:
            return len(b) - row.bit_count() + len(a) - i  # even all the rest cannot reach it
    return len(b) - row.bit_count()
