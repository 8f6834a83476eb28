"""Invisible and control characters made visible: a reviewer must see what the model wrote.

A reply holding U+202E (RIGHT-TO-LEFT OVERRIDE) reorders the text after it on screen; zero-width
characters, BIDI isolates and C0/C1 controls hide or disguise text. The report and the terminal
transcript show each as a marker such as ⟨U+202E⟩ instead. Newline and tab are kept as they are;
variation selectors are kept too, since emoji depend on them. One list serves Python (terminal,
server-side HTML) and the report's script, so both mark the same characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# (first, last) code points, inclusive
INVISIBLE_RANGES: tuple[tuple[int, int], ...] = (
    (0x0000, 0x0008),  # C0 controls before tab
    (0x000B, 0x001F),  # C0 controls after newline (carriage return included)
    (0x007F, 0x009F),  # DEL and the C1 controls
    (0x00AD, 0x00AD),  # soft hyphen
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x061C, 0x061C),  # Arabic letter mark
    (0x115F, 0x1160),  # Hangul fillers
    (0x17B4, 0x17B5),  # Khmer inherent vowels
    (0x180B, 0x180F),  # Mongolian variation selectors and vowel separator
    (0x200B, 0x200F),  # zero width space, non-joiner, joiner; LRM, RLM
    (0x2028, 0x202E),  # line/paragraph separators; LRE, RLE, PDF, LRO, RLO
    (0x2060, 0x206F),  # word joiner, invisible operators, isolates LRI RLI FSI PDI, deprecated
    (0x3164, 0x3164),  # Hangul filler
    (0xFEFF, 0xFEFF),  # zero width no-break space (BOM)
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF9, 0xFFFB),  # interlinear annotation
    (0x1D173, 0x1D17A),  # musical formatting
    (0xE0000, 0xE007F),  # tag characters
)

INVISIBLE = re.compile("[" + "".join(f"\\U{a:08X}-\\U{b:08X}" for a, b in INVISIBLE_RANGES) + "]")


def marker(char: str) -> str:
    """⟨U+202E⟩ for one invisible character."""
    return f"⟨U+{ord(char):04X}⟩"


def visible(text: str) -> str:
    """The text with every invisible character replaced by its marker."""
    return INVISIBLE.sub(lambda m: marker(m.group()), text)


def pieces(text: str) -> Iterator[tuple[str, bool]]:
    """(chunk, is_marker) in order, so a renderer can style markers apart from the text."""
    start = 0
    for match in INVISIBLE.finditer(text):
        if match.start() > start:
            yield text[start : match.start()], False
        yield marker(match.group()), True
        start = match.end()
    if start < len(text):
        yield text[start:], False


def js_class() -> str:
    """The same set as a JavaScript character class (use with the `u` flag)."""
    return "[" + "".join(f"\\u{{{a:X}}}-\\u{{{b:X}}}" for a, b in INVISIBLE_RANGES) + "]"
