"""The market world's services parts."""
