"""Network rounds: one row per (run, round, agent) of an opinion network run (world_rows.py).

Round 0 is the agents table's answer (no call); round t >= 1 the model's. Fields: `opinion`
(0..10), `decision` (Yes/No), `thought`, `friends` (names whose answers of the round before it
read), `replies` (every raw reply of its attempts), `attempts`, `answer_fallback` (no reply
parsed: the previous round's answer was kept). A theory run's rows (engine/theory_run.py) have
no thought, replies or attempts after round 0, and add `exact_opinion`: the theory's opinion on
the 0..10 scale before `opinion` rounds it down. Rows of a free-chat round (`network.free_chat`)
add `said` (the agent's message to its friends, surrounding whitespace trimmed; '' when the
reply was empty; the raw reply is in the call ledger) and `heard` ({friend's name: message},
the messages its answer prompt showed; itself left out on a self-loop); rows of other rounds,
and every theory row, have neither field.
"""

from __future__ import annotations

from simulator.store.repositories.world_rows import RowsLayout

NETWORK_ROUNDS = RowsLayout("network_rounds", "round", "{run}-r{unit:04d}-a{agent:05d}")
