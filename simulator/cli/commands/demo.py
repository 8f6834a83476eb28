"""`llm-sim demo`: the zero-setup path, the shipped prison experiment on the bundled model.

Before it starts, the demo says how long it will take (the bundled model runs on the CPU, where a
few messages can take minutes) and which sampling it uses: the one bench/demo_sampling.py found
least repetitive for SmolLM2 on these prompts, not the experiment's general defaults.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import click

from simulator.cli.commands.run import execute
from simulator.cli.context import AppContext
from simulator.cli.interrupts import FixedNote, run_until_stopped
from simulator.cli.params import SEED
from simulator.domain.llm_choice import LLMChoice
from simulator.domain.params import GenerationParams
from simulator.domain.yaml_io import load_model
from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.llm.base import BackendError, ChatMessage, FatalBackendError
from simulator.prompting.templates import PROMPTS_DIR
from simulator.services import experiments as exp_service
from simulator.store.repositories.experiments import experiment_version
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.domain.spec import ConversationSpec, split_messages
from simulator.worlds.chat.prompting.assembly import render_all
from simulator.worlds.chat.prompting.transcript import agent_messages, day_opening
from simulator.worlds.chat.services import runs as conv_service

PRISON = PROMPTS_DIR / "experiments" / "prison.yaml"
DEMO_MODEL = "local:smollm2"
# The least repetitive of the settings bench/demo_sampling.py measured for SmolLM2 on the prison
# prompts (3 seeds: distinct-2 0.53 and 7% repeated sentences, against 0.36 and 37% for the
# experiment's own temperature 0.7, top_p 0.9, whose replies loop).
DEMO_SAMPLING = GenerationParams(
    temperature=0.9, top_p=0.95, top_k=40, max_tokens=120, repeat_penalty=1.2
)
# Mean completion tokens of SmolLM2 at DEMO_SAMPLING over the 16 calls of two demo runs (seeds 7
# and 8: 106 and 71; replies range from 15 tokens to the 120 of max_tokens); bench/demo_sampling.py
# measured 75 on its own runs. Seeds differ this much, so the estimate is a middle, not a bound.
REPLY_TOKENS = 88


def ensure_prison(app: AppContext) -> exp_service.ExperimentView:
    """The shipped prison experiment, imported once (matched by content version)."""
    experiment = load_model(PRISON, Experiment, "experiment")
    version = experiment_version(experiment)
    for view in exp_service.list_views(app.store, app.user):
        if view.version == version:
            return view
    return exp_service.create(app.store, experiment, app.user)


def with_demo_sampling(spec: ConversationSpec) -> ConversationSpec:
    """Every use of the bundled model samples with DEMO_SAMPLING and cleans its replies of
    echoes (prompting/echoes.py); other models keep the experiment's settings."""

    def tuned(choice: LLMChoice | None) -> LLMChoice | None:
        if choice is None or choice.model != DEMO_MODEL:
            return choice
        return choice.model_copy(update={"params": choice.params.merge(DEMO_SAMPLING)})

    note = f"sampling of {DEMO_MODEL}: {describe_sampling(DEMO_SAMPLING)} (the demo's, measured)"
    uses_demo_model = any(
        c is not None and c.model == DEMO_MODEL
        for c in (*spec.role_llms.values(), spec.manager_llm, spec.summarizer_llm)
    )
    return spec.model_copy(
        update={
            "reply_cleaning": "speakers_echoes" if uses_demo_model else spec.reply_cleaning,
            "defaults_applied": [*spec.defaults_applied, *([note] if uses_demo_model else [])],
            "role_llms": {role: tuned(c) for role, c in spec.role_llms.items()},
            "manager_llm": tuned(spec.manager_llm),
            "summarizer_llm": tuned(spec.summarizer_llm),
        }
    )


def describe_sampling(params: GenerationParams) -> str:
    shown = params.model_dump(exclude_none=True, include={"temperature", "top_p", "top_k"})
    shown["max_tokens"] = params.max_tokens
    shown["repeat_penalty"] = params.repeat_penalty
    return ", ".join(f"{k} {v}" for k, v in shown.items() if v is not None)


