"""A tiny randomly initialised chat model built on disk, so the hf backend is tested with no hub.

The tokenizer is a word-level vocabulary trained in memory on a few sentences, wrapped as a fast
tokenizer with pad/eos tokens and a small Jinja chat template; the model is a two-layer Llama
with a 32-wide hidden state. Its answers are random words, which is all the backend needs: token
counts, batching, padding and seeds behave exactly as with a real model. Also used by
`bench/hf_batching.py`.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers/huggingface_hub are imported
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SPECIAL_TOKENS = ["<pad>", "<unk>", "<s>", "</s>", "<|system|>", "<|user|>", "<|assistant|>"]
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} </s> "
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
SENTENCES = [
    "the agents meet in the town square every morning",
    "alice says hello to bob and asks about the market",
    "bob answers that prices went up again this week",
    "the mayor proposes a vote on the new park",
    "everyone agrees to talk again tomorrow after lunch",
    "a quick brown fox jumps over the lazy dog",
    "you are a helpful assistant who answers briefly",
    "what do you think about the weather today ?",
    "i think it will rain , so bring an umbrella .",
]


def build_tiny_model(directory: Path, *, hidden_size: int = 32, layers: int = 2) -> Path:
    """Write tokenizer + model files into `directory` (created) and return it."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import (
        GenerationConfig,
        LlamaConfig,
        LlamaForCausalLM,
        PreTrainedTokenizerFast,
    )

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)

    core = Tokenizer(models.WordLevel(unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    core.train_from_iterator(SENTENCES, trainers.WordLevelTrainer(special_tokens=SPECIAL_TOKENS))
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        additional_special_tokens=SPECIAL_TOKENS[4:],
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(directory)

    config = LlamaConfig(
        vocab_size=core.get_vocab_size(),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,  # tied weights make greedy decoding echo its last token
    )
    torch.manual_seed(0)  # the same "random" model every time
    model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        do_sample=False,
    )
    model.save_pretrained(directory)
    return directory
