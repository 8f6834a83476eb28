"""Commands, options and display of the network world."""
