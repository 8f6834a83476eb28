"""The rules as the step loop drives them of the grid world."""
