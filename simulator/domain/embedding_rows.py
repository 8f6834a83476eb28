"""The ledger rows of embedding requests, as pure rules: their purpose, the prompt that names
the texts a request sent, and the token count where the server gave none.

Why rows at all: an embedding request is billed per token like a chat call, and a spend cap
must stop it before it leaves, so it takes a ledger row as a chat call does. What differs: no
reply text (the vectors are not a reply a replay could compare), no tokens out, and a row's
place depends on what this process had cached, so replays do not compare embedding rows.
"""

from __future__ import annotations

import math

EMBEDDING_PURPOSE = "memory_embedding"  # one embedding request of a memory stream
EMBED_ROLE = "embed"  # the role of each text in an embedding row's stored prompt
CHARS_PER_TOKEN = 4  # the approximation where the embedder says nothing (a local model)


def is_embedding(row: dict) -> bool:
    """Whether a ledger row is an embedding request (not a chat call)."""
    return row.get("purpose") == EMBEDDING_PURPOSE


def embedding_messages(texts: list[str]) -> list[dict]:
    """The texts of one request as the prompt its ledger row names (`prompt_hash`): each text
    one message, so `show --prompts` lists what was embedded."""
    return [{"role": EMBED_ROLE, "content": text} for text in texts]


def approximate_tokens(texts: list[str]) -> int:
    """Tokens of `texts` where no tokenizer counted them: a character count over 4 per text
    (English prose with OpenAI's tokenizers comes close; a row so counted says
    `tokens_approximate`)."""
    return sum(max(1, math.ceil(len(text) / CHARS_PER_TOKEN)) for text in texts)
