"""The market world's domain parts."""
