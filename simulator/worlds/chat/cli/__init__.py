"""Commands, options and display of the chat world."""
