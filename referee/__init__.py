"""Tabletop Referee: a computer-vision referee for physical tabletop games.

Data flows one way: frames -> calibration -> detection -> tracking -> observations
-> rules engines -> rulings -> dashboard and recording. Each stage is its own package.
"""

__version__ = "0.1.0"
