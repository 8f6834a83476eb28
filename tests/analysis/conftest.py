"""The prison paper's release cut, imported once per store flavour for the tests that only read
it (the paper's outcome and toxicity tables): one import through the CLI instead of one a test."""

from __future__ import annotations

import uuid

import pytest
from in_process import run_cli_in_process
from paper_import import import_cut
from settings_isolation import UNSET_SETTINGS

from simulator.analysis.prison_paper.rows import PaperConversation

UNSET = UNSET_SETTINGS  # what the root conftest's `isolated_settings` unsets


@pytest.fixture(scope="session", params=["mongomock", "embedded", "wire"])
def paper_cut(request, tmp_path_factory) -> tuple[PaperConversation, ...]:
    """The cut as the paper's analysis reads it, from a database of its own on each flavour
    (as the root conftest's `store_uri`), with settings of its own (no .env, config or data
    of the developer's)."""
    base = tmp_path_factory.mktemp("paper-cut")
    if request.param == "mongomock":
        uri = f"mongomock://{uuid.uuid4().hex}"
    elif request.param == "embedded":
        uri = str(base / "store")
    else:
        uri = request.getfixturevalue("wire_server")
    env: dict = dict.fromkeys(UNSET)  # None: unset for the call
    env.update(
        SIM_DATA_DIR=str(base / "data"),
        SIM_CONFIG_DIR=str(base / "config"),
        SIM_LOG_DIR=str(base / "logs"),
    )
    return tuple(import_cut(run_cli_in_process, uri, env))
