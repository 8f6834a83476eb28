"""`info` counts this tool's experiments only; the reference tool's documents in the same
database are counted apart, with the command that imports them."""

from __future__ import annotations

import uuid

from simulator.store.database import open_database
from simulator.testing.reference_fixture import build_prison_database


def test_info_counts_only_its_own_experiments_and_the_reference_tools_apart(sim, store_uri):
    name = f"t_{uuid.uuid4().hex[:10]}"
    raw = open_database(store_uri, name)
    build_prison_database(raw.db)  # 2 experiments and 4 conversations of the reference tool
    raw.close()

    data = sim("--db-name", name, "info", "--json", db=store_uri).json()
    assert data["experiments"] == 0  # was 2: the reference tool's were counted as ours
    assert data["reference_tool_experiments"] == 2
    assert data["reference_tool_conversations"] == 4
    assert "llm-sim import reference --from" in data["reference_tool_import"]
    assert f"--db-name {name}" in data["reference_tool_import"]

    text = sim("--db-name", name, "info", db=store_uri).out
    assert "reference tool experiments: 2" in text

    # imported into the same database: the copies are this tool's, the originals stay apart
    imported = sim(
        "--db-name",
        name,
        "import",
        "reference",
        "--from",
        store_uri,
        "--db-name",
        name,
        "--yes",
        db=store_uri,
    )
    assert imported.code == 0, imported.out + imported.err
    data = sim("--db-name", name, "info", "--json", db=store_uri).json()
    assert (data["experiments"], data["reference_tool_experiments"]) == (2, 2)


def test_info_without_reference_documents_says_nothing_about_them(sim, store_uri):
    data = sim("--db-name", f"t_{uuid.uuid4().hex[:10]}", "info", "--json", db=store_uri).json()
    assert data["experiments"] == 0
    assert not [key for key in data if key.startswith("reference_tool")]
