"""The answers of a creation (or duplicate-and-update) flow, kept apart from the prompts.

Answers are collected in the reference tool's shape (one list of section titles, some of them
shared, every private one written once per role) and only turned into the domain's nested
`Experiment` data at the end, so a single answer can be changed without re-asking the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import SimpleNamespace

from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.prompting.placeholders import legend, validate_placeholders


def _tag(role_name: str) -> str:
    """The placeholder stem of a role name, as `Role.tag` derives it."""
    return re.sub(r"[^A-Z0-9]+", "_", role_name.upper()).strip("_")


# A content slot: ("role", role name, title), ("shared", "", title) or ("summarizer", "", title).
Slot = tuple[str, str, str]


@dataclass
class Draft:
    name: str = ""
    note: str = ""
    favourite: bool = False
    starting_message: str = ""
    llms: list[dict] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    shared: list[str] = field(default_factory=list)
    roles: list[tuple[str, str]] = field(default_factory=list)  # (name, pronoun)
    summarizer_titles: list[str] = field(default_factory=list)
    contents: dict[Slot, str] = field(default_factory=dict)
    # prompt variants (and default_variant) of a section, carried through unchanged so that
    # duplicating an experiment keeps what its sweeps vary
    extras: dict[Slot, dict] = field(default_factory=dict)
    # the experiment's `memory:` block, carried through unchanged (no step asks for it; None:
    # the default, left out as a file without the block leaves it out)
    memory: dict | None = None

    @property
    def private(self) -> list[str]:
        return [t for t in self.titles if t not in self.shared]

    def slots(self) -> list[Slot]:
        """Every section content the experiment needs, in the order they are asked."""
        found: list[Slot] = []
        for role, _ in self.roles:
            found.extend(("role", role, title) for title in self.private)
        found.extend(("shared", "", title) for title in self.shared)
        found.extend(("summarizer", "", title) for title in self.summarizer_titles)
        return found

    def missing(self) -> list[Slot]:
        return [slot for slot in self.slots() if slot not in self.contents]

    def label(self, slot: Slot) -> str:
        """How a slot is named in prompts; a role's first private section is its starting prompt."""
        scope, role, title = slot
        if scope == "role":
            first = " — the role's starting prompt" if self.private[:1] == [title] else ""
            return f"Role {role}, section {title!r}{first}"
        if scope == "shared":
            return f"Shared section {title!r} (every role sees it)"
        first = self.summarizer_titles[:1] == [title]
        return f"Summarizer section {title!r}" + (" — its starting prompt" if first else "")

    def heading(self, slot: Slot) -> str:
        """The short question a slot's text is typed under (its `label` is printed above)."""
        scope, role, title = slot
        return f"{role}: {title}" if scope == "role" else f"{scope.capitalize()}: {title}"

    def placeholder_problem(self, text: str) -> str | None:
        """The import's own placeholder check on one text, against the roles named so far, so a
        typo such as <GAURD_NOUN> is reported as the text is typed. None when fine or when no
        role is named yet (the final validation still checks everything)."""
        if not self.roles:
            return None
        probe = SimpleNamespace(roles=self.role_likes(), texts=lambda: [("this text", text)])
        try:
            validate_placeholders(probe)  # type: ignore[arg-type]  # it reads only these two
        except ValueError as exc:
            message = str(exc)
            # with a suggestion, the full list is noise
            return message.split(" Known: ")[0] if "Did you mean" in message else message
        return None

    def role_likes(self) -> list[SimpleNamespace]:
        """The roles named so far, as much of a role as placeholders read."""
        return [
            SimpleNamespace(name=name, pronoun=pronoun, tag=_tag(name))
            for name, pronoun in self.roles
        ]

    def placeholder_legend(self) -> str:
        """What each placeholder becomes, for the roles named so far ("" before any)."""
        if not self.roles:
            return ""
        texts = [self.starting_message, *self.contents.values()]
        for extra in self.extras.values():
            texts.extend(t for t in (extra.get("variants") or {}).values() if t)
        return "\n".join(legend(self.role_likes(), texts))

    def set_roles(self, roles: list[tuple[str, str]]) -> None:
        """Replace the roles. A role renamed in place keeps the contents written for it, and its
        placeholders follow the new name (<GUARD_NOUN> -> <WARDEN_NOUN>) everywhere."""
        old = [name for name, _ in self.roles]
        new = [name for name, _ in roles]
        for index, name in enumerate(new):
            if index < len(old) and name not in old and old[index] not in new:
                for scope, role, title in list(self.contents):
                    if scope == "role" and role == old[index]:
                        self.contents[(scope, name, title)] = self.contents[(scope, role, title)]
                        if (scope, role, title) in self.extras:
                            self.extras[(scope, name, title)] = self.extras[(scope, role, title)]
                self._rename_placeholders(_tag(old[index]), _tag(name))
        self.roles = roles

    def _rename_placeholders(self, old_tag: str, new_tag: str) -> None:
        pattern = re.compile(rf"<{re.escape(old_tag)}_(?=[A-Z0-9_]*>)")
        self.starting_message = pattern.sub(f"<{new_tag}_", self.starting_message)
        for slot, text in self.contents.items():
            self.contents[slot] = pattern.sub(f"<{new_tag}_", text)
        for extra in self.extras.values():
            variants = extra.get("variants") or {}
            for name, text in variants.items():
                if text is not None:
                    variants[name] = pattern.sub(f"<{new_tag}_", text)

    def to_data(self) -> dict:
        """The experiment's fields for `validate_model`; sections without content are left out."""

        def sections(scope: str, role: str, titles: list[str]) -> list[dict]:
            return [
                {
                    "title": t,
                    "content": self.contents[(scope, role, t)],
                    **self.extras.get((scope, role, t), {}),
                }
                for t in titles
                if (scope, role, t) in self.contents
            ]

        return {
            "name": self.name,
            "note": self.note,
            "favourite": self.favourite,
            "starting_message": self.starting_message,
            "llms": [dict(llm) for llm in self.llms],
            "roles": [
                {"name": name, "pronoun": pronoun, "sections": sections("role", name, self.private)}
                for name, pronoun in self.roles
            ],
            "shared_sections": sections("shared", "", self.shared),
            "summarizer_sections": sections("summarizer", "", self.summarizer_titles),
            **({"memory": dict(self.memory)} if self.memory is not None else {}),
        }

    @classmethod
    def from_experiment(cls, experiment: Experiment) -> Draft:
        draft = cls(
            name=experiment.name,
            note=experiment.note,
            favourite=experiment.favourite,
            starting_message=experiment.starting_message,
            llms=[llm.model_dump(mode="json", exclude_none=True) for llm in experiment.llms],
            shared=[s.title for s in experiment.shared_sections],
            roles=[(r.name, r.pronoun) for r in experiment.roles],
            summarizer_titles=[s.title for s in experiment.summarizer_sections],
            memory=experiment.model_dump(mode="json", include={"memory"}).get("memory"),
        )
        for role in experiment.roles:
            for section in role.sections:
                if section.title not in draft.titles:
                    draft.titles.append(section.title)
                draft.contents[("role", role.name, section.title)] = section.content
                draft._keep_extras(("role", role.name, section.title), section)
        draft.titles.extend(draft.shared)
        for section in experiment.shared_sections:
            draft.contents[("shared", "", section.title)] = section.content
            draft._keep_extras(("shared", "", section.title), section)
        for section in experiment.summarizer_sections:
            draft.contents[("summarizer", "", section.title)] = section.content
        return draft

    def _keep_extras(self, slot: Slot, section) -> None:
        extra = section.model_dump(
            mode="json", include={"variants", "default_variant"}, exclude_none=True
        )
        if extra:
            self.extras[slot] = extra

    def blame(self, error: str) -> tuple[str, Slot | None]:
        """The step (and content slot, when one is named) an error message points at."""
        if match := re.search(r"roles\[(\d+)\]\.sections\[(\d+)\]", error):
            role, index = int(match[1]), int(match[2])
            if role < len(self.roles):
                titles = [s["title"] for s in self.to_data()["roles"][role]["sections"]]
                if index < len(titles):
                    return "contents", ("role", self.roles[role][0], titles[index])
            return "contents", None
        for scope, titles in (("shared", self.shared), ("summarizer", self.summarizer_titles)):
            if match := re.search(rf"{scope}_sections\[(\d+)\]", error):
                present = [t for t in titles if (scope, "", t) in self.contents]
                index = int(match[1])
                return "contents", (scope, "", present[index]) if index < len(present) else None
        for needle, step in (
            ("starting_message", "starting_message"),
            ("llm", "llms"),
            ("LLM", "llms"),
            ("summarizer", "summarizer"),
            ("shared", "sections"),
            ("section", "sections"),
            ("role", "roles"),
            ("note", "note"),
            ("name", "name"),
        ):
            if needle in error:
                return step, None
        return "contents", None
