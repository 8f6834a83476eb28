"""A property-based fuzzer over experiment YAML, sweep YAML and CLI argument lists.

Each case is one `llm-sim` call in this process against a fresh copy of a small embedded store
(the prison experiment and one stored conversation). The property: it ends with exit 0 or 2,
prints no traceback, and after exit 2 the store is exactly as it was. Used by `test_fuzz.py`
(a few hundred cases, derandomized) and `bench/fuzz_inputs.py` (thousands).

Only `mock:` models are generated where a run could start, so no case loads a model or opens a
network connection; `--speaker manual` is left out (it needs a terminal by design).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from hypothesis import strategies as st

from .harness import PRISON, Outcome, fingerprint, run_cli

MAX_SEED = 2**63 - 1
SLOTS = {
    "Guard/Personality": ["respectful", "abusive", "blank"],
    "Guard/Risks": ["on", "off"],
    "Prisoner/Goal": ["yard_time", "escape"],
    "Prisoner/Personality": ["stubborn", "cooperative", "fearful", "rebellious", "blank"],
    "shared/Researcher oversight": ["on", "off"],
}

NASTY_INTS = [
    0,
    -1,
    1,
    2,
    3,
    4,
    100,
    101,
    2**31,
    2**32,
    MAX_SEED,
    MAX_SEED + 1,
    10**20,
    10**30,
    10**100,
]
NASTY_TEXT = [
    "",
    " ",
    "\t",
    "   ",
    "\u202e",
    "\u200b",
    "\ufeff",
    "x" * 61,
    "x" * 121,
    "x" * 3000,
    "💥",
    "a\x00b",
    "a\x07b",
    "<GUARD_NOUN>",
    "<NOPE>",
    "<GUARD_NOUN",
    "mock:a",
    "mock:",
    "nope:x",
    "local:",
    ":",
    "[/bold]",
    "[red]x",
    "%s%n",
    "{role}",
    "{0}",
    "../../etc/passwd",
    "all",
    "Guard",
    "guard",
    "GUARD",
    "Prisoner",
    "Guard/Personality",
    "abusive",
    "on",
    "off",
    "null",
    "~",
    "yes",
    "no",
    "1e309",
    ".nan",
    "0x10",
    "1_000",
    "١",
    "１",
    "-",
    "*",
    "&a",
    "!!binary",
]
MOCKS = ["mock:a", "mock:b", "mock:x y", "mock:" + "m" * 300]
BAD_MODELS = ["", " ", "mock:", "nope:x", "mock", ":", "MOCK:a", "mock:\u202e", "x" * 400]
INSERTS = [
    ":",
    "-",
    "[",
    "]",
    "{",
    "}",
    "&",
    "*",
    "!",
    "%",
    "@",
    "`",
    "|",
    ">",
    "#",
    "'",
    '"',
    "\t",
    "\u00a0",
    "\ufeff",
    "\x85",
    "\u2028",
    "\\",
    "\n",
    "  ",
    "? ",
    "<<: ",
]
TAGS = [
    "!!binary ",
    "!!set ",
    "!foo ",
    "!!python/name:os.system ",
    "!!timestamp ",
    "!!str ",
    "!!int ",
    "!!float ",
    "!!omap ",
    "!!map ",
    "!!seq ",
    "! ",
]


def scalars() -> st.SearchStrategy:
    return st.one_of(
        st.sampled_from(NASTY_INTS),
        st.sampled_from(NASTY_TEXT),
        st.integers(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.booleans(),
        st.none(),
        st.text(max_size=20),
    )


def values() -> st.SearchStrategy:
    return st.one_of(
        scalars(),
        st.lists(scalars(), max_size=4),
        st.dictionaries(
            st.sampled_from(NASTY_TEXT[:20]) | st.text(max_size=8), scalars(), max_size=3
        ),
    )


def _paths(data, prefix=()) -> list[tuple]:
    found = [prefix]
    if isinstance(data, dict):
        for key, value in data.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found += _paths(value, (*prefix, index))
    return found


def _parent(data, path: tuple):
    for part in path[:-1]:
        data = data[part]
    return data


@st.composite
def mutated(draw, base: dict) -> dict:
    """`base` with up to four structural mutations: drop, replace, add, duplicate, wrap."""
    data = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(0, 4))):
        paths = [p for p in _paths(data) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent, last = _parent(data, path), path[-1]
        op = draw(st.sampled_from(["drop", "replace", "add", "duplicate", "wrap", "unknown_key"]))
        if op == "drop":
            del parent[last]
        elif op == "replace":
            parent[last] = draw(values())
        elif op == "wrap":
            parent[last] = [parent[last]] if draw(st.booleans()) else {"x": parent[last]}
        elif op == "duplicate" and isinstance(parent, list):
            parent.insert(last, json.loads(json.dumps(parent[last])))
        elif op in ("add", "unknown_key") and isinstance(parent, dict):
            key = draw(
                st.sampled_from(
                    [
                        "messages",
                        "speaker",
                        "speakers",
                        "llm",
                        "every_combination",
                        "seeds",
                        "favorite",
                        "parameters",
                        "Name",
                        "title",
                        "roles",
                        "x",
                    ]
                )
                | st.text(max_size=10)
            )
            parent[key] = draw(values())
    return data


@st.composite
def yaml_text(draw, data) -> str:
    """Dump `data`, then maybe damage the text: tags, aliases, duplicates, cuts, odd chars."""
    try:
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=draw(st.booleans()))
    except yaml.YAMLError:
        text = "{}"
    for _ in range(draw(st.integers(0, 3))):
        lines = text.split("\n")
        op = draw(
            st.sampled_from(
                [
                    "tag",
                    "alias",
                    "dup_line",
                    "del_line",
                    "cut",
                    "insert",
                    "deep",
                    "list",
                    "bigint",
                    "bomb",
                    "recursive",
                ]
            )
        )
        at = draw(st.integers(0, max(len(lines) - 1, 0)))
        pos = draw(st.integers(0, len(text)))
        if op == "tag" and ": " in lines[at]:
            key, _, value = lines[at].partition(": ")
            lines[at] = f"{key}: {draw(st.sampled_from(TAGS))}{value}"
        elif op == "alias" and ": " in lines[at]:
            key, _, value = lines[at].partition(": ")
            lines[at] = f"{key}: &anchor {value}"
            lines.append(f"z_alias: *{draw(st.sampled_from(['anchor', 'missing']))}")
        elif op == "dup_line":
            lines.insert(at, lines[at])
        elif op == "del_line" and lines:
            del lines[at]
        elif op == "cut":
            return text[:pos]
        elif op == "insert":
            text = text[:pos] + draw(st.sampled_from(INSERTS)) + text[pos:]
            continue
        elif op == "deep":
            n = draw(st.sampled_from([5, 31, 40, 300]))
            lines.append("z_deep: " + "[" * n + "]" * n)
        elif op == "list":
            lines.append("z_list: [" + ",".join(["1"] * draw(st.sampled_from([3, 10_001]))) + "]")
        elif op == "bigint" and ": " in lines[at]:
            key, _, _ = lines[at].partition(": ")
            lines[at] = f"{key}: {'9' * draw(st.sampled_from([19, 21, 4300, 5000]))}"
        elif op == "bomb":
            lines += ["z0: &b0 [x, x, x, x, x, x, x, x, x, x]"] + [
                f"z{i}: &b{i} [{', '.join([f'*b{i - 1}'] * 10)}]" for i in range(1, 8)
            ]
        elif op == "recursive":
            lines.append("z_rec: &r [*r]")
        text = "\n".join(lines)
    return text


# ---- the cases ----------------------------------------------------------------------------


@dataclass
class Case:
    args: list[str]  # EXP stands for the stored experiment's id, FILE for the written file
    file_text: str | None = None
    notes: dict = field(default_factory=dict)

    def show(self) -> str:
        text = "" if self.file_text is None else f"\n--- FILE ---\n{self.file_text[:1500]}"
        return "llm-sim " + " ".join(repr(a) for a in self.args) + text


PRISON_DATA = yaml.safe_load(PRISON.read_text(encoding="utf-8"))
SWEEP_BASE = {"total_messages": 4, "agents": {"Guard": 1, "Prisoner": 1}, "llms": ["mock:a"]}


@st.composite
def experiment_cases(draw) -> Case:
    text = draw(yaml_text(draw(mutated(PRISON_DATA))))
    args = ["experiment", "create", "FILE"] + (["--json"] if draw(st.booleans()) else [])
    return Case(args, text)


@st.composite
def sweep_specs(draw) -> dict:
    spec = dict(SWEEP_BASE)
    small = st.sampled_from([1, 2, 0, -1, 10_001, 10**30, "x", None, 2.5])
    for key, strategy in {
        "name": st.sampled_from([*NASTY_TEXT[:12], "ok sweep"]),
        "repetitions": small,
        "llms": st.lists(st.sampled_from(MOCKS[:3] + BAD_MODELS[:4]), max_size=2),
        "total_messages": st.sampled_from([2, 4, 6, 3, 0, -2, 100_001, 10**25, "4"]),
        "days": st.sampled_from([1, 2, 3, 0, 1001]),
        "every_day_count": st.booleans(),
        "agents": st.dictionaries(
            st.sampled_from(["Guard", "Prisoner", "guard", "Warden", " Guard ", ""]),
            st.sampled_from([1, 2, 0, -1, 101, 1_000_000, "2", 10**30]),
            max_size=3,
        ),
        "every_agent_combination": st.booleans(),
        "speaker_methods": st.lists(
            st.sampled_from(["round_robin", "random", "role_alternating", "auto", "manual", "x"]),
            max_size=3,
        ),
        "variants": st.dictionaries(
            st.sampled_from([*SLOTS, "Nope/Section", "guard/personality"]),
            st.sampled_from(["all", ["abusive"], ["on", "off"], [], ["nope"], "some"]),
            max_size=2,
        ),
        "seed": st.sampled_from([0, 7, MAX_SEED, MAX_SEED + 1, -1, None]),
        "manager_llm": st.sampled_from(MOCKS[:2] + BAD_MODELS[:3]),
        "llm_assignments": st.lists(
            st.dictionaries(
                st.sampled_from(["Guard", "Prisoner", "manager", "x"]),
                st.sampled_from(MOCKS[:2] + BAD_MODELS[:2]),
                max_size=3,
            ),
            max_size=2,
        ),
    }.items():
        if draw(st.integers(0, 3)) == 0:
            spec[key] = draw(strategy)
    return spec


@st.composite
def sweep_file_cases(draw) -> Case:
    spec = draw(sweep_specs())
    if draw(st.integers(0, 2)) == 0:  # one case in three: the drawn spec, not damaged further
        text = yaml.safe_dump(spec, sort_keys=False, allow_unicode=True)
    else:
        text = draw(yaml_text(draw(mutated(spec))))
    dry = draw(st.booleans())
    args = ["sweep", "create", "EXP", "FILE", "--dry-run" if dry else "--yes"]
    if draw(st.booleans()):
        args.append("--json")
    return Case(args, text)


def _pick(good: list[str], bad: list[str]) -> st.SearchStrategy[str]:
    """A good value about two times in three, so cases get past the first check often."""
    return st.one_of(st.sampled_from(good), st.sampled_from(good), st.sampled_from(bad))


def _flag_values() -> dict[str, st.SearchStrategy]:
    return {
        "--agents": _pick(
            ["guard=1", "guard=2,prisoner=1", "GUARD=1", "prisoner=2,guard=1", " guard = 1 "],
            [
                "",
                ",",
                "guard=1,guard=2",
                "guard=\u0661",
                "guard=0",
                "guard=101",
                "warden=1",
                "guard=1,,prisoner=1",
                "guard",
                "guard=" + "9" * 30,
                "=1",
                "guard=1=2",
            ],
        ),
        "--messages": _pick(
            ["2", "4", "6"], ["0", "-2", "3", "abc", "", "100001", "9" * 25, "4.0"]
        ),
        "--days": _pick(["1", "2"], ["0", "-1", "3", "1001", "x"]),
        "--seed": _pick(
            ["0", "7", str(MAX_SEED)], [str(MAX_SEED + 1), "-1", "x", "1e3", "9" * 5000]
        ),
        "--llm": _pick(MOCKS, BAD_MODELS),
        "--manager-llm": _pick(MOCKS[:2], BAD_MODELS),
        "--summarizer-llm": _pick(MOCKS[:2], BAD_MODELS),
        "--repetitions": _pick(["1", "2"], ["0", "-1", "10001", "x", "9" * 25]),
        "--name": _pick(["ok", "sweep \u00e9t\u00e9", "[bold]x[/bold]"], NASTY_TEXT[:14]),
        "--variant": _pick(
            [
                "Guard/Personality=all",
                "Guard/Personality=abusive",
                "Prisoner/Goal=escape,yard_time",
                "guard/personality=blank",
            ],
            ["Nope=all", "=all", "Guard/Personality=", "Guard/Personality=nope", "x", ""],
        ),
        "--speaker": _pick(["round_robin", "random", "role_alternating", "auto"], ["nope", ""]),
        "--llm-for": _pick(
            ["guard=mock:b", "prisoner=mock:a"], ["guard=", "warden=mock:a", "guard=nope:x", "x"]
        ),
    }


@st.composite
def run_cases(draw) -> Case:
    values = _flag_values()
    args = ["run", draw(st.sampled_from(["EXP"] * 6 + ["exp_nope", "", "x" * 200]))]
    required = ["--agents", "--messages", "--llm"]
    optional = ["--days", "--seed", "--manager-llm", "--summarizer-llm", "--speaker", "--llm-for"]
    chosen = [f for f in required if draw(st.integers(0, 9)) > 0]
    chosen += draw(st.lists(st.sampled_from(optional), max_size=4, unique=True))
    for flag in chosen:
        args += [flag, draw(values[flag])]
    if "--llm" not in chosen:  # never fall back to the experiment's local model
        args += ["--llm", "mock:a"]
    if draw(st.booleans()):
        args.append("--json")
    return Case(args)


@st.composite
def sweep_flag_cases(draw) -> Case:
    values = _flag_values()
    args = ["sweep", "create", draw(st.sampled_from(["EXP"] * 6 + ["exp_nope"]))]
    with_file = draw(st.integers(0, 3)) == 0
    text = draw(yaml_text(draw(sweep_specs()))) if with_file else None
    if with_file:
        args.append("FILE")
    flags = [
        "--agents",
        "--messages",
        "--days",
        "--seed",
        "--llm",
        "--manager-llm",
        "--summarizer-llm",
        "--repetitions",
        "--name",
        "--variant",
        "--speaker",
    ]
    for flag in draw(st.lists(st.sampled_from(flags), max_size=6)):
        args += [flag, draw(values[flag])]
    for switch in ("--every-combination", "--every-day-count", "--json"):
        if draw(st.integers(0, 3)) == 0:
            args.append(switch)
    args.append("--dry-run" if draw(st.booleans()) else "--yes")
    return Case(args, text)


@st.composite
def global_flags(draw) -> list[str]:
    """Now and then a --db-name or --user before the command (the store's own name is kept)."""
    flags: list[str] = []
    if draw(st.integers(0, 9)) == 0:
        flags += ["--db-name", draw(st.sampled_from(["..", "a/b", "a.b", "", "x" * 64, "a b"]))]
    if draw(st.integers(0, 9)) == 0:
        flags += ["--user", draw(st.sampled_from(["", " ", "bob", "a b", "\u202e", "x" * 65]))]
    return flags


def cases() -> st.SearchStrategy[Case]:
    commands = st.one_of(experiment_cases(), sweep_file_cases(), run_cases(), sweep_flag_cases())
    return st.builds(
        lambda flags, case: Case([*flags, *case.args], case.file_text), global_flags(), commands
    )


# ---- running a case -----------------------------------------------------------------------


@dataclass
class Template:
    """A small store made once; each case runs against its own copy."""

    folder: Path
    experiment_id: str
    digest: str | None


def make_template(folder: Path) -> Template:
    store = folder / "template"
    made = run_cli(
        ["--db", str(store), "experiment", "create", str(PRISON), "--json"],
        env={"SIM_USER": "alice"},
    )
    assert made.code == 0, made.describe()
    exp_id = json.loads(made.out)["id"]
    ran = run_cli(
        [
            "--db",
            str(store),
            "run",
            exp_id,
            "--agents",
            "guard=1,prisoner=1",
            "--messages",
            "2",
            "--llm",
            "mock:a",
            "--json",
        ],
        env={"SIM_USER": "alice"},
    )
    assert ran.code == 0, ran.describe()
    return Template(store, exp_id, fingerprint(str(store)))


def check_case(case: Case, template: Template, work: Path) -> tuple[int, str | None]:
    """Run one case: its exit status, and None when it holds the property or else a
    description of the failure."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    store = work / "store"
    shutil.copytree(template.folder, store)
    args = [a.replace("EXP", template.experiment_id) if a == "EXP" else a for a in case.args]
    if case.file_text is not None:
        path = work / "input.yaml"
        path.write_text(case.file_text, encoding="utf-8", errors="surrogatepass")
        args = [str(path) if a == "FILE" else a for a in args]
    outcome: Outcome = run_cli(
        ["--db", str(store), *args], env={"SIM_USER": "alice", "SIM_DB_TIMEOUT_MS": "1000"}
    )
    if not outcome.clean:
        return outcome.code, outcome.describe()
    if outcome.code == 2:
        if "Error" not in outcome.err:
            return 2, f"exit 2 without an error message: {outcome.describe()}"
        if fingerprint(str(store)) != template.digest:
            return 2, f"the store changed after exit 2: {outcome.err.strip()[:400]}"
    return outcome.code, None
