"""The grid world's sample for the end-to-end checks: three agents, two steps (plain data)."""

EXPERIMENT_YAML = """\
kind: grid
name: Three agents on a small torus
note: A short grid run for checks of the whole tool.
llms:
- model: ollama:stub
  params:
    temperature: 0.7
    max_tokens: 64
world:
  width: 50
  height: 50
  torus: true
  agents: 10
  steps: 100
  radius: 5
  initial_memory: no memory
prompts:
  message: |-
    You are {name}, an agent at position ({x}, {y}) on a {width} by {height} field. There are \
{agents} agents, including you.
    Your summary memory so far: {memory}
    Messages you received from nearby agents in the last step: {messages}
    Write one short message to the agents within a distance of {radius}.
  memory: |-
    You are {name}, an agent at position ({x}, {y}) on a {width} by {height} field.
    Your summary memory so far: {memory}
    Messages you received from nearby agents now: {messages}
    Summarise the situation you want to remember in a few sentences.
  move: |-
    You are {name}, an agent at position ({x}, {y}) on a {width} by {height} field.
    Your summary memory so far: {memory}
    Choose your next move. Answer with exactly one of these commands: x+1, x-1, y+1, y-1, stay.
"""
RUN_ARGS = ("--agents", "3", "--steps", "2", "--seed", "4")
REPLIES = (("Choose your next move", "I pick x+1 now"),)
ROWS = "steps"
UNIT = ("step", "agent")
ROW_COUNT = 6  # 3 agents x 2 steps
FORK_AT = "2"
FORK_POINT = {"step": 2}
FORK_SHARED = 3  # step 1
FORK_CALLS = 9  # step 2: 3 agents x message, memory and move
SHOW_TEXT = ("kind grid: 10 agents on 50 x 50 torus, message radius 5, 100 steps",)
EXPORT_TABLES = ("grid_runs", "grid_steps")
MEASURES = (("share_x+1", 1.0), ("fallbacks", 0.0), ("widest_hashtag_spread", 3.0))
