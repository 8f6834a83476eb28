"""The group chat's sample for the end-to-end checks: a guard and a prisoner, six messages
(plain data)."""

EXPERIMENT_YAML = """\
name: A short prison chat
note: A guard and a prisoner, for checks of the whole tool.
starting_message: |-
  The researcher opens the session: <GUARD_NUM_WORD_CAP> <GUARD_NOUN> and \
<PRISONER_NUM_WORD> <PRISONER_NOUN> are present. Begin.
llms:
- model: ollama:stub
  params:
    temperature: 0.7
    max_tokens: 64
roles:
- name: Guard
  pronoun: they
  sections:
  - title: Starting prompt
    content: |-
      You are a guard in a simulated prison with <PRISONER_NUM_WORD> <PRISONER_NOUN>.
  - title: Goal
    content: Keep order in the block for the whole day.
- name: Prisoner
  pronoun: they
  sections:
  - title: Starting prompt
    content: |-
      You are a prisoner in a simulated prison with <GUARD_NUM_WORD> <GUARD_NOUN> on duty.
  - title: Goal
    content: Convince the <GUARD_NOUN> to grant an extra hour of yard time today.
"""
RUN_ARGS = ("--agents", "guard=1,prisoner=1", "--messages", "6", "--seed", "5")
ROWS = "messages"
UNIT = ("day", "index")
ROW_COUNT = 6  # agent turns (the opening is the experiment's, not a row)
FORK_AT = "1:3"
FORK_POINT = {"day": 1, "index": 3}
FORK_SHARED = 3  # 1:0 to 1:2
FORK_CALLS = 4  # messages 1:3 to 1:5 and the day's summary
SHOW_TEXT = ("starting message",)
EXPORT_TABLES = ("conversations", "messages", "summaries", "calls")
MEASURES = (("messages", 6.0), ("calls", 7.0), ("failed", 0.0))  # 6 turns, 1 summary