@dataclass(frozen=True)
class Pace:
    """Tokens per second of one model on this machine, measured just before the run."""

    prompt_tps: float
    reply_tps: float
    chars_per_token: float


def first_call(experiment: Experiment, spec: ConversationSpec) -> list[ChatMessage]:
    """The messages of the conversation's first call: the first role's system prompt and the
    day's opening, built by the same helpers the engine uses."""
    rendered = render_all(experiment, spec.agents)
    opening = day_opening(rendered["starting message"], [])
    return agent_messages(rendered[experiment.roles[0].name], opening, [], "")  # type: ignore[return-value]


async def measure_pace(choice: LLMChoice, messages: list[ChatMessage]) -> Pace:
    """Time reading the first call's prompt, then a short reply to it. llama.cpp keeps the
    prompt it read, so the run's first call does not read it again: the measurement costs
    about one short reply."""
    llms = LLMAccess()
    backend = llms.get(choice)
    greedy = GenerationParams(temperature=0.0, seed=0)
    try:
        await backend.chat([{"role": "user", "content": "Hi"}], greedy.merge(_tokens(1)))  # load
        read = await backend.chat(messages, greedy.merge(_tokens(1)))
        reply = await backend.chat(messages, greedy.merge(_tokens(24)))
    finally:
        await llms.aclose()
    prompt_tokens = read.tokens_in or 1
    return Pace(
        prompt_tps=prompt_tokens / max(read.latency_s, 1e-3),
        reply_tps=(reply.tokens_out or 1) / max(reply.latency_s, 1e-3),
        chars_per_token=sum(len(m["content"]) for m in messages) / prompt_tokens,
    )


def _tokens(n: int) -> GenerationParams:
    return GenerationParams(max_tokens=n)


