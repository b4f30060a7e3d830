"""Detection: images -> cards, coins and tokens (pixels). Knows no rule of any game."""
