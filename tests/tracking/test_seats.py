"""Who acted, and whether anything moved where a piece lay."""

import numpy as np

from referee.calibration.layouts import Seat
from referee.tracking.seats import ArmTracer, seat_directions

from .helpers import flat_plane

PLANE = flat_plane(400, 300)  # 1 px = 1 mm; table y grows upwards


def _tracer() -> ArmTracer:
    return ArmTracer(PLANE, (300, 400))


def test_motion_near_a_point_is_seen_and_far_motion_is_not() -> None:
    tracer = _tracer()
    moving = np.zeros((300, 400), bool)
    moving[140:160, 40:60] = True  # around table (50, 150)
    tracer.add(moving)
    assert tracer.moved_near((55.0, 150.0), 15.0)
    assert not tracer.moved_near((300.0, 150.0), 15.0)
    tracer.reset()
    assert not tracer.moved_near((55.0, 150.0), 15.0)


def test_the_arm_points_at_the_seat_it_came_from() -> None:
    seats = seat_directions(["Ann", "Ben"], [Seat(x=200.0, y=0.0, facing_deg=90.0),
                                           Seat(x=200.0, y=300.0, facing_deg=270.0)])
    tracer = _tracer()
    arm = np.zeros((300, 400), bool)
    arm[150:300, 190:210] = True  # from the image bottom (table y = 0) up to the card
    tracer.add(arm)
    assert tracer.player((200.0, 150.0), seats) == "Ann"


def test_an_arm_mostly_out_of_view_is_found_where_it_enters_the_view() -> None:
    # A card put down near the top edge by the player sitting there: only the fingers are
    # in view above it, while the card's own slide down to its place leaves heat below it
    # (farther from its centre than the fingers).
    seats = seat_directions(["Ann", "Ben"], [Seat(x=200.0, y=0.0, facing_deg=90.0),
                                           Seat(x=200.0, y=300.0, facing_deg=270.0)])
    tracer = _tracer()
    moving = np.zeros((300, 400), bool)
    moving[0:40, 190:210] = True  # fingers, from the top edge (table y = 300)
    moving[30:190, 165:235] = True  # the card sliding down to table (200, 220), row 80
    tracer.add(moving)
    assert tracer.player((200.0, 220.0), seats) == "Ben"
