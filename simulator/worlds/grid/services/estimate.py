"""A grid run's calls before it runs (services/estimate_parts.py): each agent's three prompts
(message, memory with the summary memory, move) filled as the run fills them, every reply
standing in at the model's expected reply length.

What an agent hears each step is sized from the density of the field (the others within the
radius on average, `heard_per_step`), and every agent stands at the field's centre: agents move,
so no starting draw is a better guide (and an unseeded plan gives the same estimate each time).
The summary memory is one reply long; a stream shows its top k records. The probe's interviews
and the personality test are sized from their own templates. Every agent's call of a stage goes
out at once, so a step's wall time is one call per stage. A memory stream adds one rating per
record (memory/services/estimate.py).
"""

from __future__ import annotations

from collections import Counter

from simulator.memory.services.estimate import stream_calls
from simulator.services.estimate_parts import CallTally, Shape
from simulator.services.experiments import ExperimentView
from simulator.worlds.grid.domain import rules as grid
from simulator.worlds.grid.domain.experiment import STAGES, GridSpec
from simulator.worlds.grid.domain.personality import load_inventory
from simulator.worlds.grid.prompting.interviews import knows_messages, news_messages


def heard_per_step(run: GridSpec) -> float:
    """How many others an agent hears in a step on average: the others times the share of the
    field within the radius (exact on a torus; a little more than the truth off one, where the
    edges cut the square). Agents move, so no one starting draw is a better guide."""
    world = run.world
    side = 2 * world.radius + 1
    share = min(side, world.width) / world.width * min(side, world.height) / world.height
    return (world.agents - 1) * share


def run_calls(view: ExperimentView, run: GridSpec, shape: Shape) -> list[CallTally]:
    world, llm = run.world, run.llm
    known = {llm.key: llm}
    reply = shape.placeholder(llm)
    names = run.names
    heard = heard_per_step(run)
    line = f"{names[0]}: {reply}"  # one heard message (grid.received_text's line)
    line_tokens = shape.tokens(llm, [{"content": line}], known) - shape.counter(llm).per_message
    memory = run.memory
    if memory.kind == "summary":
        remembered = reply
    elif memory.is_stream:
        remembered = "\n".join(f"- {reply}" for _ in range(memory.top_k or 0))
    else:
        remembered = ""
    stages = STAGES if memory.kind == "summary" else tuple(s for s in STAGES if s != "memory")
    prompts = view.experiment.prompts  # type: ignore[attr-defined]
    per_step = 0.0
    fields = []
    for i in range(world.agents):
        x, y = world.width // 2, world.height // 2  # where an agent stands: see the docstring
        fields.append(
            {
                "name": names[i],
                "x": x,
                "y": y,
                "width": world.width,
                "height": world.height,
                "agents": world.agents,
                "radius": world.radius,
                "memory": remembered,
                "messages": grid.NO_MESSAGES if heard < 0.5 else "",
                "identity": run.persona(i).identity,
                "plan": "",
                "action": "",
            }
        )
        for stage in stages:
            template = getattr(prompts, stage)
            text = template.format(**fields[i])
            per_step += shape.tokens(llm, [{"role": "user", "content": text}], known)
            if heard >= 0.5 and "{messages}" in template:
                per_step += heard * line_tokens
    calls = len(stages) * world.agents * world.steps
    tokens_in = round(per_step * world.steps)
    serial = len(stages) * world.steps
    extra_calls, extra_in, extra_serial = _probes(run, shape, fields, known)
    out = (calls + extra_calls) * shape.reply_tokens(llm)
    tallies = [
        CallTally.of(llm, calls + extra_calls, tokens_in + extra_in, out, serial + extra_serial)
    ]
    if memory.is_stream:
        records: Counter[tuple[str, str]] = Counter()
        for name in names:
            records[(name, f"I said: {reply}")] += world.steps
            records[(name, f"{names[0]} said: {reply}")] += round(heard * world.steps)
        queries = Counter({reply: world.agents * world.steps})
        tallies += stream_calls(memory, llm, records, queries, world.steps, shape, known)
    return tallies


def _probes(run: GridSpec, shape: Shape, fields: list[dict], known: dict) -> tuple[int, int, int]:
    """The interviews after the last step and the personality test's items: calls, tokens in,
    and the waits (each batch goes out at once)."""
    llm, names = run.llm, run.names
    recalled = shape.placeholder(llm)  # what the agent recalls: a reply long
    calls = tokens = serial = 0
    probe = run.probe
    if probe is not None and probe.news is not None:
        for i, name in enumerate(names):
            asked = news_messages(name, run.persona(i).identity, recalled, probe.news.question)
            tokens += shape.tokens(llm, asked, known)
        calls, serial = calls + len(names), serial + 1
    if probe is not None and probe.relationships:
        for i, name in enumerate(names):
            for other in names:
                if other != name:
                    asked = knows_messages(name, run.persona(i).identity, recalled, other)
                    tokens += shape.tokens(llm, asked, known)
                    calls += 1
        serial += 1
    test = run.personality
    if test is not None:
        items = load_inventory(test.inventory).items
        for field in fields:
            for item in items:
                text = test.prompt.format(**field, statement_a=item.a, statement_b=item.b)
                tokens += len(test.at) * shape.tokens(llm, [{"content": text}], known)
        calls += len(test.at) * len(items) * len(fields)
        serial += len(test.at)
    return calls, tokens, serial


def calls_at_least(run: GridSpec) -> bool:
    return run.memory.is_stream  # reflections and plans depend on the ratings
