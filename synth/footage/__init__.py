"""Scripted play of the five games, rendered as webcam footage with its ground truth."""
