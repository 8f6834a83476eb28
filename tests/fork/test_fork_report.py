"""The report's Branches section: a parent forked at 1:4 with a researcher's de-escalating
guard reply, continued on 3 models x 2 repetitions, shows 6 branches in its tree, the branches
side by side with the parent from the fork point (measured from there too), and a table by
model; the page parses, escapes the edit, and renders in headless Chromium. A fork sweep of
3 models x 2 repetitions lands its 6 branches in the tree of the sweep's report (its parent
drawn outside the scope) and of the parent's."""

from __future__ import annotations

import shutil
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from branch_family import AT, EDIT, forked_family, stub_models

from simulator.analysis.report import build_context, render
from simulator.analysis.report.branches_context import MAX_COLUMNS
from simulator.analysis.scope import Scope, resolve_scope
from simulator.store.store import open_store_uri

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))
from cdp_browser import Browser  # tests/analysis/cdp_browser.py

needs_chromium = pytest.mark.skipif(
    shutil.which("chromium") is None,
    reason="Debian's chromium is not installed (.ci/run installs it: apt-get install chromium)",
)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """3 models x 2 repetitions forked from one parent, and the report of the parent."""
    base = tmp_path_factory.mktemp("fork_report")
    with pytest.MonkeyPatch.context() as monkeypatch, stub_models(monkeypatch):
        store = open_store_uri(str(base / "store"))
        try:
            parent, forks = forked_family(store)
            ctx = build_context(store, parent)
            page = base / "report.html"
            page.write_text(render(ctx), encoding="utf-8")
            sweep_like = _forks_only(store, parent, [f for ids in forks.values() for f in ids])
        finally:
            store.close()
    return {
        "base": base,
        "parent": parent,
        "forks": forks,
        "ctx": ctx,
        "page": page,
        "sweep_like": sweep_like,
    }


def _forks_only(store, parent: str, fork_ids: list[str]):
    """A scope holding the forks but not their parent, as a fork sweep's does."""
    family = resolve_scope(store, parent)
    scope = Scope(
        "experiment", family.experiment_id, family.experiment_id, family.experiment, None, fork_ids
    )
    return build_context(store, family.experiment_id, scope=scope)


def test_the_tree_holds_six_branches_from_one_fork_point(built):
    branches = built["ctx"].branches
    [root] = branches["tree"]
    assert root["id"] == built["parent"] and not root["outside"]
    [point] = root["points"]
    assert point["at"] == AT and point["edits"] == [EDIT]
    ids = [b["id"] for b in point["branches"]]
    assert ids == [f for model in ("a", "b", "c") for f in built["forks"][model]]
    assert {b["models"] for b in point["branches"]} == {"ollama:a", "ollama:b", "ollama:c"}
    assert [b["seed"] for b in point["branches"]] == [5, 6] * 3
    assert all(b["edited"] and b["n"] == 4 and b["status"] == "done" for b in point["branches"])
    assert branches["n_branches"] == 6 and branches["n_points"] == 1


def test_side_by_side_starts_at_the_fork_point_and_measures_the_parent_from_there(built):
    [view] = built["ctx"].branches["points"]
    parent, *columns = view["columns"]
    assert parent["id"] == built["parent"] and len(columns) == 6
    assert view["places"] == ["1:4", "1:5", "1:6", "1:7"]
    assert [m["index"] for m in view["shared"]] == [0, 1, 2, 3] == list(range(view["shared_total"]))
    assert parent["measures"]["messages"] == 4  # of its 8: the ones from the fork point
    assert all(c["measures"]["messages"] == 4 for c in columns)
    first_row = view["grid"][0]
    assert first_row[0]["text"] != EDIT and all(m["text"] == EDIT for m in first_row[1:])
    assert all(m["original_text"] == first_row[0]["text"] for m in first_row[1:])


def test_by_model_aggregates_each_models_repetitions(built):
    [view] = built["ctx"].branches["points"]
    *models, parent = view["by_model"]
    assert [g["model"] for g in models] == ["ollama:a", "ollama:b", "ollama:c"]
    assert parent.get("parent") and parent["model"] == "ollama:a"
    words = [g["stats"]["words"] for g in models]
    assert all(n == 2 for _, _, n in words)
    assert words[0][0] < words[1][0] < words[2][0]  # model c writes the longest replies
    for group in models:  # the first reply after the edit: each repetition's own 1:5
        assert [(r[3]["day"], r[3]["index"]) for r in group["replies"]] == [(1, 5), (1, 5)]
        assert all(r[3]["text"].startswith(group["model"][-1] + ":") for r in group["replies"])
    assert (parent["replies"][0][3]["day"], parent["replies"][0][3]["index"]) == (1, 5)


