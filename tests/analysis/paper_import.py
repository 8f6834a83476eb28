"""The prison paper's release cut (tests/fixtures/prison_paper), imported through the real CLI
into a fresh database of a test store and read back as the paper's analysis reads it."""

from __future__ import annotations

import uuid
from pathlib import Path

from simulator.analysis.prison_paper.rows import PaperConversation, paper_conversations
from simulator.analysis.scope import resolve_scope
from simulator.store.database import open_database
from simulator.store.store import open_store

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "prison_paper"
MAPPING = REPO / "prompts" / "mappings" / "prison_paper.yaml"


def import_cut(run_cli, store_uri: str, env: dict | None = None) -> list[PaperConversation]:
    """`env` is laid over the call's settings (an isolated data folder, variables unset)."""
    db_name = f"t_{uuid.uuid4().hex[:10]}"
    env = {**(env or {}), "SIM_DB": store_uri, "SIM_DB_NAME": db_name, "SIM_USER": "alice"}
    result = run_cli(["import", "table", str(MAPPING), "--from", str(FIXTURE), "--json"], env=env)
    assert result.code == 0, result.err
    store = open_store(open_database(store_uri, db_name))
    try:
        return list(
            paper_conversations(store, resolve_scope(store, result.json()["experiment_id"]))
        )
    finally:
        store.close()
