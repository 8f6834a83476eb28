"""LLM Interaction Simulator: social experiments with LLM agents, stored in MongoDB."""

__version__ = "0.1.0"
