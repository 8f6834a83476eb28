"""The chat world: its models, rules, prompts, measures, report and options."""
