"""Every documented maximum in one place, so checks, messages and the documentation agree.

Each limit keeps a bad or hostile input from hanging the tool or filling memory: they are checked
before anything is expanded, allocated or written.
"""

from __future__ import annotations

# YAML files (experiments and sweeps)
MAX_YAML_BYTES = 1_000_000  # a whole experiment with 20 roles fits in well under 100 kB
MAX_YAML_ALIASES = 100  # `*name` references in one file
MAX_YAML_DEPTH = 32  # nested mappings/lists
MAX_YAML_ITEMS = 10_000  # entries in one list or mapping
MAX_YAML_NODES = 50_000  # values in the file, every alias expanded (the prison has ~200)
MAX_INT_DIGITS = 20  # digits in one whole number (2**63 has 19)

# Numbers in experiments, runs and sweeps
MAX_AGENTS_PER_ROLE = 100
MAX_ROLES = 20  # roles in one experiment
# cells x repetitions, computed before expanding. A sweep of 1,000,000 is planned and stored on
# the embedded store in about a minute (bench/sweep_create.py); its plan holds one small record
# per conversation (a few hundred MB at the maximum), the documents are built as they are stored.
MAX_SWEEP_CONVERSATIONS = 1_000_000
MAX_SEED = 2**63 - 1  # seeds are 0..MAX_SEED (a signed 64-bit integer, as servers store them)
MAX_EDIT_CHARS = 100_000  # a researcher's edited message (`fork --edit`, a fork sweep's edit)


def sweep_size(spec, slots: dict[str, list[str]] | None = None) -> int:
    """Conversations a sweep spec expands to, computed without expanding it.

    `slots` are the experiment's variant slots (`variant_slots(experiment)`); without them a
    variant axis of "all" counts once, so the figure is a lower bound. Cells that have more days
    than messages allow are left out, as `cells()` does.
    """
    llms = len(spec.llm_assignments) or len(spec.llms) or 1
    days = min(spec.days, spec.total_messages // 2) if spec.every_day_count else 1
    agents = 1
    if spec.every_agent_combination:
        for count in spec.agents.values():
            agents *= max(count, 1)
    variants = 1
    lookup = {name.lower(): names for name, names in (slots or {}).items()}
    for name, wanted in spec.variants.items():
        if wanted == "all":
            variants *= max(len(lookup.get(str(name).strip().lower(), [])), 1)
        else:
            variants *= max(len(wanted), 1)
    return llms * days * agents * len(spec.speaker_methods) * variants * spec.repetitions


def check_sweep_size(spec, slots: dict[str, list[str]] | None = None) -> None:
    """ValueError when a sweep would expand past MAX_SWEEP_CONVERSATIONS (nothing is expanded)."""
    size = sweep_size(spec, slots)
    if size > MAX_SWEEP_CONVERSATIONS:
        raise ValueError(
            f"the sweep would make {size:,} conversations, more than the "
            f"{MAX_SWEEP_CONVERSATIONS:,} a sweep may hold; use fewer repetitions, models, "
            "speaker methods, variants or agent combinations, or split it into several sweeps"
        )
