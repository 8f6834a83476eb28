"""Operations the commands and menus share of memory streams."""
