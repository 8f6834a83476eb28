"""A toy world for the sweep flag tests: only its `cli/sweep_options.py` part."""
