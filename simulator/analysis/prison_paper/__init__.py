"""The prison paper's measures ("I Want to Break Free!", Campedelli et al., TMLR 2025), computed
from stored conversations: the authors' labelled release (`llm-sim import table prison_paper`)
or new runs scored by a judge and a moderation scorer, so both read the same way.

`rows.py` reads a scope into one `PaperConversation` per conversation (factors, outcome label,
third, per-conversation scores); each measure module turns those into `PaperTable`s (`table.py`),
which the CLI prints, `--json` dumps, the exports write and the report draws.
"""
