"""What a run without a seed can and cannot reproduce, in one sentence for its header."""

from __future__ import annotations

from simulator.domain.llm_choice import LLMChoice


def unseeded_note(choices: list[LLMChoice | None]) -> str:
    """What runs without a seed: nothing is reproducible, unless the LLMs carry seeds of their
    own, which then every call of theirs uses as it is."""
    seeds = {c.params.seed for c in choices if c is not None} - {None}
    own = [str(s) for s in sorted(seeds)]
    if not own:
        return "seed: none (speaker choice and sampling are not reproducible)"
    return (
        "seed: none (speaker choice is not reproducible; every model call uses its LLM's own "
        f"seed: {', '.join(own)})"
    )
