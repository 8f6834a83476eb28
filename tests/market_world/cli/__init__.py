"""The market world's cli parts."""
