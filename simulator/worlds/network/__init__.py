"""The network world: its models, rules, prompts, measures, report and options."""
