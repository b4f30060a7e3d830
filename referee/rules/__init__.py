"""The rules engines, one module per game. Pure: no pixels, clocks or files."""
