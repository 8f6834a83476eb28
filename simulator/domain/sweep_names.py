"""What the names in a sweep mean against its experiment (pure): an LLM by its entry's label or
model, or a model string with the experiment's default sampling; roles spelled in any case; the
LLMs each role gets. Also the error every sweep check raises."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from simulator.domain.limits import MAX_AGENTS_PER_ROLE
from simulator.domain.llm_choice import LLMChoice
from simulator.domain.model_strings import has_hidden_characters
from simulator.worlds.chat.domain.experiment import Experiment

if TYPE_CHECKING:
    from simulator.worlds.chat.domain.sweep import SweepSpec

MANAGER, SUMMARIZER = "manager", "summarizer"


class SweepError(ValueError):
    """A sweep the experiment cannot satisfy: the field to correct and how (exit status 2)."""

    def __init__(self, field: str, message: str, fix: str):
        super().__init__(f"{field}: {message}")
        self.field, self.message, self.fix = field, message, fix


def to_llm_choice(experiment: Experiment, model: str) -> LLMChoice:
    """The experiment's own choice for `model`; else `model` with the experiment's default
    sampling (its first LLM's parameters), never with no parameters at all."""
    return resolve_llm(experiment, model)[0]


def resolve_llm(
    experiment: Experiment, model: str, run_seed: int | None = None
) -> tuple[LLMChoice, str | None]:
    """An LLM choice for a model string, and a sentence saying which defaults were applied
    when the experiment does not list that model (None when it does). With a `run_seed` the
    sentence leaves out the default LLM's own seed: the run's seed replaces it in every call.
    A control character in `model` is refused as a new entry's would be (a ValidationError),
    not stripped away."""
    if has_hidden_characters(model):
        LLMChoice(model=model)  # raises the ValidationError every caller reports
    model = model.strip()
    for choice in experiment.llms:  # an entry's label first, then its model string
        if choice.key == model:
            return choice, None
    same_model = [choice for choice in experiment.llms if choice.model == model]
    if len(same_model) > 1:
        raise ValueError(
            f"{model} is listed {len(same_model)} times in the experiment, as "
            f"{', '.join(c.key for c in same_model)}, each with its own sampling parameters"
        )
    if same_model:
        return same_model[0], None
    default = experiment.llms[0]
    choice = LLMChoice(model=model, params=default.params)
    used = default.params.as_dict()
    if run_seed is not None:
        used.pop("seed", None)
    shown = ", ".join(f"{k}={v}" for k, v in used.items()) or "none set"
    return choice, (
        f"{model} is not listed in the experiment: it runs with the sampling parameters of the "
        f"experiment's default LLM {default.model} ({shown})"
    )


def llm_key(experiment: Experiment, name: str) -> str:
    """What a cell records for an LLM: the experiment entry's key (its label, else its model)
    when listed, else the model string as given."""
    choice, note = resolve_llm(experiment, name)
    return choice.key if note is None else name.strip()


def check_llm_name(experiment: Experiment, field_name: str, name: str) -> None:
    """An LLM named by a sweep is an experiment entry's label or model, or a model string."""
    try:
        resolve_llm(experiment, name)
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"].removeprefix("Value error, ")
        keys = ", ".join(c.key for c in experiment.llms)
        raise SweepError(
            field_name,
            f"{name!r} is neither one of the experiment's LLMs ({keys}) nor a model string: "
            f"{problem}",
            fix="name an LLM by its label or model as the experiment lists it, or give a model "
            "string such as ollama:llama3",
        ) from None
    except ValueError as exc:
        raise SweepError(field_name, str(exc), fix="name that entry by its label") from None


def role_counts(counts: Any, roles: list[str], where: str) -> dict[str, int]:
    """Agents per role from a mapping that may spell roles in any case; unnamed roles get 1."""
    if not isinstance(counts, dict):
        raise SweepError(
            where, "must map role names to agent counts", fix=f"write e.g. {{{roles[0]}: 1}}"
        )
    found: dict[str, int] = {}
    for name, count in counts.items():
        match = [r for r in roles if r.lower() == str(name).strip().lower()]
        if not match:
            raise SweepError(
                where, f"unknown role {name!r}; the roles are {roles}", fix="use those role names"
            )
        if isinstance(count, bool) or not isinstance(count, int):
            raise SweepError(
                where,
                f"{count!r} for role {match[0]!r} is not a whole number",
                fix="give 1 or more",
            )
        if not 1 <= count <= MAX_AGENTS_PER_ROLE:
            raise SweepError(
                where,
                f"role {match[0]!r} needs 1 to {MAX_AGENTS_PER_ROLE} agents (got {count})",
                fix=f"give a count from 1 to {MAX_AGENTS_PER_ROLE}",
            )
        if match[0] in found:
            raise SweepError(where, f"role {match[0]!r} is given twice", fix="give it once")
        found[match[0]] = count
    return {r: found.get(r, 1) for r in roles}


def llm_assignments(
    spec: SweepSpec, experiment: Experiment, roles: list[str]
) -> list[dict[str, str]]:
    """Each assignment as cells record it: every role (and the manager or summarizer it names)
    to an LLM key; without assignments, every role gets each of `llms` (else the first LLM)."""
    if spec.llm_assignments:
        result = []
        for i, assignment in enumerate(spec.llm_assignments):
            canonical = {}
            for name, model in assignment.items():
                if name.lower() in (MANAGER, SUMMARIZER):
                    canonical[name.lower()] = llm_key(experiment, model)
                else:
                    try:
                        canonical[experiment.role(name).name] = llm_key(experiment, model)
                    except KeyError as exc:
                        raise SweepError(
                            f"llm_assignments[{i}]",
                            exc.args[0],
                            fix="name each role as the experiment does, or manager / summarizer",
                        ) from None
            missing = [r for r in roles if r not in canonical]
            if missing:
                raise SweepError(
                    f"llm_assignments[{i}]",
                    f"names no model for role {missing[0]!r}",
                    fix=f"give every role a model: {', '.join(roles)}",
                )
            result.append(canonical)
        return result
    models = spec.llms or [experiment.llms[0].key]
    return [dict.fromkeys(roles, llm_key(experiment, model)) for model in models]
