import cv2
import numpy as np

from referee.calibration.rectify import PlaneMap
from referee.tracking.coins import CoinObserver
from referee.tracking.tokens import read_board
from referee.tracking.topdown import TableView

from .helpers import flat_plane

VIEW = TableView.build(flat_plane(300, 300), (0.0, 0.0, 300.0, 300.0), 2.0)


def _board(coins: list[tuple[float, float]]) -> np.ndarray:
    image = np.full((300, 300, 3), (200, 215, 225), np.uint8)
    cv2.line(image, (0, 150), (299, 150), (40, 40, 40), 2)  # a bed line
    for x, y in coins:
        cv2.circle(image, (round(x), round(300 - y)), 9, (215, 185, 150), -1, cv2.LINE_AA)
    return VIEW.warp(image)


def test_coins_keep_ids_a_knocked_coin_moves_and_the_shooter_is_new() -> None:
    observer = CoinObserver(VIEW)
    observer.start(_board([]))
    first = observer.compare(_board([(100.0, 120.0)]))
    assert [c.id for c in first.stopped] == ["coin1"]
    assert np.hypot(*np.subtract(first.stopped[0].center, (100.0, 120.0))) < 1.0
    observer.commit(first)
    knock = observer.compare(_board([(100.0, 100.0), (104.0, 160.0)]))
    assert [c.id for c in knock.stopped] == ["coin2", "coin1"]  # the shooter first
    observer.commit(knock)
    touching = observer.compare(_board([(100.0, 100.0), (104.0, 160.0), (119.0, 100.0)]))
    assert [c.id for c in touching.stopped] == ["coin3"]
    assert abs(touching.stopped[0].center[0] - 119.0) < 2.5


def _grid(tokens: dict[tuple[int, int], tuple[int, int, int]], light: float) -> np.ndarray:
    image = np.full((300, 300, 3), (215, 220, 225), np.float32)
    for (row, col), colour in tokens.items():
        centre = (round((col + 0.5) * 30 + 4), round(300 - (row + 0.5) * 30 - 3))  # off centre
        cv2.circle(image, centre, 10, colour, -1)
    return VIEW.warp(np.clip(image * light, 0, 255).astype(np.uint8))


def test_tokens_are_read_in_dim_light_and_off_centre() -> None:
    tokens = {(0, 1): (40, 40, 200), (2, 3): (190, 90, 30), (4, 4): (40, 40, 200)}
    for light in (0.45, 1.0):
        reading = read_board(VIEW, _grid(tokens, light), 9, 7, 30.0)
        assert set(reading.red) == {(0, 1), (4, 4)}
        assert set(reading.blue) == {(2, 3)}


def test_a_coins_shadow_does_not_pull_its_centre() -> None:
    # 4 px per mm; the light comes from the upper left, so each coin (2.5 mm high) casts a
    # soft shadow 2 mm down and right of it, dark next to the coin, fading outwards.
    scale, size = 4, 1200
    plane = PlaneMap(None, np.array([[1 / scale, 0, 0], [0, -1 / scale, size / scale],
                                     [0, 0, 1.0]]), (size, size))
    view = TableView.build(plane, (0.0, 0.0, 300.0, 300.0), 2.0)
    board = np.full((size, size, 3), (170, 190, 205), np.float32)
    coins = [(100.0, 120.0), (200.0, 200.0)]
    shadow = np.zeros((size, size), np.float32)
    for x, y in coins:
        cv2.circle(shadow, (round((x + 2) * scale), round((300 - y + 2) * scale)),
                   round(9.5 * scale), 1.0, -1)
    shadow = cv2.GaussianBlur(shadow, (0, 0), 1.0 * scale)
    state = board * (1 - 0.6 * shadow[..., None])
    for x, y in coins:
        cv2.circle(state, (round(x * scale), round((300 - y) * scale)), round(9.5 * scale),
                   (120, 175, 215), -1, cv2.LINE_AA)
    observer = CoinObserver(view)
    observer.start(view.warp(board.astype(np.uint8)))
    found = observer.compare(view.warp(state.astype(np.uint8))).stopped
    assert len(found) == 2
    for coin in found:
        assert min(np.hypot(*np.subtract(coin.center, c)) for c in coins) < 0.5
