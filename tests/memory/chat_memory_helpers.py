"""Shared pieces of the chat memory-stream tests: a chat experiment file with a memory block,
and a scripted stub reply for its agents, summarizer and memory calls."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from simulator.memory.testing.replies import memory_stream_reply

REPO = Path(__file__).resolve().parents[2]
PRISON = REPO / "prompts" / "experiments" / "prison.yaml"
SHIPPED = REPO / "prompts" / "experiments" / "prison_memory.yaml"
STREAM = {"kind": "stream", "embedder": "mock:16", "reflection_threshold": 20, "top_k": 3}
NAMED = re.compile(r"Your name is ([\w-]+)\.")


def chat_reply():
    """Agents answer from their prompt (deterministic: a resumed turn gets the same text);
    the summarizer and the memory calls as the scripted memory agent answers them."""
    memory = memory_stream_reply()

    def reply(body: dict) -> str:
        messages = body["messages"]
        system = messages[0]["content"] if messages[0]["role"] == "system" else ""
        agent = NAMED.search(system)
        if agent:
            return f"{agent.group(1)} speaks after {len(messages)} messages"
        if system.startswith("You are the researcher's assistant"):
            return "a summary of the day"
        return memory(body)

    return reply


def experiment_file(tmp_path, memory: dict | None) -> Path:
    doc = yaml.safe_load(PRISON.read_text(encoding="utf-8"))
    doc["llms"] = [{"model": "openai:stub", "params": {"temperature": 0.7, "max_tokens": 60}}]
    if memory is not None:
        doc["memory"] = memory
    path = tmp_path / "chat_memory.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path
