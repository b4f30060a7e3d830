"""The running referee: frames in, observations and rulings out (see events.py)."""
