"""The prison paper's failure and persuasion measures (Tables 2-6 and 8-13, Figures 2 and 4)
in one call, as the authors' failures_broken_down_llm.py and persuasion_analysis.py compute
them from the adjudicated labels. Each table's rows are groups with their n and 95% interval.
"""

from __future__ import annotations

from simulator.analysis.prison_paper.failures import failures_by_model, failures_by_scenario
from simulator.analysis.prison_paper.persuasion import (
    MODEL_GOAL,
    PERSONAS,
    outcome_distribution,
    persuasion_tables,
    strict_table,
    success_thirds,
)
from simulator.analysis.prison_paper.persuasion_toxicity import toxicity_by_outcome
from simulator.analysis.prison_paper.rows import PaperConversation
from simulator.analysis.prison_paper.table import PaperTable

POOLED = "Tables 8-12, pooled"
GROUPINGS = (
    (("model",), "model", POOLED),
    (("goal",), "goal", POOLED),
    (("guard_persona",), "guard_persona", POOLED),
    (("prisoner_persona",), "prisoner_persona", POOLED),
    (MODEL_GOAL, "model_goal", "Table 8"),
    (PERSONAS, "model_goal_personas", "Tables 9-12"),
)


def outcome_tables(
    conversations: list[PaperConversation], strict: dict[str, str] | None = None
) -> list[PaperTable]:
    """Every failure and persuasion table, in a stable order with stable keys.

    `strict`: the authors' strict goal labels (GOAL_STRICT) by conversation id, for Table 13's
    strict rows; without them those rows have no value.
    """
    conversations = list(conversations)
    tables = [failures_by_model(conversations), failures_by_scenario(conversations)]
    for names, suffix, ref in GROUPINGS:
        tables += persuasion_tables(conversations, names, suffix, ref)
    tables.append(strict_table(conversations, strict))
    tables += [outcome_distribution(conversations), success_thirds(conversations)]
    tables += toxicity_by_outcome(conversations)
    return tables
