"""The opinion network's sample for the end-to-end checks: three friends, two rounds (plain
data)."""

EXPERIMENT_YAML = """\
kind: network
name: Three friends deciding on a purchase
note: A short network run for checks of the whole tool.
llms:
- model: ollama:stub
  params:
    temperature: 1.0
    max_tokens: 64
network:
  graph:
    type: complete
    n: 3
  agents: synthetic
  scenario: costly_purchase
  rounds: 2
  prompts:
    profile: reference
"""
RUN_ARGS = ("--seed", "3")
REPLIES = (("Opinion", 'Fine. {"Thought": "good value", "Opinion": 6, "Decision": "Yes"}'),)
ROWS = "rounds"
UNIT = ("round", "agent")
ROW_COUNT = 9  # 3 agents x rounds 0 (the agents table's answers), 1 and 2
FORK_AT = "1"
FORK_POINT = {"round": 1}
FORK_SHARED = 3  # round 0
FORK_CALLS = 6  # rounds 1 and 2 (round 0 called no model)
SHOW_TEXT = ("kind network: graph type complete, n 3; agents synthetic",)
EXPORT_TABLES = ("network_runs", "network_rounds", "network_round_measures")
MEASURES = (("mean_opinion", 6.0), ("share_yes", 1.0), ("rounds_stored", 2.0))
