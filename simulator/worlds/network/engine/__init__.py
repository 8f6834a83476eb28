"""The rules as the step loop drives them of the network world."""
