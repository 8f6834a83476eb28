"""Role-aware placeholders (`<GUARD_NOUN>`, `<PRISONER_VERB_MAKES>`) resolved for agent counts.

Grammar comes from inflect so irregular and multi-word role names read naturally
("child" -> "children's", "police officer" -> "police officers").
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import inflect

    from simulator.domain.experiment import Experiment, Role

PLACEHOLDER = re.compile(r"<([A-Z][A-Z0-9_]*)>")
ROLE_SUFFIXES = ("NOUN", "POSS", "NUM", "NUM_WORD", "PRON", "POSS_PRON")
GLOBAL_NAMES = ("AGENTS_NUM", "AGENTS_NUM_WORD", "ROLES_NUM", "ROLES_NUM_WORD")
VERB_MARK = "_VERB_"
POSSESSIVE_PRONOUNS = {"he": "his", "she": "her", "it": "its", "they": "their"}


@lru_cache(maxsize=1)
def _inflect() -> inflect.engine:
    """inflect, imported without typeguard's instrumentation.

    inflect decorates its engine with typeguard's `@typechecked`, which re-parses inflect's
    source 23 times at import (1.7 s on every CLI start). The checks are a debugging aid, so
    the decorator is swapped for the identity while inflect is imported; behaviour is unchanged.
    """
    import typeguard

    original = typeguard.typechecked

    def passthrough(target=None, **_options):
        return target if target is not None else (lambda inner: inner)

    typeguard.typechecked = passthrough
    try:
        import inflect
    finally:
        typeguard.typechecked = original
    return inflect.engine()


def known_placeholders(experiment: Experiment) -> list[str]:
    """Every fixed placeholder name an experiment offers (verbs are open-ended)."""
    names = list(GLOBAL_NAMES)
    for role in experiment.roles:
        names.extend(f"{role.tag}_{suffix}" for suffix in ROLE_SUFFIXES)
    return names


def validate_placeholders(experiment: Experiment) -> None:
    """Raise ValueError for the first unknown placeholder, naming its field and nearest match."""
    known = set(known_placeholders(experiment))
    verb_prefixes = tuple(f"{role.tag}{VERB_MARK}" for role in experiment.roles)
    for field, text in experiment.texts():
        for match in PLACEHOLDER.finditer(text):
            name = match.group(1)
            if name in known:
                continue
            if name.startswith(verb_prefixes) and _verb_of(name, verb_prefixes):
                continue
            candidates = sorted(known) + [f"{p}MAKES" for p in verb_prefixes]
            close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.5)
            hint = f" Did you mean <{close[0]}>?" if close else ""
            raise ValueError(
                f"unknown placeholder <{name}> in {field}.{hint} Known: "
                + ", ".join(f"<{n}>" for n in sorted(known))
                + ", and <ROLE_VERB_XXX> for a verb in its singular form"
            )


def _verb_of(name: str, prefixes: tuple[str, ...]) -> str | None:
    for prefix in prefixes:
        if name.startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix) :].lower().replace("_", " ")
    return None


def role_values(role: Role, count: int) -> dict[str, str]:
    """The fixed placeholders of one role for `count` agents."""
    engine = _inflect()
    noun = role.name.lower()
    plural = engine.plural_noun(noun) if count != 1 else noun
    possessive = f"{plural}'" if plural.endswith("s") and count != 1 else f"{plural}'s"
    pronoun = role.pronoun if count == 1 else "they"
    tag = role.tag
    return {
        f"{tag}_NOUN": plural,
        f"{tag}_POSS": possessive,
        f"{tag}_NUM": str(count),
        f"{tag}_NUM_WORD": engine.number_to_words(count),
        f"{tag}_PRON": pronoun,
        f"{tag}_POSS_PRON": POSSESSIVE_PRONOUNS[pronoun],
    }


def placeholder_values(experiment: Experiment, counts: Mapping[str, int]) -> dict[str, str]:
    """All fixed placeholders for a conversation with `counts` agents per role name."""
    engine = _inflect()
    values: dict[str, str] = {}
    total = 0
    for role in experiment.roles:
        count = _count_for(role.name, counts)
        total += count
        values.update(role_values(role, count))
    values["AGENTS_NUM"] = str(total)
    values["AGENTS_NUM_WORD"] = engine.number_to_words(total)
    values["ROLES_NUM"] = str(len(experiment.roles))
    values["ROLES_NUM_WORD"] = engine.number_to_words(len(experiment.roles))
    return values


def _count_for(role_name: str, counts: Mapping[str, int]) -> int:
    for name, count in counts.items():
        if name.lower() == role_name.lower():
            return count
    return 1


def resolve(text: str, experiment: Experiment, counts: Mapping[str, int]) -> str:
    """Replace every placeholder in `text`; verbs agree with their role's agent count."""
    values = placeholder_values(experiment, counts)
    verb_roles = {f"{r.tag}{VERB_MARK}": _count_for(r.name, counts) for r in experiment.roles}

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in values:
            return values[name]
        for prefix, count in verb_roles.items():
            verb = _verb_of(name, (prefix,))
            if verb:
                return verb if count == 1 else _inflect().plural_verb(verb)
        return match.group(0)

    return PLACEHOLDER.sub(substitute, text)
