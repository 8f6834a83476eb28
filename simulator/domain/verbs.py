"""Verb forms for `<ROLE_VERB_X>` placeholders: ours take the third-person singular ("MAKES"),
the reference tool's took the base form ("MAKE"). Both the importer and the validator need to
tell them apart and convert one into the other."""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


MODALS = frozenset(
    {"can", "could", "will", "would", "shall", "should", "may", "might", "must", "ought"}
)
IRREGULAR_SINGULAR = {"be": "is", "have": "has", "do": "does", "go": "goes"}
# Past forms are the same for singular and plural; they are never "base forms" to fix.
IRREGULAR_PAST = _words(
    "had made went was were did said took got came saw knew thought told gave found felt left "
    "kept held brought began ran wrote stood heard meant paid sat spoke led grew lost fell sent "
    "built understood drew broke spent rose drove bought wore chose let set put cut hit shut "
    "hurt cost quit read became forgot forgave won fought caught taught sought slept swam sang "
    "drank ate threw flew hid shook woke struck stole dealt sold shot fed fled bent lent bit dug "
    "hung rang sank sprang spun stuck stung swung tore wept froze rode shone withdrew overcame "
    "beat bound bled bred clung crept knelt leapt lit met laid lay meant slid spat split spread "
    "sped swore swept stank strove thrust wound"
)
# Base forms that end like a past form ("-ed") or like a third-person form ("-s").
BASE_ENDING_ED = _words(
    "need feed heed seed weed bleed breed speed exceed proceed succeed shed wed embed shred bed"
)
BASE_ENDING_S = _words("focus bias gas alias canvas chorus nonplus")


def third_person_singular(base: str) -> str:
    """'make' -> 'makes', 'watch' -> 'watches', 'carry' -> 'carries', 'have' -> 'has'.

    Only the first word changes, so 'look after' -> 'looks after'. A verb that is not a base
    form ('makes', 'can', 'made') comes back unchanged, so converting twice is harmless.
    """
    first, _, rest = base.partition(" ")
    lower = first.lower()
    if not is_base_form(lower):
        return base
    if lower in IRREGULAR_SINGULAR:
        word = IRREGULAR_SINGULAR[lower]
    elif lower.endswith(("s", "sh", "ch", "x", "z")) or (
        lower.endswith("o") and not lower.endswith("oo")
    ):
        word = lower + "es"
    elif lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        word = lower[:-1] + "ies"
    else:
        word = lower + "s"
    if first.isupper():
        word = word.upper()
    return word + (f" {rest}" if rest else "")


def is_base_form(verb: str) -> bool:
    """True when `verb`'s first word is plainly a base form ('make'), not 'makes', a modal
    ('can') or a past form ('made', 'went'): that is the reference tool's convention."""
    first = verb.split(" ", 1)[0].lower()
    if not first.isalpha() or first in MODALS or first in IRREGULAR_PAST:
        return False
    if first in IRREGULAR_SINGULAR or first in BASE_ENDING_ED or first in BASE_ENDING_S:
        return True
    if first.endswith("ed"):
        return False
    if first.endswith("s"):
        # 'makes', 'is', 'has', 'does'; a base form ending in s ('pass', 'miss') ends in 'ss'
        return first.endswith("ss")
    return True
