"""`judge:RUBRIC`: an LLM (any backend) reads a conversation and answers the rubric's questions.

Why it re-asks instead of guessing: a malformed or out-of-range answer is sent back with feedback
naming the problem (up to the rubric's `reasks`, 2 by default). If it is still unusable, or the
model call fails after the backend's own retries, the result is a failed judgement (values
`{"error": ...}`), which the scoring service does not store: the next run tries it again.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from simulator.analysis.scorers.base import ScoreResult, TargetKind, failed
from simulator.analysis.scorers.rubric import Rubric, load_rubric
from simulator.domain.llm_choice import LLMChoice
from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.llm.base import BackendError, FatalBackendError
from simulator.prompting.templates import fill
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.domain.variants import apply_variants
from simulator.worlds.chat.prompting.placeholders import resolve

FEEDBACK = "Your answer could not be used: {problems}.\n\n{format}"


def render_transcript(messages: list[dict]) -> str:
    """Numbered `[N] Speaker (Role): text` lines with `--- Day N ---` separators (N from 1)."""
    rows: list[str] = []
    day = None
    for number, message in enumerate(messages, start=1):
        if message.get("day") != day:
            day = message.get("day")
            rows.append(f"--- Day {day} ---")
        rows.append(f"[{number}] {message['speaker']} ({message['role']}): {message['text']}")
    return "\n".join(rows)


def render_agents(conversation: dict) -> str:
    return "\n".join(f"- {a['name']} ({a['role']})" for a in conversation.get("agents", []))


def goal_text(conversation: dict, section: str) -> str:
    """The goal section as this conversation's agents saw it: variant applied, placeholders filled.

    `section` is `Role/Title`; a blank variant (section left out) gives "(no goal given)".
    """
    snapshot = conversation.get("experiment")
    if not snapshot:
        return "(unknown goal)"
    spec = conversation.get("spec", {})
    experiment = apply_variants(Experiment.from_stored(snapshot), spec.get("variant") or {})
    role_name, _, title = section.partition("/")
    try:
        role = experiment.role(role_name)
    except KeyError:
        return "(unknown goal)"
    for candidate in role.sections:
        if candidate.title.lower() == title.strip().lower():
            return resolve(candidate.content, experiment, spec.get("agents") or {}).strip()
    return "(no goal given)"


class LLMJudge:
    """One rubric, one model; `name` is "judge:<rubric name>" whatever model judges."""

    target_kind: TargetKind = "conversation"

    def __init__(self, rubric: Rubric, choice: LLMChoice, llms: LLMAccess) -> None:
        self.rubric = rubric
        self.choice = choice
        self.llms = llms
        self.name = f"judge:{rubric.name}"

    async def preflight(self) -> None:
        """Fail once, before anything is scored, when the model cannot be reached or loaded."""
        try:
            await self.llms.preflight([self.choice])
        except FatalBackendError as exc:
            raise UserError(str(exc), field="--llm") from None

    def messages_for(self, conversation: dict, messages: list[dict]) -> list[dict[str, str]]:
        values = {"transcript": render_transcript(messages), "agents": render_agents(conversation)}
        if self.rubric.goal_section:
            values["goal"] = goal_text(conversation, self.rubric.goal_section)
        prompt = fill(self.rubric.prompt, **values) + "\n\n" + self.rubric.answer_format()
        return [
            {"role": "system", "content": self.rubric.system},
            {"role": "user", "content": prompt},
        ]

    async def score(
        self, conversation: dict, messages: list[dict], summaries: list[dict]
    ) -> list[ScoreResult]:
        target = conversation["_id"]
        chat = self.messages_for(conversation, messages)
        backend = self.llms.get(self.choice)
        answers: list[str] = []
        problems: list[str] = []
        for _ in range(self.rubric.reasks + 1):
            try:
                completion = await backend.chat(chat, self.choice.params)
            except BackendError as exc:
                return [failed(target, f"model call failed: {exc}", **self._details(answers))]
            answers.append(completion.text)
            values, problem = self.rubric.validate_answer(completion.text)
            if values is not None:
                return [(target, values, self._details(answers, problems))]
            problems.append(problem or "invalid answer")
            feedback = fill(FEEDBACK, problems=problems[-1], format=self.rubric.answer_format())
            chat = [
                *chat,
                {"role": "assistant", "content": completion.text},
                {"role": "user", "content": feedback},
            ]
        error = f"no valid answer after {len(answers)} attempt(s): {problems[-1]}"
        return [failed(target, error, **self._details(answers, problems))]

    def _details(self, answers: list[str], problems: list[str] | None = None) -> dict[str, Any]:
        return {
            "model": self.choice.model,
            "params": self.choice.params.as_dict(),
            "rubric": self.rubric.name,
            "attempts": len(answers),
            "answers": answers,
            "problems": problems or [],
        }


def create(argument: str, *, llm: str | None = None, llms: LLMAccess | None = None) -> LLMJudge:
    """Registry factory for `judge:NAME_OR_PATH`; the judging model comes from `--llm`."""
    rubric = load_rubric(argument)
    if not llm:
        raise UserError(
            f"the judge {argument!r} needs a model to judge with",
            field="--llm",
            fix="add e.g. --llm ollama:llama3 or --llm openai:gpt-4o-mini",
        )
    try:
        choice = LLMChoice(model=llm, params=rubric.params)
    except ValidationError as exc:
        message = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise UserError(message, field="--llm", fix="use e.g. ollama:llama3") from None
    return LLMJudge(rubric, choice, llms or LLMAccess())
