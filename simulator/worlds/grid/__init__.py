"""The grid world: its models, rules, prompts, measures, report and options."""