def estimate(experiment: Experiment, spec: ConversationSpec, pace: Pace) -> tuple[float, str]:
    """Seconds for the run, and the basis in words. Every call reads its whole prompt (the
    speakers' system prompts differ, so nothing is reused): system prompt, the day's opening
    and the day's transcript so far; then writes about REPLY_TOKENS."""
    rendered = render_all(experiment, spec.agents)
    tokens = {key: len(text) / pace.chars_per_token for key, text in rendered.items()}
    agent_prompt = max(tokens[r.name] for r in experiment.roles) + tokens["starting message"]
    reply = min(REPLY_TOKENS, spec.role_llms[experiment.roles[0].name].params.max_tokens or 10**6)
    prompt_total = calls = summaries = 0
    for day_messages in split_messages(spec.total_messages, spec.days):
        for index in range(day_messages):
            prompt_total += agent_prompt + (index + summaries) * reply
        calls += day_messages
        if "summarizer" in tokens:
            prompt_total += tokens["summarizer"] + day_messages * reply
            summaries += 1
    calls += summaries
    seconds = prompt_total / pace.prompt_tps + calls * reply / pace.reply_tps
    basis = (
        f"{calls} model calls ({spec.total_messages} messages + {summaries} summaries), "
        f"~{prompt_total / calls:,.0f} prompt tokens and ~{reply} reply tokens each; "
        f"measured just now on {_cores()} CPU cores: {pace.prompt_tps:,.0f} prompt tokens/s, "
        f"{pace.reply_tps:,.0f} reply tokens/s"
    )
    return seconds, basis


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def duration(seconds: float) -> str:
    """'40 s', '2 min 10 s'; estimates are rounded to what they can promise."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{max(seconds, 1)} s"
    return f"{seconds // 60} min {seconds % 60} s" if seconds < 600 else f"{seconds // 60} min"


def announce(app: AppContext, experiment: Experiment, spec: ConversationSpec) -> None:
    """Print the sampling and the time estimate before anything runs."""
    models = {c.model: c for c in spec.role_llms.values()}
    for model, choice in models.items():
        why = (
            "the least repetitive for SmolLM2 on these prompts (bench/demo_sampling.py)"
            if model == DEMO_MODEL
            else "the experiment's defaults for this model"
        )
        app.err.print(
            f"Sampling for {model}: {describe_sampling(choice.params)} — {why}.",
            markup=False,
            highlight=False,
        )
    local = [c for c in models.values() if c.model.startswith("local:")]
    if local:
        app.err.print("Measuring this machine's speed…", markup=False)
        try:
            pace = run_until_stopped(
                lambda stop: measure_pace(local[0], first_call(experiment, spec)),
                app.err,
                FixedNote("Stopped before the conversation was stored; nothing to resume."),
            )
        except FatalBackendError as exc:  # e.g. a llama.cpp build this machine cannot run
            raise UserError(str(exc)) from None
        except BackendError as exc:  # the run's own preflight then says what to do
            text = f"Estimate: unavailable ({exc})."
        else:
            seconds, basis = estimate(experiment, spec, pace)
            text = f"Estimate: about {duration(seconds)} ({basis})."
    elif all(m.startswith("mock:") for m in models):
        text = "Estimate: a moment (mock: models answer at once)."
    else:
        text = f"Estimate: none for {', '.join(models)}; its pace shows with the first reply."
    app.err.print(text, markup=False, highlight=False)


@click.command("demo")
@click.option(
    "--messages",
    "total_messages",
    type=int,
    default=6,
    show_default=True,
    help="Agent turns in the demo conversation.",
)
@click.option(
    "--days", type=int, default=2, show_default=True, help="Days the turns are split over."
)
@click.option("--llm", default=DEMO_MODEL, show_default=True, help="Model for every agent.")
@click.option(
    "--seed",
    type=SEED,
    default=7,
    show_default=True,
    help="Seed for speaker choice and sampling (0 to 2^63-1).",
)
@click.option("--json", "as_json", is_flag=True, help="Print only the result, as JSON.")
@click.pass_obj
def demo(
    app: AppContext, total_messages: int, days: int, llm: str, seed: int, as_json: bool
) -> None:
    """Import the prison experiment if absent and run one short conversation, live."""
    view = ensure_prison(app)
    if not as_json:
        app.err.print(
            f"Experiment {view.id} ({view.experiment.name}), 1 guard and 1 prisoner on {llm}."
        )
    spec = conv_service.build_spec(
        view,
        agents="guard=1,prisoner=1",
        total_messages=total_messages,
        days=days,
        llm=llm,
        summarizer_llm=llm,
        seed=seed,
    )
    spec = with_demo_sampling(spec)
    if not as_json:
        announce(app, view.experiment, spec)
    start = time.perf_counter()  # the estimate is of the run, after the measurement
    outcome = execute(app, view, spec, as_json)
    if not as_json:
        app.err.print(
            f"Took {duration(time.perf_counter() - start)}. Stored as {outcome.conversation_id}. "
            f"See it again: llm-sim conversation show {outcome.conversation_id}",
            markup=False,
            highlight=False,
        )
        app.err.print(closing_words(llm), markup=False, highlight=False)
    if outcome.status == "failed":
        raise SystemExit(1)


def closing_words(llm: str) -> str:
    """What the model just used is for, and how to run the same demo on a real one."""
    same = "the same demo on a real model"
    if llm == DEMO_MODEL:
        what = (
            "SmolLM2-135M shows the mechanics (turns, days, summaries, storage, replay), not the "
            "behaviour: a model this small loses the roles within a few turns."
        )
    elif llm.startswith("mock:"):
        what = "mock: models answer with fixed text: they show the mechanics, not the behaviour."
    else:
        return (
            f"Next: llm-sim conversation show ID --prompts shows every exact prompt sent to {llm}."
        )
    return (
        f"{what} Run {same}: llm-sim demo --llm ollama:llama3 (an Ollama server at "
        "OLLAMA_HOST), or OPENAI_BASE_URL=http://localhost:8000/v1 llm-sim demo --llm "
        "openai:MODEL (any OpenAI-compatible server: vLLM, llama.cpp server, LM Studio; "
        "OPENAI_API_KEY for OpenAI itself)."
    )
