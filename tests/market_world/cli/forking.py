"""The market's forks on screen (simulator/cli/fork_parts.py): the house's defaults serve it."""
