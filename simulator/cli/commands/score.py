"""`llm-sim score TARGET --scorer SPEC [--llm MODEL]`: scores beside the transcript, resumable."""

from __future__ import annotations

import click

from simulator.cli.context import AppContext
from simulator.cli.interrupts import FixedNote, run_until_stopped
from simulator.domain.plural import count
from simulator.llm.access import LLMAccess
from simulator.services import scoring


@click.command("score")
@click.argument("target")
@click.option(
    "--scorer",
    "scorer_spec",
    required=True,
    metavar="SPEC",
    help="judge:RUBRIC (name or YAML path), classifier:MODEL, python:module:function, "
    "moderation:MODEL (the OpenAI moderation API, e.g. moderation:omni-moderation-latest).",
)
@click.option(
    "--llm", metavar="MODEL", help="Model that judges (judge: scorers), e.g. ollama:llama3."
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 256),
    default=scoring.DEFAULT_CONCURRENCY,
    show_default=True,
    help="Conversations scored at once (each backend's pool still limits its calls).",
)
@click.option("--json", "as_json", is_flag=True, help="Print only the counts, as JSON.")
@click.pass_obj
def score(
    app: AppContext,
    target: str,
    scorer_spec: str,
    llm: str | None,
    concurrency: int,
    as_json: bool,
) -> None:
    """Score the finished conversations of TARGET (exp_…, sweep_… or conv_…).

    Items you already scored are skipped, so running it again continues where it stopped;
    another user's scores are theirs and skip nothing. Failed judgements are not stored and are
    tried again next time.
    """
    store = app.store

    def progress(done: int, total: int, counts: dict) -> None:
        if not as_json:
            app.err.print(
                f"{done}/{total} conversations: {counts['scored']} scored, "
                f"{counts['skipped']} skipped, {counts['failed']} failed"
            )

    async def go() -> dict:
        llms = LLMAccess()
        try:
            return await scoring.score_target(
                store,
                target,
                scorer_spec,
                llm=llm,
                user=app.user,
                llms=llms,
                on_progress=progress,
                concurrency=concurrency,
            )
        finally:
            await llms.aclose()

    stopped = FixedNote(  # Ctrl-C and SIGTERM stop at once; what was scored stays stored
        "Stopped: what was scored is stored; run the same command again to score the rest.",
        "run the same command again",
    )
    result = run_until_stopped(lambda stop: go(), app.err, stopped)
    if as_json:
        app.print_json(result)
        return
    app.console.print(
        f"[bold]{result['scorer']}[/bold] on {result['target']}: {result['scored']} scored, "
        f"{result['skipped']} already scored, {result['failed']} failed "
        f"({count(result['conversations'], 'finished conversation')}"
        + (f", {result['not_done']} not finished and left out)" if result["not_done"] else ")")
    )
    app.console.print(
        f"Scored as {result['scored_by']}: only your own scores count as already scored.",
        markup=False,
    )
    for failure in result["failures"][:10]:
        app.console.print(f"  failed {failure['target_id']}: {failure['error']}")
    if result["failed"]:
        app.console.print("Failed items are not stored; run the same command again to retry them.")
