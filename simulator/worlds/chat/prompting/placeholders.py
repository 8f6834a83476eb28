"""Role-aware placeholders (`<GUARD_NOUN>`, `<PRISONER_VERB_MAKES>`) resolved for agent counts.

Grammar comes from inflect so irregular and multi-word role names read naturally
("child" -> "children's", "police officer" -> "police officers"). Any placeholder takes a `_CAP`
suffix for a sentence start (`<GUARD_NUM_WORD_CAP>` -> "Two"), and a verb right after its role's
pronoun agrees with the pronoun, so a single guard called "they" reads "they have".
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from simulator.domain.plural import inflect_engine
from simulator.domain.verbs import is_base_form, third_person_singular

if TYPE_CHECKING:
    from simulator.worlds.chat.domain.experiment import Experiment

PLACEHOLDER = re.compile(r"<([A-Z][A-Z0-9_]*)>")
ROLE_SUFFIXES = ("NOUN", "POSS", "NUM", "NUM_WORD", "PRON", "POSS_PRON")
GLOBAL_NAMES = ("AGENTS_NUM", "AGENTS_NUM_WORD", "ROLES_NUM", "ROLES_NUM_WORD")
VERB_MARK = "_VERB_"
CAP = "_CAP"
POSSESSIVE_PRONOUNS = {"he": "his", "she": "her", "it": "its", "they": "their"}


class RoleLike(Protocol):
    """What placeholders read of a role (a domain `Role`, or a role still being typed)."""

    name: str
    pronoun: str
    tag: str


_inflect = inflect_engine  # the grammar engine, shared with every count shown to users


def known_placeholders(experiment: Experiment) -> list[str]:
    """Every fixed placeholder name an experiment offers, each also in its `_CAP` form (verbs
    are open-ended)."""
    names = list(GLOBAL_NAMES)
    for role in experiment.roles:
        names.extend(f"{role.tag}_{suffix}" for suffix in ROLE_SUFFIXES)
    return names + [f"{name}{CAP}" for name in names]


def validate_placeholders(experiment: Experiment, base_forms_allowed: bool = False) -> None:
    """Raise ValueError for the first unknown placeholder, naming its field and nearest match,
    or for a verb given in its base form (the reference tool's `<GUARD_VERB_MAKE>`), naming the
    third-person singular to write instead. `base_forms_allowed` is for experiments read back
    from the store: one saved before the check existed must still open (and run as it ran)."""
    known = set(known_placeholders(experiment))
    verb_prefixes = tuple(f"{role.tag}{VERB_MARK}" for role in experiment.roles)
    for field, text in experiment.texts():
        for match in PLACEHOLDER.finditer(text):
            name = match.group(1)
            if name in known:
                continue
            verb = _verb_placeholder(name, verb_prefixes)
            if verb is None:
                raise ValueError(_unknown_message(name, field, known, verb_prefixes))
            prefix, words, cap = verb
            if is_base_form(words) and not base_forms_allowed:
                raise ValueError(_base_form_message(experiment, name, field, prefix, words, cap))


def _unknown_message(name: str, field: str, known: set[str], verb_prefixes: tuple[str, ...]) -> str:
    candidates = sorted(known) + [f"{p}MAKES" for p in verb_prefixes]
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.5)
    hint = f" Did you mean <{close[0]}>?" if close else ""
    plain = sorted(n for n in known if not n.endswith(CAP))
    tag = verb_prefixes[0][: -len(VERB_MARK)] if verb_prefixes else "ROLE"
    return (
        f"unknown placeholder <{name}> in {field}.{hint} Known: "
        + ", ".join(f"<{n}>" for n in plain)
        + f", each also with {CAP} for a capital first letter at a sentence start"
        f" (<{tag}_NOUN{CAP}>), and <ROLE_VERB_XXX> for a verb in its third-person singular"
        f" form (<{tag}{VERB_MARK}MAKES>)"
    )


def _base_form_message(
    experiment: Experiment, name: str, field: str, prefix: str, words: str, cap: bool
) -> str:
    fixed = third_person_singular(words).upper().replace(" ", "_")
    role = next(r for r in experiment.roles if f"{r.tag}{VERB_MARK}" == prefix)
    noun = getattr(role, "name", role.tag.replace("_", " ")).lower()
    several = _inflect().plural_noun(noun)
    return (
        f"placeholder <{name}> in {field} gives the verb in its base form; write the "
        f"third-person singular: <{prefix}{fixed}{CAP if cap else ''}> "
        f"(it becomes '{words}' for several {several})"
    )


def _verb_placeholder(name: str, prefixes: tuple[str, ...]) -> tuple[str, str, bool] | None:
    """(role prefix, verb words, capitalised) for a verb placeholder name, else None.

    `_CAP` is read as the capital suffix only when a verb remains without it, so
    `<GUARD_VERB_CAP>` is the verb "cap"."""
    base, cap = (name[: -len(CAP)], True) if name.endswith(CAP) else (name, False)
    for candidate, capital in ((base, cap), (name, False)):
        for prefix in prefixes:
            if candidate.startswith(prefix) and len(candidate) > len(prefix):
                return prefix, candidate[len(prefix) :].lower().replace("_", " "), capital
    return None


def role_values(role: RoleLike, count: int) -> dict[str, str]:
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
    """Replace every placeholder in `text`; verbs agree with their role's agent count, or with
    the role's pronoun right before them ("<GUARD_PRON> <GUARD_VERB_HAS>" -> "they have")."""
    values = placeholder_values(experiment, counts)
    prefixes = tuple(f"{r.tag}{VERB_MARK}" for r in experiment.roles)
    verb_roles = {
        f"{r.tag}{VERB_MARK}": (r.tag, _count_for(r.name, counts)) for r in experiment.roles
    }

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in values:
            return values[name]
        if name.endswith(CAP) and name[: -len(CAP)] in values:
            return _capitalise(values[name[: -len(CAP)]])
        verb = _verb_placeholder(name, prefixes)
        if verb is None:
            return match.group(0)
        prefix, words, cap = verb
        tag, count = verb_roles[prefix]
        plural = count != 1
        if re.search(rf"<{tag}_PRON(?:{CAP})?>\s*$", match.string[: match.start()]):
            plural = values[f"{tag}_PRON"] == "they"
        form = _inflect().plural_verb(words) if plural else words
        return _capitalise(form) if cap else form

    return PLACEHOLDER.sub(substitute, text)


def _capitalise(value: str) -> str:
    return value[:1].upper() + value[1:]


def legend(roles: Sequence[RoleLike], texts: Sequence[str] = ()) -> list[str]:
    """What each placeholder becomes for one agent (and two), one line each, as the reference
    tool listed them while section texts are typed: `<GUARD_NOUN>: guard (guards)`. Verb
    placeholders already used in `texts` are listed with their role."""
    prefixes = tuple(f"{role.tag}{VERB_MARK}" for role in roles)
    used: dict[str, str] = {}
    for text in texts:
        for match in PLACEHOLDER.finditer(text):
            verb = _verb_placeholder(match.group(1), prefixes)
            if verb and not verb[2] and not is_base_form(verb[1]):
                used.setdefault(match.group(1), verb[1])
    engine = _inflect()
    lines: list[str] = []
    for role in roles:
        one, two = role_values(role, 1), role_values(role, 2)
        lines.append(f"Placeholders for {role.name}:")
        for suffix in ROLE_SUFFIXES:
            key = f"{role.tag}_{suffix}"
            values = "1, 2, 3, ..." if suffix == "NUM" else f"{one[key]} ({two[key]})"
            lines.append(f"  <{key}>: {values}")
        verbs = sorted(n for n in used if n.startswith(f"{role.tag}{VERB_MARK}"))
        for name in verbs:
            lines.append(f"  <{name}>: {used[name]} ({engine.plural_verb(used[name])})")
        noun = one[f"{role.tag}_NOUN"]
        lines.append(f"  <{role.tag}{VERB_MARK}MAKES>: makes (make); any verb, as for one {noun}")
    count = len(roles)
    lines.append("For everyone:")
    lines.append("  <AGENTS_NUM>: 1, 2, 3, ... (all agents); <AGENTS_NUM_WORD>: one, two, ...")
    lines.append(f"  <ROLES_NUM>: {count}; <ROLES_NUM_WORD>: {_inflect().number_to_words(count)}")
    if roles:
        key = f"{roles[0].tag}_NOUN"
        one, two = role_values(roles[0], 1)[key], role_values(roles[0], 2)[key]
        lines.append(
            f"Add {CAP} at a sentence start: <{key}{CAP}>: {_capitalise(one)} ({_capitalise(two)})"
        )
    return lines
