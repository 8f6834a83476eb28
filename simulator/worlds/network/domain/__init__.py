"""The opinion network's pure rules (LLM-SAM; shared/specs/llm-sam-network.md).

graphs (who sees whom, per round), agents_table (the survey coefficients CSV), scenario (the
story and the questions per round), answers (the JSON answer and round 0), theory (the no-LLM
coevolution model and DeGroot). No model, no store: each is unit-tested on its own.
"""
