"""Observations in, rulings out: drives one rules engine over a stream of observations."""

from referee.adjudication.session import InputLineError, Session, adjudicate_lines

__all__ = ["InputLineError", "Session", "adjudicate_lines"]
