"""The reference tool's documents as this tool's experiments and conversations. Pure.

One place the import service reads from: one experiment document, or one conversation document
with its messages, turned into what this tool stores, or `Unconvertible` with the reason. The
work is in `reference_experiment`, `reference_conversation` and, shared by both,
`reference_source` (ids, dates, placeholders).
"""

from __future__ import annotations

from simulator.domain.reference_conversation import (
    RESEARCHER,
    ConversationImport,
    conversation_id_for,
    conversation_key_for,
    convert_conversation,
)
from simulator.domain.reference_experiment import (
    REFERENCE_NUM_CTX,
    SECTION_TYPES,
    STARTING_PROMPT,
    ExperimentImport,
    convert_experiment,
    convert_llm,
    convert_llms,
    convert_model,
    experiment_id_for,
    llm_signature,
    ref_sections,
    reference_order,
)
from simulator.domain.reference_source import (
    TOOL,
    Unconvertible,
    convert_text,
    oid_text,
    source_block,
)

__all__ = [
    "REFERENCE_NUM_CTX",
    "RESEARCHER",
    "SECTION_TYPES",
    "STARTING_PROMPT",
    "TOOL",
    "ConversationImport",
    "ExperimentImport",
    "Unconvertible",
    "conversation_id_for",
    "conversation_key_for",
    "convert_conversation",
    "convert_experiment",
    "convert_llm",
    "convert_llms",
    "convert_model",
    "convert_text",
    "experiment_id_for",
    "llm_signature",
    "oid_text",
    "ref_sections",
    "reference_order",
    "source_block",
]
