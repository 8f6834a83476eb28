"""The group chat's analysis part: its tables, measures and report are the house's own."""
