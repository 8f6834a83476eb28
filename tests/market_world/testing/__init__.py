"""The market world's testing parts."""
