"""The market world's engine parts."""
