"""Memory streams: the seam every world uses to remember, retrieve and reflect."""
