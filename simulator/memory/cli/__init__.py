"""Commands, options and display of memory streams."""
