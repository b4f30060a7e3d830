"""Per-frame vision: motion gating, stable table states, and the observers that turn the
difference between two stable states into observations (cards, coins, tokens)."""
