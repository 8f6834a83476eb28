"""The `reference` prompt profile against the reference's own code: a real network run (stub
model over loopback, real store) on the reference's prompt files (tests/fixtures/llm_sam/)
sends, for every agent and round, the very prompt pzs19/LLM-SAM builds for that agent and
round. The reference's filling logic (utils/prompt_manager.py, utils/network.py at commit
135b775) is ported below line by line, without vLLM: same replacements, same joins, same
accumulation, the same free-chat step that is asked but never kept."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from simulator.llm.access import LLMAccess
from simulator.llm.retry import RetryPolicy
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.testing import StubLLMServer
from simulator.worlds.network.services import runs as network_runs

REPO = Path(__file__).resolve().parents[2]
NETWORK_YAML = REPO / "prompts" / "experiments" / "llm_sam_network.yaml"
FIXTURE = REPO / "tests" / "fixtures" / "llm_sam" / "exp1"
NAME = re.compile(r"Your name is (\w+)\.")
REFERENCE_COLUMNS = ["O_inital", "A_inital", "O_inital_text"]  # its spelling

# coefficients as a survey table writes them: a 1 and a 0 that pandas prints as 1.0 and 0.0,
# Chinese reasons (the reference's JSON keeps them unescaped)
ROWS = [
    (0.05, 0.9, 0.05, 0.9, 0.4, 0, "洗碗机昂贵且安装复杂，性价比较低。"),
    (0.2, 0.5, 0.3, 0.8, 0.4, 0, "厨房空间比较有限"),
    (0, 1, 0, 0.95, 0.3, 0, "too dear"),
    (0.1, 0.2, 0.7, 0.6, 0.7, 1, "saves time"),
    (0.3, 0.4, 0.3, 0.5, 0.8, 1, "I like it"),
    (0.25, 0.5, 0.25, 0.2, 0.9, 1, "great for a big family"),
]


# ---- the reference, ported (utils/prompt_manager.py) ----------------------------------------
class PromptManager:
    def __init__(self, exp_id, n_node, rounded_person_id, person_attr, name, prompt_dir):
        self.rounded_person_id = rounded_person_id
        self.n_node = n_node
        self.prompt_dir = prompt_dir
        self.basic_info = self._load_json("basic_info.json")
        self.person_attr = person_attr

        background = self._load_md("background.md")
        background = background.replace("{name}", name)
        background = background.replace("{n_friend}", str(self.n_node))
        background = background.replace("{a}", str(self.person_attr["a"]))
        background = background.replace("{tau}", str(self.person_attr["tau"]))
        background = background.replace("{f}", str(self.person_attr["f"]))
        background = background.replace("{lambda}", str(self.person_attr["lambda"]))

        info_key = f"Basic Information {self.rounded_person_id + 1}"
        basic_info_text = self.basic_info.get(info_key, "")
        background = background.replace("{basic_information}", basic_info_text)

        self.questions = [self._load_md(f"Q{i}.md") for i in range(1, 4)]
        self.chat_template = self._load_md("free_chat.md")
        self.init_op = {
            "Thought": str(self.person_attr["O_inital_text"]),
            "Opinion": int(self.person_attr["O_inital"] * 10),
            "Decision": "No" if abs(float(self.person_attr["A_inital"]) - 0) < 1e-3 else "Yes",
        }
        self.init_ans = json.dumps(self.init_op, ensure_ascii=False)
        self.prefix_prompt = "\n".join([background, self.questions[0], self.init_ans])

    def _load_md(self, filename):
        with open(os.path.join(self.prompt_dir, filename), encoding="utf-8") as file:
            return file.read()

    def _load_json(self, filename):
        with open(os.path.join(self.prompt_dir, filename), encoding="utf-8") as file:
            return json.load(file)

    def get_chat_prompt(self, neighbors_opinions=""):
        chat_template = self.chat_template.replace("{neighbors_opinions}", neighbors_opinions)
        return self.prefix_prompt + "\n\n" + chat_template

    def get_prompt(self, step, neighbors_opinions=""):
        if step >= len(self.questions):
            q = self.questions[-1].replace("{neighbors_opinions}", neighbors_opinions)
        else:
            q = self.questions[step].replace("{neighbors_opinions}", neighbors_opinions)
        self.prefix_prompt += "\n" + q
        return self.prefix_prompt


# ---- (utils/network.py: Node and SocialNetwork, the model call replaced by `model`) ----------
NAMES = ["James", "Michael", "David", "Emily", "Sarah"]


class Node:
    def __init__(self, n_node, person_id, coeff_df, model, name, prompt_dir, prompts):
        self.name, self.model, self.prompts = name, model, prompts
        self.person_attr = {}
        for attr_name in ["a", "tau", "f", "lambda", "O_inital_text", "O_inital", "A_inital"]:
            self.person_attr[attr_name] = coeff_df.loc[person_id, attr_name]
            if attr_name == "A_inital":
                self.person_attr[attr_name] = float(coeff_df.loc[person_id, attr_name])
        self.prompt_manager = PromptManager(
            1, n_node, person_id % n_node, self.person_attr, name, prompt_dir
        )
        self.opinion_history = []

    def __call__(self, step, neighbors_opinions="", do_free_chat=False):
        if step == 0:
            self.opinion_history.append(self.prompt_manager.init_op)
            return
        if do_free_chat:
            prompt = self.prompt_manager.get_chat_prompt(neighbors_opinions)
        else:
            prompt = self.prompt_manager.get_prompt(step, neighbors_opinions)
        self.prompts[(self.name, step)] = prompt
        opinion = json.loads(self.model(prompt))
        self.opinion_history.append(
            {
                "Thought": opinion["Thought"],
                "Opinion": int(opinion["Opinion"]),
                "Decision": opinion["Decision"],
            }
        )

    def get_opinion_text_json(self, step):
        opinion = self.opinion_history[step]
        return f"{self.name}'s ouput is {json.dumps(opinion, ensure_ascii=False)}"


def reference_prompts(coeff_df, adj_mat, steps, free_chat_steps, model) -> dict:
    """Every prompt the reference sends, by (name, step)."""
    n = len(coeff_df)
    names = NAMES[:n] if n < len(NAMES) else [f"User{i}" for i in range(n)]
    prompts: dict = {}
    network = {
        name: Node(n, idx, coeff_df, model, name, str(FIXTURE), prompts)
        for idx, name in enumerate(names)
    }
    for step in range(steps):
        adj = adj_mat[step]
        for index, name in enumerate(names):
            if step > 0:
                neighbours = [names[i] for i in range(n) if adj[index, i] == 1]
                text = "\n".join(network[m].get_opinion_text_json(step - 1) for m in neighbours)
                network[name](step, text, step in free_chat_steps)
            else:
                network[name](step)
    return prompts


# ---- the run here ------------------------------------------------------------------------------
def model(prompt: str) -> str:
    """The stand-in model: an answer that depends on the whole prompt, so any difference in an
    earlier prompt shows in every later one."""
    size = len(prompt)
    name = NAME.findall(prompt)[-1]
    decision = "Yes" if size % 2 else "No"
    return json.dumps(
        {"Thought": f"{name} read {size}", "Opinion": size % 11, "Decision": decision}
    )


@pytest.fixture
def stub(monkeypatch):
    with StubLLMServer(models=["stub"], latency_s=0.0) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        server.reply_fn = lambda body: model(body["messages"][-1]["content"])
        yield server


def _table(tmp_path: Path, names: list[str]) -> Path:
    path = tmp_path / "coeff.csv"
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["name", "a", "tau", "f", "lambda", "O_inital", "A_inital", "O_inital_text"]
        )
        for name, row in zip(names, ROWS, strict=False):
            writer.writerow([name, *row])
    return path


def _run(store, run_id):
    async def go():
        llms = LLMAccess(policy=RetryPolicy.no_wait(1))
        try:
            return await network_runs.run(store, run_id, llms)
        finally:
            await llms.aclose()

    return asyncio.run(go())


def _sent(store, run_id) -> dict:
    out = {}
    for call in store.calls.for_conversation(run_id):
        assert call["purpose"] == "opinion"  # no separate message stage
        out[(call["agent"], call["day"])] = store.calls.prompt(call["prompt_hash"])
    return out


CASES = {
    # the reference's small groups: complete, self-loops (an agent sees its own answer), 3 rounds
    "complete group of 4": (4, {"type": "complete", "n": 4}, 3, []),
    # its 50-node kind of run: no self-loops, a changing network, free chat asked as opinion
    # rounds (steps 2..rounds-1), a sixth agent without private information
    "changing network with free chat": (6, None, 5, [2, 3]),
}


@pytest.mark.parametrize("case", CASES)
def test_the_reference_profile_sends_the_reference_prompts(store, stub, tmp_path, case):
    n, graph, rounds, free_chat = CASES[case]
    names = NAMES[:n] if n < len(NAMES) else [f"User{i}" for i in range(n)]
    rng = np.random.default_rng(7)
    if graph is None:  # one random symmetric matrix per round, no self-loops
        mats = []
        for _ in range(rounds):
            upper = np.triu(rng.integers(0, 2, (n, n)), 1)
            mats.append(upper + upper.T)
        graph = {
            "type": "dynamic",
            "snapshots": [
                {"type": "file", "path": str(_adjacency(tmp_path, t, m)), "format": "adjacency"}
                for t, m in enumerate(mats)
            ],
        }
        # here round t listens on snapshot t-1; the reference on matrix `step`
        adj = [mats[0], *mats]
    else:
        adj = [np.ones((n, n), dtype=int)] * (rounds + 1)
    table = _table(tmp_path, names)
    view = exp_service.import_yaml(store, NETWORK_YAML, "alice")
    assert view.experiment.network.prompts.profile == "reference"  # the shipped design
    spec = network_runs.build_spec(
        view,
        llm="openai:stub",
        seed=1,
        settings={
            "graph": graph,
            "agents": str(table),
            "scenario": str(FIXTURE),
            "rounds": rounds,
            "free_chat": free_chat,
        },
    )
    run = run_service.create_run(store, view, spec, "alice")
    outcome = _run(store, run["_id"])
    assert outcome.status == "done", outcome.error

    expected = reference_prompts(pd.read_csv(table), adj, rounds + 1, set(free_chat), model)
    sent = _sent(store, run["_id"])
    assert sorted(sent) == sorted(expected) and len(sent) == n * rounds
    for key, prompt in expected.items():
        assert sent[key] == [{"role": "user", "content": prompt}], key
    # the things the reference's prompt carries, seen in one of them
    last = expected[(names[-1], rounds)]
    assert "# The basic information you get is:\n\n" in last
    assert f"you will communicate with {n} friends" in last
    facts = json.loads((FIXTURE / "basic_info.json").read_text(encoding="utf-8"))
    assert f"you get is:\n\n{facts['Basic Information 1']}\n# Output" in expected[(names[0], 1)]
    if n > 5:  # the sixth agent holds no private fact: the heading is followed by nothing
        assert "you get is:\n\n\n# Output" in expected[(names[5], 1)]


def _adjacency(tmp_path: Path, t: int, matrix) -> Path:
    path = tmp_path / f"snap{t}.csv"
    np.savetxt(path, matrix, fmt="%d", delimiter=",")
    return path
