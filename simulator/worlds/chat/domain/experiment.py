"""The group chat's experiment: roles, their prompt sections, the starting message and the
summarizer; what a researcher defines once and runs many times. Pure data, validated."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from simulator.domain.limits import MAX_ROLES
from simulator.domain.llm_choice import LLMChoice, Name, reject_duplicates
from simulator.memory.domain.settings import MemorySettings

NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9 _\-']*$")
Pronoun = Literal["he", "she", "it", "they"]


class Section(BaseModel):
    """A titled block of prompt text. The first private section of a role is its starting prompt.

    `variants` are named alternatives a sweep can choose between; `content` is the variant named
    `default_variant`. A variant whose content is null leaves the section out ("blank" / "off").
    """

    model_config = ConfigDict(extra="forbid")

    title: Name = Field(min_length=1, max_length=120)
    content: str = Field(default="", max_length=50_000)
    default_variant: Name | None = Field(default=None, min_length=1, max_length=60)
    variants: dict[str, str | None] | None = None

    @model_validator(mode="after")
    def _variants_named(self) -> Section:
        if self.variants is not None:
            if not self.variants:
                raise ValueError(f"section {self.title!r} lists an empty variants mapping")
            if any(not str(key).strip() for key in self.variants):
                raise ValueError(f"section {self.title!r} has a variant whose name is blank")
            name = self.default_variant or "default"
            if name in self.variants:
                raise ValueError(
                    f"section {self.title!r}: variant {name!r} is the section's own content; "
                    "do not list it under variants"
                )
        return self

    def variant_names(self) -> list[str]:
        """All choices for this section, the section's own content first."""
        return [self.default_variant or "default", *(self.variants or {})]

    def with_variant(self, name: str) -> Section | None:
        """This section with the named variant's content, or None when that variant is blank."""
        own = self.default_variant or "default"
        if name == own:
            content: str | None = self.content
        elif self.variants and name in self.variants:
            content = self.variants[name]
        else:
            raise KeyError(
                f"section {self.title!r} has no variant {name!r}; its variants are "
                + ", ".join(self.variant_names())
            )
        if content is None:
            return None
        return Section(title=self.title, content=content)


class Role(BaseModel):
    """A kind of agent (guard, prisoner). Placeholders are derived from its name."""

    model_config = ConfigDict(extra="forbid")

    name: Name = Field(min_length=1, max_length=60)
    pronoun: Pronoun = "they"
    sections: list[Section] = Field(min_length=1)

    @field_validator("name")
    @classmethod
    def _name_is_usable(cls, value: str) -> str:
        value = value.strip()
        if not NAME_PATTERN.match(value):
            raise ValueError(
                f"role name {value!r} must start with a letter and use letters, digits, spaces, "
                "'-', '_' or apostrophes"
            )
        return value

    @model_validator(mode="after")
    def _unique_section_titles(self, info: ValidationInfo) -> Role:
        reject_duplicates([s.title for s in self.sections], f"section titles of role {self.name!r}")
        if not (info.context and info.context.get("stored")):  # a saved one stays readable
            _starting_prompt_says_something(self)
        return self

    @property
    def tag(self) -> str:
        """The placeholder stem: 'police officer' -> 'POLICE_OFFICER'."""
        return re.sub(r"[^A-Z0-9]+", "_", self.name.upper()).strip("_")


