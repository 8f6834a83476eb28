"""The agents table: the shipped synthetic CSV, round 0 from it, and errors with line numbers."""

from __future__ import annotations

import csv
from decimal import ROUND_DOWN, Decimal
from pathlib import Path

import pytest

from simulator.errors import UserError
from simulator.worlds.network.domain.agents_table import agent_groups, parse_agents, read_agents
from simulator.worlds.network.domain.answers import round_zero

SHIPPED = Path(__file__).resolve().parents[2] / "prompts" / "network" / "agents_synthetic.csv"
HEADER = "name,a,tau,f,lambda,O_initial,A_initial,O_initial_text\n"


def test_the_shipped_table_has_50_valid_agents():
    rows = read_agents(SHIPPED)
    assert len(rows) == 50
    assert len({r.name for r in rows}) == 50
    assert all(abs(r.a + r.tau + r.f - 1) <= 1e-6 for r in rows)
    assert {r.action for r in rows} == {0, 1}
    assert [r.line for r in rows] == list(range(2, 52))


def test_round_zero_reproduces_the_csv_exactly():
    """Opinion int(O x 10), computed here in decimal from the CSV text; Yes iff A = 1."""
    with SHIPPED.open(encoding="utf-8", newline="") as handle:
        raw = list(csv.DictReader(handle))
    for text, row in zip(raw, read_agents(SHIPPED), strict=True):
        answer = round_zero(row)
        expected = int((Decimal(text["O_initial"]) * 10).to_integral_value(ROUND_DOWN))
        assert answer.opinion == expected
        assert answer.decision is (text["A_initial"] == "1")
        assert answer.thought == text["O_initial_text"]
        assert answer.as_json()["Decision"] == ("Yes" if text["A_initial"] == "1" else "No")


def test_the_reference_spelling_and_no_name_column_are_read():
    text = "\ufeffa,tau,f,lambda,O_inital,A_inital,O_inital_text\n0.05,0.9,0.05,0.9,0.4,0.0,x\n"
    text += "0.2,0.5,0.3,0.8,1.0,1.0,y\n"
    rows = parse_agents(text)
    assert [r.name for r in rows] == ["agent0", "agent1"]
    assert (rows[1].opinion, rows[1].action, rows[1].lam, rows[1].text) == (1.0, 1, 0.8, "y")


def test_every_error_carries_its_line_number():
    text = HEADER + "\n".join(
        [
            "Ann,0.2,0.5,0.3,0.5,0.4,0,fine",  # line 2
            "Bob,0.2,0.5,abc,0.5,0.4,0,x",  # 3: not a number
            "Cid,0.2,0.5,0.4,0.5,0.4,0,x",  # 4: sum 1.1
            "Dee,0.2,0.5,0.3,0.5,1.2,0,x",  # 5: O outside [0, 1]
            "Eve,0.2,0.5,0.3,0.5,0.4,0.5,x",  # 6: A neither 0 nor 1
            "Ann,0.2,0.5,0.3,0.5,0.4,1,again",  # 7: duplicate name
            "Fay,0.2,0.5",  # 8: short
        ]
    )
    with pytest.raises(UserError) as caught:
        parse_agents(text, "mine.csv")
    message = str(caught.value)
    assert message.startswith("agents: mine.csv: line 3: f is 'abc', not a number")
    for expected in (
        "line 4: a + tau + f = 1.1, not 1",
        "line 5: O_initial = 1.2 is outside [0, 1]",
        "line 6: A_initial = 0.5 is neither 0 nor 1",
        "line 7: the name 'Ann' is used on line 2",
    ):
        assert expected in message
    assert "(and 1 more)" in message  # the short row on line 8: counted, not listed
    with pytest.raises(UserError, match=r"line 3: the name 'Ann' is used on line 2"):
        parse_agents(HEADER + "Ann,0.2,0.5,0.3,0.5,0.4,0,a\nAnn,0.2,0.5,0.3,0.5,0.4,0,b\n")
    with pytest.raises(UserError, match=r"line 2: 3 fields where the header has 8"):
        parse_agents(HEADER + "Fay,0.2,0.5\n")


def test_a_quoted_text_over_two_lines_keeps_later_line_numbers_right():
    text = HEADER + 'Ann,0.2,0.5,0.3,0.5,0.4,0,"first\nsecond"\nBob,0.2,0.5,0.3,0.5,x,0,t\n'
    with pytest.raises(UserError, match=r"line 4: O_initial is 'x'"):
        parse_agents(text)


def test_header_and_empty_table_errors():
    with pytest.raises(UserError, match=r"line 1: the header lacks tau, O_initial"):
        parse_agents("name,a,f,lambda,A_initial,O_initial_text\n")
    with pytest.raises(UserError, match="is empty"):
        parse_agents("")
    with pytest.raises(UserError, match=r"line 2: no agent rows"):
        parse_agents(HEADER)
    with pytest.raises(UserError, match="no agents table at"):
        read_agents("/nonexistent/agents.csv")


def test_groups_are_consecutive_full_blocks():
    rows = read_agents(SHIPPED)
    groups = agent_groups(rows, 3)
    assert len(groups) == 16  # 50 = 16 x 3 + 2 left out
    assert [r.name for r in groups[1]] == [r.name for r in rows[3:6]]
    assert len(agent_groups(rows, 5)) == 10
