"""Choosing an experiment's LLMs and their sampling parameters.

Model strings and parameter values are checked by the domain's own validators
(`check_model_string`, `GenerationParams`), so the menu can never accept what a YAML import
would reject; bounds shown in the prompts are read from the same model.
"""

from __future__ import annotations

from pydantic import ValidationError

from simulator.cli.interactive import prompts as ask
from simulator.domain.llm_choice import LLMChoice
from simulator.domain.model_strings import check_model_string
from simulator.domain.params import GenerationParams
from simulator.domain.providers import EXAMPLES as PROVIDER_EXAMPLES

PARAMS = ("temperature", "top_p", "top_k", "max_tokens", "seed")
EXAMPLES = f"e.g. {PROVIDER_EXAMPLES}"


def bounds(name: str) -> str:
    """'0–2' or 'above 0, up to 1', from the field's constraints."""
    low = high = None
    strict = False
    for rule in GenerationParams.model_fields[name].metadata:
        if hasattr(rule, "ge"):
            low = rule.ge
        elif hasattr(rule, "gt"):
            low, strict = rule.gt, True
        elif hasattr(rule, "le"):
            high = rule.le

    def show(value: float | int | None) -> str:
        return f"{value:g}" if isinstance(value, float) else str(value)

    if strict:
        return f"above {show(low)}, up to {show(high)}"
    return f"{show(low)}–{show(high)}"


def param_problem(name: str, value: object) -> str | None:
    try:
        GenerationParams(**{name: value})
    except ValidationError as exc:
        return f"{name}: {exc.errors()[0]['msg']}"
    return None


def ask_param(name: str, current: object = None) -> float | int | None:
    annotation = GenerationParams.model_fields[name].annotation
    convert = int if annotation == int | None else float
    return ask.ask_number(
        f"{name} ({bounds(name)}; blank to leave unset)",
        convert,
        check=lambda value: param_problem(name, value),
        default=current,
        optional=True,
    )


def ask_params(model: str, current: dict | None = None) -> dict:
    current = current or {}
    if not ask.confirm(f"Set generation parameters for {model}?", default=bool(current)):
        return dict(current)
    params = dict(current)
    for name in PARAMS:
        value = ask_param(name, current.get(name))
        if value is None:
            params.pop(name, None)
        else:
            params[name] = value
    return params


def key_of(llm: dict) -> str:
    """What sweeps, --llm and the ledger call an entry: its label, else its model string."""
    return llm.get("label") or llm["model"]


def model_problem(value: str) -> str | None:
    try:
        check_model_string(value)
    except ValueError as exc:
        return str(exc)
    return None


def label_problem(model: str, value: str, taken: list[str], required: bool) -> str | None:
    """The same checks as a YAML file's `label:`, and no clash with another entry's name."""
    if not value.strip():
        if required:
            return f"{model} is already in the list without a label: give this one a label"
        return None
    try:
        LLMChoice(model=model, label=value)
    except ValidationError as exc:
        return f"label: {exc.errors()[0]['msg']}"
    return f"{value.strip()} is already in the list" if value.strip() in taken else None


def ask_label(model: str, existing: list[dict]) -> str | None:
    """The same model listed again (other sampling parameters, as the reference allowed): a
    label tells the entries apart in sweeps, --llm and the ledger. None when left blank."""
    taken = [key_of(llm) for llm in existing]
    required = model in taken
    hint = "required" if required else "blank for none"
    note = f"{model} is already listed: a label tells the entries apart (e.g. hot; {hint})."
    answer = ask.text("Label for this entry", note=note)
    while (problem := label_problem(model, answer, taken, required)) is not None:
        ask.warn(problem)
        answer = ask.text(f"Label for this entry ({hint})", default=answer)
    return answer.strip() or None


def ask_one(existing: list[dict]) -> dict:
    model = check_model_string(
        ask.ask_required("LLM", check=model_problem, note=f"The model string ({EXAMPLES}).")
    )
    llm: dict = {"model": model}
    if any(other["model"] == model for other in existing):
        label = ask_label(model, existing)
        if label:
            llm["label"] = label
    params = ask_params(key_of(llm))
    if params:
        llm["params"] = params
    return llm


def ask_llms(current: list[dict] | None = None) -> list[dict]:
    """At least one; loop on "Add another?"."""
    llms = list(current or [])
    while True:
        llms.append(ask_one(llms))
        if not ask.confirm("Add another LLM?", default=False):
            return llms


def describe(llm: dict) -> str:
    params = ", ".join(f"{k}={v}" for k, v in llm.get("params", {}).items())
    name = f"{llm['model']} as {llm['label']}" if llm.get("label") else llm["model"]
    return f"{name} ({params})" if params else name


def edit_llms(current: list[dict]) -> list[dict]:
    """Add, remove or re-parameterise the LLMs of an existing draft."""
    llms = [dict(llm) for llm in current]
    while True:
        listing = "; ".join(describe(llm) for llm in llms)
        action = ask.select(
            f"LLMs: {listing}",
            [
                ("Add an LLM", "add"),
                ("Remove one", "remove"),
                ("Change one's parameters", "params"),
                ("Done", "done"),
            ],
            default="done",
        )
        if action == "done":
            return llms
        if action == "add":
            llms.append(ask_one(llms))
            continue
        index = ask.select("Which LLM?", [(describe(llm), i) for i, llm in enumerate(llms)])
        if action == "remove":
            if len(llms) == 1:
                ask.warn("an experiment needs at least one LLM; add another first")
            else:
                llms.pop(index)
        else:
            params = ask_params(key_of(llms[index]), llms[index].get("params"))
            llms[index] = {**llms[index], "params": params}
            if not params:
                llms[index].pop("params")
