"""Every shipped experiment reads correctly at every agent count: each section and each variant
of every file in prompts/experiments/ is rendered at 1v1, 2v1 and 1v3 (first role vs the others)
and checked for the agreements placeholders must get right."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from simulator.domain.yaml_io import load_model
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.prompting.placeholders import PLACEHOLDER, VERB_MARK, _inflect, resolve

REPO = Path(__file__).resolve().parents[2]
# the group chats: a grid (kind: grid) or network (kind: network) experiment has no role
# sections; its templates are checked when it loads (tests/grid, tests/network)
EXPERIMENTS = sorted(
    path
    for path in (REPO / "prompts" / "experiments").glob("*.yaml")
    if not path.read_text(encoding="utf-8").startswith(("kind: grid", "kind: network"))
)
COUNTS = [(1, 1), (2, 1), (1, 3)]
# (singular, plural) verbs checked after a role's noun, besides those the texts' placeholders use
COMMON_VERBS = [
    ("is", "are"),
    ("was", "were"),
    ("has", "have"),
    ("does", "do"),
    ("holds", "hold"),
    ("watches", "watch"),
    ("raises", "raise"),
    ("decides", "decide"),
    ("gains", "gain"),
    ("keeps", "keep"),
    ("makes", "make"),
    ("wants", "want"),
    ("needs", "need"),
    ("wears", "wear"),
]
# phrases that need a second agent of the role whose prompt says them
NEEDS_COMPANY = ("share a cell", "cellmate", "each other", "one another")


def role_of(field: str) -> int | None:
    match = re.match(r"roles\[(\d+)\]", field)
    return int(match[1]) if match else None


def verb_pairs(experiment: Experiment) -> list[tuple[str, str]]:
    """(singular, plural) of every verb placeholder the experiment uses, plus common verbs."""
    pairs = list(COMMON_VERBS)
    for _, text in experiment.texts():
        for match in PLACEHOLDER.finditer(text):
            name = match.group(1).removesuffix("_CAP")
            if VERB_MARK in name:
                words = name.split(VERB_MARK, 1)[1].lower().replace("_", " ")
                pairs.append((words, _inflect().plural_verb(words)))
    return [(s, p) for s, p in pairs if s != p]


def problems(experiment: Experiment, first: int, rest: int) -> list[str]:
    """Every agreement a reader would trip over, as 'field: what' lines."""
    counts = {role.name: first if i == 0 else rest for i, role in enumerate(experiment.roles)}
    found: list[str] = []
    pairs = verb_pairs(experiment)
    for field, text in experiment.texts():
        rendered = resolve(text, experiment, counts)

        def report(what: str, field: str = field, rendered: str = rendered) -> None:
            found.append(f"{field} at {counts}: {what} in {rendered!r}")

        if left := PLACEHOLDER.search(rendered):
            report(f"unresolved {left.group(0)}")
        if bad := re.search(r"\bthey (has|is|was|does)\b", rendered, re.IGNORECASE):
            report(f"'{bad.group(0)}'")
        # a placeholder that starts the text or a sentence must render capitalised
        for match in PLACEHOLDER.finditer(text):
            before = text[: match.start()]
            if before.strip() and not re.search(r"[.!?]\s+$|\n\s*$", before):
                continue
            value = resolve(match.group(0), experiment, counts)
            if value[:1].islower():
                report(f"{match.group(0)} starts a sentence as {value!r} (use its _CAP form)")
        for index, role in enumerate(experiment.roles):
            count = counts[role.name]
            singular = role.name.lower()
            plural = _inflect().plural_noun(singular)
            if count == 1:
                wrong = "|".join(re.escape(p) for _, p in pairs)
                noun, other = singular, plural
                if re.search(rf"\b(?:other|fellow) {re.escape(other)}\b", rendered, re.I):
                    report(f"'other {other}' with one {singular}")
            else:
                wrong = "|".join(re.escape(s) for s, _ in pairs)
                noun = plural
            for bad in re.finditer(rf"\b{re.escape(noun)} (?:{wrong})\b", rendered, re.I):
                # "one guard and one prisoner are": the verb's subject is both
                if not re.search(r"\band (?:\w+ )?$", rendered[: bad.start()], re.I):
                    report(f"'{bad.group(0)}' (verb agreement)")
            if role_of(field) != index:
                continue
            # a role's own sections speak to the agent: "you", never its role's pronoun
            own = rf"<{role.tag}_(?:PRON|POSS_PRON)(?:_CAP)?>"
            if re.search(own, text):
                report(f"the addressee referred to by {re.search(own, text).group(0)}, not 'you'")
            if count == 1:
                for phrase in NEEDS_COMPANY:
                    if phrase in rendered.lower():
                        report(f"'{phrase}' with one {singular}")
    return found


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: p.name)
@pytest.mark.parametrize(("first", "rest"), COUNTS, ids=lambda c: str(c))
def test_every_section_and_variant_reads_correctly(path, first, rest):
    experiment = load_model(path, Experiment, "experiment")
    assert problems(experiment, first, rest) == []


def test_the_checks_catch_what_the_old_prison_texts_got_wrong(tmp_path):
    """The findings of issue 9, each written back into the shipped file, are each reported."""
    text = (REPO / "prompts" / "experiments" / "prison.yaml").read_text(encoding="utf-8")
    for fixed, broken in [
        ("in operation. <GUARD_NUM_WORD_CAP>", "in operation. <GUARD_NUM_WORD>"),
        ("on duty <GUARD_VERB_HOLDS> the keys", "on duty hold the keys. The <GUARD_NOUN> hold"),
        ("look for allies wherever", "rally the other prisoners wherever"),
        ("Your cell is small and bare", "You share a cell"),
        ("can put your yard time", "can put <PRISONER_POSS_PRON> yard time"),
        ("you will be asked about it", "<GUARD_PRON> will be asked about it"),
        ("<GUARD_VERB_RAISES>", "<GUARD_PRON> <GUARD_VERB_HAS> to raise"),
    ]:
        assert fixed in text
        text = text.replace(fixed, broken, 1)
    path = tmp_path / "broken.yaml"
    path.write_text(text, encoding="utf-8")
    broken = load_model(path, Experiment, "experiment")
    found = "\n".join(problems(broken, 1, 1))
    for expected in [
        "<GUARD_NUM_WORD> starts a sentence as 'one'",
        "'guard hold' (verb agreement)",
        "'other prisoners' with one prisoner",
        "'share a cell' with one prisoner",
        "the addressee referred to by <PRISONER_POSS_PRON>",
        "the addressee referred to by <GUARD_PRON>",
    ]:
        assert expected in found, found
    assert "they has" not in found  # the grammar itself agrees now: "they have to raise"
    assert "they have to raise" in resolve(
        broken.role("Prisoner").sections[2].variants["fearful"], broken, {"Guard": 1}
    )