def test_a_fork_sweeps_scope_draws_the_parent_outside_it(built):
    ctx = built["sweep_like"]
    [root] = ctx.branches["tree"]
    assert root["id"] == built["parent"] and root["outside"]
    assert len(root["points"][0]["branches"]) == 6
    [view] = ctx.branches["points"]
    assert view["parent"]["outside"] and view["parent"]["measures"]["messages"] == 4
    assert len(ctx.cells) == 3  # the parent is drawn, not measured as one of the cells


class _Page(HTMLParser):
    """Counts what the structure assertions need: elements by (tag, class) inside #branches."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, set]] = []
        self.found: list[tuple[str, set, list]] = []  # (tag, classes, ancestors' ids)
        self.ids: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        ids = [a for _, a in self.stack] + [attrs.get("id")]
        self.found.append((tag, classes, [i for i in ids if i]))
        if tag not in ("br", "meta", "img", "input"):
            self.stack.append((tag, attrs.get("id")))
        if attrs.get("id"):
            self.ids.append(attrs["id"])

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if any(i == "branches" for _, i in self.stack):
            self.text.append(data)

    def count(self, tag: str, cls: str, inside: str) -> int:
        return sum(1 for t, c, ids in self.found if t == tag and cls in c and inside in ids)


def test_the_page_has_the_section_and_escapes_the_edit(built):
    html = built["page"].read_text(encoding="utf-8")
    page = _Page()
    page.feed(html)
    assert "branches" in page.ids and '<a href="#branches">Branches</a>' in html
    assert page.count("li", "branch", "branch-tree") == 6
    assert page.count("li", "fork-point", "branch-tree") == 1
    assert page.count("th", "parent", "branches") == 1
    assert page.count("th", "branch", "branches") == 6
    assert page.count("tr", "model-row", "branches") == 3
    assert page.count("tr", "parent-row", "branches") == 1
    assert "<script>alert('x')</script>" not in html  # the edit is text, never markup
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert EDIT in "".join(page.text)


def test_a_conversation_without_forks_has_no_branches_section(tmp_path, monkeypatch):
    from fork_helpers import parent_chat

    with stub_models(monkeypatch):
        store = open_store_uri(str(tmp_path / "store"))
        try:
            lone = parent_chat(store, messages=2)
            ctx = build_context(store, lone)
        finally:
            store.close()
    assert ctx.branches is None
    assert 'id="branches"' not in render(ctx)


def test_twenty_branches_stay_readable(tmp_path, monkeypatch):
    """The scenario: 10 continuations on each of two models, compared in the report."""
    with stub_models(monkeypatch):
        store = open_store_uri(str(tmp_path / "store"))
        try:
            parent, _ = forked_family(store, models=("a", "b"), repetitions=10, messages=6)
            ctx = build_context(store, parent)
        finally:
            store.close()
    [view] = ctx.branches["points"]
    assert len(view["columns"]) == MAX_COLUMNS + 1  # the parent's and the first 12
    assert view["columns_left_out"] == 20 - MAX_COLUMNS
    assert [(g["model"], g["n"]) for g in view["by_model"]] == [
        ("ollama:a", 10),
        ("ollama:b", 10),
        ("ollama:a", 1),
    ]
    html = render(ctx)
    assert f"The first {MAX_COLUMNS} of 20 branches are shown side by side" in html
    assert html.count('class="branch-node branch"') == 20


@needs_chromium
def test_chromium_renders_the_branches(built):
    browser = Browser(built["base"] / "profile", timeout=30)
    try:
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            session=browser.session,
            width=1280,
            height=900,
            deviceScaleFactor=1,
            mobile=False,
        )
        browser.open(built["page"].as_uri())
        browser.wait_for("document.body && document.body.dataset.ready === '1'", 20)
        counts = browser.js(
            "[document.querySelectorAll('#branch-tree li.branch').length,"
            " document.querySelectorAll('#branches table.side-by-side thead th').length,"
            " document.querySelectorAll('#branches table.cross-model tr.model-row').length,"
            " document.querySelectorAll('script:not([type])').length]"
        )
        assert counts == [6, 8, 3, 1]  # place + parent + 6 branches; the page's one script
        wrap = browser.js(
            "(() => { const w = document.querySelector('#branches .sbs-wrap');"
            " return [w.scrollWidth > w.clientWidth, w.getBoundingClientRect().width]; })()"
        )
        assert wrap[0] and wrap[1] < 1280  # seven columns scroll inside the page's width
        shown = browser.js(
            "document.querySelector('#branches table.side-by-side td.edited').innerText"
        )
        assert "Put the baton down" in shown and "<script>alert('x')</script>" in shown
        assert browser.js("document.querySelectorAll('#branches script').length") == 0
        replies = browser.js(
            "(() => { const t = document.querySelector('#branches table.cross-model');"
            " const items = [...document.querySelectorAll('#branches .first-replies li')];"
            " return [items.length, t.querySelectorAll('li').length,"
            " Math.max(...[...t.querySelectorAll('tr')].map(r => r.offsetHeight))]; })()"
        )
        # each repetition's first reply (6 branches and the parent's) in a list under the
        # table, so a long reply cannot stretch the table's rows
        assert replies[:2] == [7, 0] and replies[2] < 120
    finally:
        browser.close()


@pytest.fixture
def fork_sweep_pages(run_cli, tmp_path, monkeypatch):
    """A fork sweep of 3 models x 2 repetitions from one prefix, run, and the reports of the
    sweep and of its parent, written by `llm-sim report`."""
    from fork_helpers import parent_chat

    with stub_models(monkeypatch) as server:
        env = {"SIM_DB": str(tmp_path / "store"), "SIM_USER": "alice", "OLLAMA_HOST": server.url}
        store = open_store_uri(env["SIM_DB"])
        try:
            parent = parent_chat(store, messages=8, model="ollama:a")
            experiment = store.conversations.get(parent)["experiment_id"]
        finally:
            store.close()
        models = [arg for m in ("a", "b", "c") for arg in ("--llm", f"ollama:{m}")]
        args = ["sweep", "create", experiment, "--fork-from", parent, "--fork-at", AT]
        created = run_cli(
            [*args, "--fork-edit", EDIT, *models, "--repetitions", "2", "--yes", "--json"], env=env
        )
        assert created.code == 0, created.err
        sweep = created.json()["sweep_id"]
        ran = run_cli(["sweep", "run", sweep, "--json"], env=env)
        assert ran.code == 0, ran.err
        pages = {}
        for name, target in (("sweep", sweep), ("parent", parent)):
            pages[f"{name}_page"] = tmp_path / f"{name}.html"
            done = run_cli(["report", target, "-o", str(pages[f"{name}_page"])], env=env)
            assert done.code == 0, done.err
    return {"parent": parent, "sweep": sweep, "base": tmp_path, **pages}


def test_a_fork_sweep_lands_six_branches_in_the_tree(fork_sweep_pages):
    for name, outside in (("sweep", True), ("parent", False)):
        page = _Page()
        page.feed(fork_sweep_pages[f"{name}_page"].read_text(encoding="utf-8"))
        assert page.count("li", "branch", "branch-tree") == 6, name
        assert page.count("li", "root", "branch-tree") == 1, name
        assert page.count("tr", "model-row", "branches") == 3, name
        assert ("not in this scope" in "".join(page.text)) is outside, name


@needs_chromium
def test_chromium_shows_the_fork_sweeps_six_branches(fork_sweep_pages):
    browser = Browser(fork_sweep_pages["base"] / "profile", timeout=30)
    try:
        browser.open(fork_sweep_pages["sweep_page"].as_uri())
        browser.wait_for("document.body && document.body.dataset.ready === '1'", 20)
        tree = browser.js(
            "Array.from(document.querySelectorAll('#branch-tree li.branch'))"
            ".map(li => li.dataset.conversation)"
        )
        assert len(tree) == len(set(tree)) == 6
        root = browser.js("document.querySelector('#branch-tree li.root').dataset.conversation")
        assert root == fork_sweep_pages["parent"]
        listed = browser.js(
            "Array.from(document.querySelectorAll('#conv-list button')).map(b => b.textContent)"
        )
        assert sorted(t.split(" ")[0] for t in listed) == sorted(tree)  # the sweep's six
    finally:
        browser.close()