class Experiment(BaseModel):
    """Content of an experiment. Ownership and times live in the store's document around it."""

    model_config = ConfigDict(extra="forbid")

    name: Name = Field(min_length=1, max_length=120)
    note: str = Field(default="", max_length=2000)
    favourite: bool = False
    starting_message: str = Field(min_length=1, max_length=20_000)
    llms: list[LLMChoice] = Field(min_length=1)
    roles: list[Role] = Field(min_length=1, max_length=MAX_ROLES)
    shared_sections: list[Section] = Field(default_factory=list)
    summarizer_sections: list[Section] = Field(default_factory=list)
    # What the agents carry between turns and days (engine/chat_memory.py): `summary` (the
    # default: the day's transcript and the earlier days' summaries), `stream` (a memory
    # stream beside the summaries), `none` (no summaries in later days' openings)
    memory: MemorySettings = Field(default_factory=MemorySettings)

    @field_validator("memory")
    @classmethod
    def _chat_memory(cls, value: MemorySettings) -> MemorySettings:
        value.resolved(world_plans=False)  # a chat has no hours to plan: planning is refused
        return value

    @model_serializer(mode="wrap")
    def _without_default_memory(self, handler: SerializerFunctionWrapHandler) -> dict:
        """An experiment with the default memory dumps as it did before memory blocks, so its
        stored spec, version and sweep keys stay what they were."""
        data = handler(self)
        if isinstance(data, dict) and self.memory == MemorySettings():
            data.pop("memory", None)
        return data

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo) -> Experiment:
        reject_duplicates([r.name.lower() for r in self.roles], "role names")
        for role in self.roles:
            if role.sections[0].variants and None in role.sections[0].variants.values():
                raise ValueError(
                    f"the starting prompt of role {role.name!r} cannot have a blank variant"
                )
        reject_duplicates([r.tag for r in self.roles], "role placeholder names")
        reject_duplicates([s.title for s in self.shared_sections], "shared section titles")
        reject_duplicates([s.title for s in self.summarizer_sections], "summarizer section titles")
        reject_duplicates(
            [llm.key for llm in self.llms],
            "LLM entries (model string, or label where one is given; give the same model "
            "different labels to list it twice)",
        )
        for role in self.roles:
            clash = {s.title for s in role.sections} & {s.title for s in self.shared_sections}
            if clash:
                raise ValueError(
                    f"section {sorted(clash)[0]!r} is both private to role {role.name!r} and shared"
                )
        from simulator.worlds.chat.prompting.placeholders import validate_placeholders

        stored = bool(info.context and info.context.get("stored"))
        validate_placeholders(self, base_forms_allowed=stored)
        return self

    @classmethod
    def from_stored(cls, data: dict) -> Experiment:
        """An experiment read back from the store or a sweep snapshot: validated like new input,
        except that checks added later (base-form verbs) never lock a saved experiment out."""
        return cls.model_validate(data, context={"stored": True})

    def role(self, name: str) -> Role:
        for role in self.roles:
            if role.name.lower() == name.strip().lower():
                return role
        known = ", ".join(r.name for r in self.roles)
        raise KeyError(f"unknown role {name!r}; the experiment's roles are {known}")

    def texts(self) -> list[tuple[str, str]]:
        """Every text that may hold placeholders, with a field path for error messages."""
        found = [("starting_message", self.starting_message)]
        for i, role in enumerate(self.roles):
            for j, section in enumerate(role.sections):
                found.extend(_section_texts(section, f"roles[{i}].sections[{j}]"))
        for j, section in enumerate(self.shared_sections):
            found.extend(_section_texts(section, f"shared_sections[{j}]"))
        for j, section in enumerate(self.summarizer_sections):
            found.append((f"summarizer_sections[{j}].content", section.content))
        return found


def _starting_prompt_says_something(role: Role) -> None:
    """A role's first section is its agents' starting prompt: empty, they would be told nothing
    of who they are (in the default run, or under a variant)."""
    first = role.sections[0]
    empty = [] if first.content.strip() else ["its content"]
    empty += [
        f"its variant {name!r}"
        for name, text in (first.variants or {}).items()
        if text is not None and not text.strip()
    ]
    if empty:
        raise ValueError(
            f"the starting prompt of role {role.name!r} (its first section, {first.title!r}) is "
            f"empty ({empty[0]}); write what the role's agents are told first, or move a "
            "section with text to the top of the role's sections"
        )


def _section_texts(section: Section, path: str) -> list[tuple[str, str]]:
    texts = [(f"{path}.content", section.content)]
    for name, content in (section.variants or {}).items():
        if content is not None:
            texts.append((f"{path}.variants.{name}", content))
    return texts
