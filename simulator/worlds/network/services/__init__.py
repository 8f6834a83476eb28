"""Operations the commands and menus share of the network world."""
