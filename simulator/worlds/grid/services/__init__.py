"""Operations the commands and menus share of the grid world."""
