"""A scripted grid agent with a memory stream, for the loopback stub: a reply for each kind of
prompt the grid world and the memory stream send (rating, questions, insights, plans, moves,
messages), so tests and benchmarks run a stream without a model. The replies are what a
well-behaved model would write; `rating`, `move`, `insights` and `message` change them."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

_NAME = re.compile(r"You are ([\w-]+)")  # the agent the message prompt speaks to
_INTERVIEW = re.compile(r"What you recall:\n(.*)\n\nAn interviewer asks you: (.*?)\n", re.S)
_KNOWS = re.compile(r"^Do you know ([\w-]+)\?$")
_TOTAL = re.compile(r"list the subtasks ([\w-]+) does .*\(total duration in minutes: (\d+)\)")
_CHATTING = re.compile(
    r"([\w-]+) and ([\w-]+) are chatting\. Here is their conversation so far:\n(.*)\n\n---", re.S
)
QUESTIONS = "1. Who is friendly?\n2. What did people say?"
INSIGHTS = "People greet each other (because of 0, 1)\nThe field is calm (because of 2)"


def memory_stream_reply(
    rating: str = "7",
    move: str = "x+1",
    insights: str = INSIGHTS,
    message: Callable[[str], str] | None = None,
    talk: str = "No",
    talk_lines: int = 3,
) -> Callable[[dict], str]:
    """A stub `reply_fn`; `message(name)` writes an agent's message (default "hello from X");
    `talk` answers whether to start a conversation, which then ends on its `talk_lines`-th
    line; a plan's hour is three 15-minute actions and a last one to its end."""

    def reply(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        if prompt.endswith("Rating:"):
            return rating
        if "salient high-level questions" in prompt:
            return QUESTIONS
        if "high-level insights" in prompt:
            return insights
        if "broad plan" in prompt:
            return "1. 08:00 walk around\n2. 12:00 talk to the others"
        if "hour-by-hour" in prompt:
            return "08:00 walk around\n09:00 walk around\n10:00 talk to the others"
        if prompt.rstrip().startswith("It is day") and "Should " in prompt:
            return "No"
        decomposing = _TOTAL.search(prompt)
        if decomposing:
            return actions_reply(decomposing.group(1), int(decomposing.group(2)))
        chatting = _CHATTING.search(prompt)
        if chatting:
            name, other, said = chatting.groups()
            count = 0 if said == "(nothing yet)" else len(said.splitlines())
            line = f"{name} to {other}, line {count + 1}"
            return json.dumps({"utterance": line, "end": count + 1 >= talk_lines})
        if "initiate a conversation with" in prompt:
            return talk
        if "Choose your next move" in prompt:
            return move
        if "Summarise" in prompt:
            return "a summary"
        interview = _INTERVIEW.search(prompt)
        if interview:
            return interview_answer(*interview.groups())
        found = _NAME.search(prompt)
        name = found.group(1) if found else "?"
        return message(name) if message else f"hello from {name}"

    return reply


def actions_reply(name: str, total: int) -> str:
    """A decomposition in the task_decomp format: 15-minute actions, the last to the end."""
    lines, left, n = [], total, 1
    while left > 0:
        minutes = 15 if left > 15 and n < 4 else left
        left -= minutes
        lines.append(
            f"{n}) {name} is doing task {n} (duration in minutes: {minutes}, minutes left: {left})"
        )
        n += 1
    return "\n".join(lines)


def interview_answer(recalled: str, question: str) -> str:
    """A probe's answer from what the agent was shown: yes when its recollection names the
    other agent (Do you know X?) or a word of five letters or more of the question."""
    asked = _KNOWS.match(question)
    words = [asked.group(1)] if asked else re.findall(r"[a-z]{5,}", question.lower())
    known = any(re.search(rf"\b{re.escape(w)}\b", recalled, re.IGNORECASE) for w in words)
    return "Yes, I heard about it." if known else "No, I do not."
