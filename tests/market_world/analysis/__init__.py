"""The market world's analysis parts."""
