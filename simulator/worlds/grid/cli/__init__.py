"""Commands, options and display of the grid world."""
