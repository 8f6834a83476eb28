"""The documentation site: it builds with `mkdocs build --strict`, its CLI reference names every
command and option, and the command blocks marked for checking run.

A block is checked when the line before its fence is `<!-- docs-check -->`. Its lines run one
by one (a trailing backslash continues a line) in an empty folder where `prompts/` is the
repository's, `llm-sim` being this checkout's CLI, with fresh data, config and log folders.
`EXP_ID`, `SWEEP_ID` and `CONV_ID` stand for the newest id of that kind an earlier line of the
block printed; every line must exit 0. Only `llm-sim` commands may be marked. A line of words
only runs through the CLI's real `main()` in the test process; a line the shell must read (a
pipe, a redirection, a variable) runs in `bash`.
"""

from __future__ import annotations

import html
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import in_process
import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
MARK = "<!-- docs-check -->"
IDS = {
    "EXP_ID": r"\bexp_[0-9a-f]{6,}\b",
    "SWEEP_ID": r"\bsweep_[0-9a-f]{6,}\b",
    "CONV_ID": r"\bconv_[0-9a-f]{6,}\b",
}


def _mkdocs_missing() -> str | None:
    for module in ("mkdocs", "material", "mkdocs_click"):
        try:
            __import__(module)
        except ImportError:
            return f"{module} is not installed (pip install -e '.[docs]')"
    return None


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    missing = _mkdocs_missing()
    if missing:
        pytest.skip(missing)
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def test_the_site_builds_strict_with_every_page_and_a_search_index(site: Path) -> None:
    pages = sorted(p.relative_to(DOCS) for p in DOCS.rglob("*.md") if "hooks" not in p.parts)
    assert pages
    for page in pages:
        built = site / page.with_suffix("") / "index.html"
        if page.name == "index.md":
            built = site / page.parent / "index.html"
        assert built.is_file(), f"{page} was not built"
    assert (site / "search" / "search_index.json").stat().st_size > 10_000


def _walk(command: click.Command, ctx: click.Context, path: tuple[str, ...]):
    yield path, command
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, name
            yield from _walk(sub, click.Context(sub, parent=ctx, info_name=name), (*path, name))


def test_the_cli_reference_names_every_command_and_option(site: Path) -> None:
    from simulator.cli.main import cli

    page = html.unescape((site / "cli" / "index.html").read_text(encoding="utf-8"))
    text = re.sub(r"<[^>]+>", "", page)
    missing = []
    commands = list(_walk(cli, click.Context(cli, info_name="llm-sim"), ("llm-sim",)))
    assert len(commands) > 30
    for path, command in commands:
        if " ".join(path) not in text:
            missing.append(" ".join(path))
        for param in command.get_params(click.Context(command)):  # a world's flags too
            if not isinstance(param, click.Option) or param.hidden:
                continue
            for name in (*param.opts, *param.secondary_opts):
                if name.startswith("--") and name not in text:
                    missing.append(f"{' '.join(path)} {name}")
    assert not missing, f"not in the CLI reference: {missing}"


def _blocks() -> list[tuple[str, list[str]]]:
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        lines = page.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if line.strip() != MARK:
                continue
            assert lines[i + 1].startswith("```"), f"{page}:{i + 2}: {MARK} not before a fence"
            body, j = [], i + 2
            while not lines[j].startswith("```"):
                body.append(lines[j])
                j += 1
            commands, pending = [], ""
            for raw in body:
                pending += raw.rstrip()
                if pending.endswith("\\"):
                    pending = pending[:-1] + " "
                    continue
                if pending.strip() and not pending.lstrip().startswith("#"):
                    # only the tool's own commands: nothing that installs or removes anything
                    assert pending.split()[0] == "llm-sim", f"{page}: not llm-sim: {pending}"
                    commands.append(pending.strip())
                pending = ""
            found.append((f"{page.relative_to(DOCS)}:{i + 1}", commands))
    return found


BLOCKS = _blocks()


def test_some_blocks_are_marked_for_checking() -> None:
    assert len(BLOCKS) >= 5
    assert sum(len(commands) for _, commands in BLOCKS) >= 15


def _plain_argv(line: str) -> list[str] | None:
    """The arguments of a line that is `llm-sim` and words only, or None where the shell has work
    to do (pipes, redirections, variables, globs): such a line runs in a shell."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words = list(lexer)
    if "$" in line or "`" in line:
        return None
    if any(set(word) <= set("();<>|&") or set(word) & set("*?[~") for word in words):
        return None
    assert words[0] == "llm-sim", line
    return words[1:]


@pytest.mark.parametrize(("where", "commands"), BLOCKS, ids=[where for where, _ in BLOCKS])
def test_a_marked_command_block_runs(where: str, commands: list[str], tmp_path: Path) -> None:
    """Each line runs as `llm-sim` would in that folder: a plain line through the real `main()`
    in this process (same flags, variables, output and exit status), any other in a shell."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "llm-sim"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{REPO / "main.py"}" "$@"\n')
    shim.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    (work / "prompts").symlink_to(REPO / "prompts")
    settings = {
        "SIM_DATA_DIR": str(tmp_path / "data"),
        "SIM_CONFIG_DIR": str(tmp_path / "config"),
        "SIM_LOG_DIR": str(tmp_path / "logs"),
        "SIM_USER": "docs",
        "COLUMNS": "100",
    }
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", **settings}
    seen: dict[str, str] = {}
    for command in commands:
        line = command
        for placeholder, value in seen.items():
            line = line.replace(placeholder, value)
        assert not [p for p in IDS if p in line], f"{where}: no id printed yet for {line!r}"
        argv = _plain_argv(line)
        if argv is not None:
            done = in_process.llm_sim(*argv, env=settings, cwd=work)
        else:
            done = subprocess.run(
                ["bash", "-c", f"set -o pipefail; {line}"],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                stdin=subprocess.DEVNULL,
                timeout=300,
            )
        assert done.returncode == 0, f"{where}: {line!r} exited {done.returncode}:\n" + (
            done.stdout[-3000:] + done.stderr[-3000:]
        )
        output = done.stdout + done.stderr
        for placeholder, pattern in IDS.items():
            ids = re.findall(pattern, output)
            if ids:
                seen[placeholder] = ids[-1]
