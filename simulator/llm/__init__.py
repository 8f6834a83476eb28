"""Model backends behind one async interface.

Kept light on purpose: importing this package must not import openai, ollama, llama-cpp or torch.
Use `simulator.llm.registry.create_backend("provider:name")` to get a backend.
"""
