"""A generative agent's memory stream (shared/specs/generative-agents-memory.md), the pure part.

records (a memory, its deterministic id, the depth of a thought), retrieval (recency,
importance and relevance, min-max scaled and weighted; the paper's and the reference code's
settings), stream (one agent's records with their vectors as a matrix, retrieval that marks
what it returned as accessed), reflection (when to reflect and over which records), parsers
(the model's importance ratings and cited insights, with counted fallbacks), vectors (the
deterministic stand-in embedding the stub server and `mock:` embedder share), agent_memory
(the stream, the trigger and the settings bundled as an engine drives them). No model, no
store: the engine asks the model and the store writes, each through its own layer.
"""
