"""Operations the commands and menus share of the chat world."""
