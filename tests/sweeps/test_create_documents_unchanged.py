"""`sweep create` stores the same conversation documents, field for field and in the same order,
as the version that built every document on its own: a fixture of a small sweep's stored
documents (seeded and unseeded, on the embedded store) is compared with a fresh create. The
random ids (conversation, sweep, experiment) and the creation time are the only fields that may
differ, and each stored document's bytes are `bson.encode` of it.

Regenerate (only when the stored documents are meant to change):
    python tests/sweeps/test_create_documents_unchanged.py --write
"""

from __future__ import annotations

import gzip
import json
import sys
import tempfile
import uuid
from pathlib import Path

import bson

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from simulator.domain.yaml_io import load_model  # noqa: E402
from simulator.services import experiments as exp_service  # noqa: E402
from simulator.services import sweeps as sweep_service  # noqa: E402
from simulator.store.database import open_database  # noqa: E402
from simulator.store.embedded import table_of  # noqa: E402
from simulator.store.store import open_store  # noqa: E402
from simulator.worlds.chat.domain.sweep import SweepSpec  # noqa: E402

PAPER = REPO / "prompts" / "experiments" / "prison_paper.yaml"
PAPER_SWEEP = REPO / "prompts" / "sweeps" / "prison_paper.yaml"
FIXTURE = Path(__file__).with_name("fixtures") / "sweep_create_documents.json.gz"
VARYING = {
    "_id": "<id>",
    "created_at": "<created_at>",
    "sweep_id": "<sweep_id>",
    "experiment_id": "<experiment_id>",
}


def stored_documents(folder: Path) -> dict[str, list[str]]:
    """Each case's stored conversations in stored order, as JSON text keeping field order."""
    found: dict[str, list[str]] = {}
    for name, seed in (("seeded", 2024), ("unseeded", None)):
        store = open_store(open_database(str(folder / name), f"t_{uuid.uuid4().hex[:8]}"))
        try:
            view = exp_service.import_yaml(store, PAPER, "ana")
            spec = load_model(PAPER_SWEEP, SweepSpec, "sweep").model_copy(
                update={"repetitions": 2, "llms": ["mock:a", "mock:b"], "seed": seed}
            )
            sweep_service.create(store, view, spec, "ana")
            table = table_of(store.db.conversations)
            query = f"SELECT doc FROM {table._table_name} ORDER BY rowid"
            found[name] = [_text(raw) for (raw,) in table._connection.execute(query)]
        finally:
            store.close()
    return found


def _text(raw: bytes) -> str:
    doc = bson.decode(bytes(raw))
    # the bytes too are what the store's encoder writes for this document (store/derived_docs.py
    # joins pieces of it: they must add up to exactly that)
    assert bson.encode(doc) == bytes(raw)
    for name, placeholder in VARYING.items():
        assert name in doc, name
        doc[name] = placeholder
    return json.dumps(doc)


def test_created_documents_equal_the_fixture(tmp_path):
    expected = json.loads(gzip.decompress(FIXTURE.read_bytes()))
    got = stored_documents(tmp_path)
    assert set(got) == set(expected)
    for name, docs in expected.items():
        assert len(got[name]) == len(docs) == 160, name
        for index, (want, have) in enumerate(zip(docs, got[name], strict=True)):
            assert have == want, (name, index)


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    with tempfile.TemporaryDirectory() as folder:
        text = json.dumps(stored_documents(Path(folder)), indent=0) + "\n"
        FIXTURE.write_bytes(gzip.compress(text.encode(), mtime=0))
    print(f"wrote {FIXTURE}")
