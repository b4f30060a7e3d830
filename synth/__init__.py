"""Synthetic tabletop: renders realistic scenes and footage with exact ground truth.

Training and testing tools only: the runtime (``referee``) never imports this package.
"""
