"""The rules as the step loop drives them of memory streams."""
