"""What every world's experiment holds besides its own content: names, and the LLMs it may use
with their sampling parameters."""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from simulator.domain.endpoint_secrets import check_http_url, refusal
from simulator.domain.params import GenerationParams


def strip_name(value: object) -> object:
    """Names and titles lose surrounding spaces; one made only of spaces is refused."""
    if isinstance(value, str):
        value = value.strip()
        if not value:
            raise ValueError("is blank (only spaces); give it a visible name")
    return value


# A name, title or label: stripped, never blank. Lengths are set per field.
Name = Annotated[str, BeforeValidator(strip_name)]


class LLMPrice(BaseModel):
    """What an LLM entry's tokens cost, in US dollars per million tokens (the experiment's own
    figure, over any table)."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)


class LLMChoice(BaseModel):
    """A model an experiment may use, with its default sampling parameters."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=3, max_length=300)
    params: GenerationParams = Field(default_factory=GenerationParams)
    base_url: str | None = Field(default=None, max_length=300)
    # Names this entry when the same model appears twice with different sampling parameters
    # (the reference tool allowed it); sweeps, --llm and the ledger use it. None: the model.
    label: Name | None = Field(default=None, min_length=1, max_length=120)
    price: LLMPrice | None = None  # dollars per million tokens, over the shipped table

    @field_validator("label")
    @classmethod
    def _label_is_not_a_model_string(cls, value: str | None) -> str | None:
        if value is not None and ":" in value:
            raise ValueError(
                f"label {value!r} contains ':', which would read as a model string; "
                "use letters, digits, spaces, '-', '_' or '.' (e.g. 'llama3 t=0.7')"
            )
        return value

    @property
    def key(self) -> str:
        """What sweeps, --llm and the ledger call this entry: its label, else its model string."""
        return self.label or self.model

    @field_validator("model")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        from simulator.domain.model_strings import check_model_string

        return check_model_string(value)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        """An http(s) URL that spells out no secret (a `${VAR}` reference stands in for one,
        domain/endpoint_secrets.py); one read back from the store is only checked as a URL,
        so an experiment saved before the rule still opens."""
        if value is None:
            return None
        value = check_http_url(value)
        stored = bool(info.context and info.context.get("stored"))
        refused = None if stored else refusal(value)
        if refused:
            raise ValueError(refused)
        return value


def reject_duplicates(values: list[str], what: str) -> None:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise ValueError(f"duplicate {what}: {value!r}; each must be unique")
        seen.add(value)


class WorldExperiment(BaseModel):
    """What every world's experiment starts with: its `kind`, name, note, favourite flag and the
    LLMs its runs may use (each listed once). A world's experiment subclasses it, narrowing
    `kind` to its own name and adding its content; the fields keep this order in files and
    exports."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    name: Name = Field(min_length=1, max_length=120)
    note: str = Field(default="", max_length=2000)
    favourite: bool = False
    llms: list[LLMChoice] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_llms(self) -> WorldExperiment:
        reject_duplicates([llm.key for llm in self.llms], "LLM entries")
        return self

    @classmethod
    def from_stored(cls, data: dict) -> WorldExperiment:
        return cls.model_validate(data)
