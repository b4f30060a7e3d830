"""The renderer's ground truth is exact: what it says is where the pixels are."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from synth import effects
from synth.camera import Camera, random_camera
from synth.decks import EXCLUDED, SPLITS, decks_for
from synth.hands import HandPose
from synth.printed import PRINT_PX_PER_MM, print_sprite
from synth.scene import Placed, Renderer, Scene, card, card_art, deck_paths, stand_in

DECK = "aisleriot:anglo_poker"
CLEAN = effects.Photometry.random(np.random.default_rng(0), clean=True)


def _render(scene: Scene, camera: Camera, colour: tuple[int, int, int] = (25, 25, 25)
            ) -> tuple[np.ndarray, object]:
    renderer = Renderer(camera, np.random.default_rng(1), CLEAN, surface_colour=colour,
                        shadows=False)
    return renderer.render(scene)


def _edge_points_mm(corners: np.ndarray, per_side: int = 12) -> np.ndarray:
    """Points along the middle 70% of each side (clear of the rounded corners)."""
    points = []
    for a, b in zip(corners, np.roll(corners, -1, axis=0), strict=True):
        for u in np.linspace(0.15, 0.85, per_side):
            points.append(a + (b - a) * u)
    return np.array(points)


def _edge_offsets(image: np.ndarray, background: tuple[int, int, int],
                  points_px: np.ndarray, inward_px: np.ndarray) -> np.ndarray:
    """Where the image crosses halfway from card to table along each edge normal, as a
    signed offset in pixels from the expected edge point (sub-pixel, bilinear)."""
    difference = np.linalg.norm(image.astype(np.float32) - np.float32(background), axis=2)
    steps = np.arange(-4.0, 4.01, 0.125, dtype=np.float32)
    xs = (points_px[:, None, 0] + steps[None, :] * inward_px[:, None, 0]).astype(np.float32)
    ys = (points_px[:, None, 1] + steps[None, :] * inward_px[:, None, 1]).astype(np.float32)
    profile = cv2.remap(difference, xs, ys, cv2.INTER_LINEAR)  # outside -> inside
    offsets = []
    for row in profile:
        half = row[-1] / 2  # halfway between the table (0) and the card just inside
        crossing = int(np.argmax(row > half))
        a, b = row[crossing - 1], row[crossing]
        offsets.append(steps[crossing - 1] + (half - a) / (b - a) * 0.125)
    return np.array(offsets)


@pytest.mark.parametrize("seed", range(6))
def test_rendered_card_edges_lie_on_the_projected_outline(seed: int) -> None:
    rng = np.random.default_rng(seed)
    camera = random_camera(rng, view_mm=(500, 300))  # tilted up to 45 degrees, lens distortion
    # A plain white card: the printed border of real artwork would bias the edge reading.
    white = np.full((352, 252, 4), 255, np.uint8)
    placed = Placed("a", "distractor", "white card",
                    (float(rng.uniform(-60, 60)), float(rng.uniform(-40, 40))),
                    float(rng.uniform(0, 360)), sprite_key=(white,))
    green = (0, 200, 0)
    image, truth = _render(Scene((placed,)), camera, colour=green)
    corners_mm = np.array(truth.objects[0].corners_mm)
    assert np.allclose(camera.project(corners_mm), truth.objects[0].corners_px, atol=1e-3)
    edge_mm = _edge_points_mm(corners_mm)
    inward_mm = (np.array(placed.center) - edge_mm) * 0.01  # a step towards the middle
    expected = camera.project(edge_mm)
    inward = camera.project(edge_mm + inward_mm) - expected
    inward /= np.linalg.norm(inward, axis=1, keepdims=True)
    offsets = _edge_offsets(image, green, expected, inward)
    assert np.abs(offsets).max() <= 1.0, offsets
    assert abs(float(np.median(offsets))) <= 0.3


def test_ground_truth_homography_maps_table_to_undistorted_pixels() -> None:
    camera = random_camera(np.random.default_rng(3))
    points = np.array([[0.0, 0.0], [120.0, -80.0], [-200.0, 150.0]])
    undistorted = cv2.undistortPoints(camera.project(points).reshape(-1, 1, 2),
                                      camera.camera_matrix, camera.dist_coeffs,
                                      P=camera.camera_matrix).reshape(-1, 2)
    mapped = cv2.perspectiveTransform(undistorted.reshape(-1, 1, 2),
                                      np.array(camera.image_to_table)).reshape(-1, 2)
    assert np.allclose(mapped, points, atol=0.05)
    assert np.allclose(camera.pixels_to_table(camera.project(points)), points, atol=1e-6)


def test_stacking_order_and_visible_fractions() -> None:
    camera = Camera.looking_at((0.0, 0.0), 420.0, image_size=(960, 540))
    lower = card("lower", "back", DECK, (0.0, 0.0), face_up=False)
    upper = card("upper", "2C", DECK, (31.5, 0.0))  # covers the right half of the lower card
    image, truth = _render(Scene((lower, upper)), camera)
    by_uid = {o.uid: o for o in truth.objects}
    assert [o.uid for o in sorted(truth.objects, key=lambda o: o.z)] == ["lower", "upper"]
    assert by_uid["upper"].visible_fraction == 1.0
    assert by_uid["lower"].visible_fraction == pytest.approx(0.5, abs=1e-3)
    # The top-left index of the lower card is visible, the bottom-right one is covered.
    assert by_uid["lower"].index_visible == [1.0, 0.0]
    # In the overlap the image shows the upper card's white face, not the lower card's back.
    overlap_mm = np.array([[20.0, 0.0]])
    u, v = camera.project(overlap_mm)[0].round().astype(int)
    assert image[v, u].mean() > 200
    left_only = camera.project(np.array([[-25.0, 0.0]]))[0].round().astype(int)
    assert image[left_only[1], left_only[0]].mean() < 200  # the patterned back


def test_a_hand_covers_what_is_under_it() -> None:
    camera = Camera.looking_at((0.0, 0.0), 500.0, image_size=(960, 540))
    placed = card("a", "9H", DECK, (0.0, 0.0))
    hand = HandPose(reach=(0.0, 60.0))
    _, truth = _render(Scene((placed,), (hand,)), camera)
    assert 0.0 < truth.objects[0].visible_fraction < 0.8
    assert truth.hands_px and len(truth.hands_px[0]) > 10


def test_held_out_decks_never_train() -> None:
    held_out = decks_for("test")
    assert len(held_out) >= 4 and "kde:svg-standard" in held_out
    assert not set(held_out) & set(decks_for("train"))
    assert not set(SPLITS) & set(EXCLUDED)


def test_carpet_has_tufts_a_few_mm_across() -> None:
    from synth.surfaces import carpet

    rng = np.random.default_rng(3)
    texture = carpet(rng, (400, 300), px_per_mm=4.0).astype(np.float32)
    assert texture.shape == (300, 400, 3)
    grey = texture.mean(axis=2)
    # Strong light and shade between tufts (real carpets photographed from above)...
    assert grey.std() / grey.mean() > 0.08
    # ...at the tuft scale: neighbouring pixels agree, pixels 10 mm apart do not.
    near = np.corrcoef(grey[:, :-1].ravel(), grey[:, 1:].ravel())[0, 1]
    far = np.corrcoef(grey[:, :-40].ravel(), grey[:, 40:].ravel())[0, 1]
    assert near > 0.8 and far < 0.3


def test_a_design_without_a_joker_or_back_shows_a_stand_ins_not_another_card() -> None:
    # kde:svg-standard has neither: its "joker" once rendered as its ace of spades, so the
    # ground truth said JK where the picture showed AS (and taught that to the classifier).
    deck = "kde:svg-standard"
    assert "JK" not in deck_paths(deck) and "back" not in deck_paths(deck)
    ace = card_art(deck, "AS")
    for code in ("JK", "back"):
        art = card_art(deck, code)
        assert np.abs(art.astype(int) - ace.astype(int)).mean() > 10
        assert np.array_equal(art, card_art(stand_in(deck), code))
    assert stand_in(deck) not in {d for split in SPLITS for d in decks_for(split)}


def test_printed_matter_is_page_sized_opaque_and_busy() -> None:
    for seed in range(6):
        sprite = print_sprite(np.random.default_rng(seed))
        h_mm, w_mm = np.array(sprite.shape[:2]) / PRINT_PX_PER_MM
        assert 110 <= w_mm <= 260 and 140 <= h_mm <= 300
        assert (sprite[..., 3] == 255).all()
        assert sprite[..., :3].std() > 10


def _topmost_bright_row(image: np.ndarray, column: float) -> int:
    bright = np.nonzero(image[:, round(column)].astype(int).sum(axis=1) > 300)[0]
    return int(bright.min())


def _leftmost_bright_col(image: np.ndarray, row: float) -> int:
    bright = np.nonzero(image[round(row)].astype(int).sum(axis=1) > 300)[0]
    return int(bright.min())


@pytest.mark.parametrize(("yaw", "centre", "lengthwise"),
                         [(0.0, (0.0, 0.0), False), (30.0, (40.0, 10.0), True)])
def test_a_bent_card_rises_where_the_camera_sees_it_and_keeps_its_resting_edges(
        monkeypatch: pytest.MonkeyPatch, yaw: float, centre: tuple[float, float],
        lengthwise: bool) -> None:
    """Arched, a card rests on two opposite edges (drawn where the ground truth puts them)
    and the middles of the other two rise: the camera sees them where the line of sight
    through the raised point meets the table. Across its width the far short side's middle
    rises (seen further up the picture); along its length, seen from a camera turned to
    one side, the left long side's middle rises (seen moved sideways)."""
    from synth import scene as scene_module

    rise = 6.0
    monkeypatch.setattr(scene_module.Bend, "random", classmethod(
        lambda cls, rng, eye: cls(rise, lengthwise, 0.0, 0.0, 0.5, eye)))
    camera = Camera.looking_at((0.0, 0.0), 300.0, tilt_deg=40.0, yaw_deg=yaw,
                               image_size=(960, 540))
    one = Scene((card("c", "2S", DECK, centre, 0.0),), ())
    images = {}
    for bends in (0.0, 1.0):
        renderer = Renderer(camera, np.random.default_rng(1), CLEAN,
                            surface_colour=(25, 25, 25), shadows=False, bends=bends)
        images[bends] = renderer.render(one)[0]
    eye = camera.centre
    top = np.array([centre[0], centre[1] + 44.0])  # the far short side's middle
    left = np.array([centre[0] - 31.5, centre[1]])  # the left long side's middle
    raised, resting = (left, top) if lengthwise else (top, left)
    seen = raised + (raised - eye[:2]) * rise / (eye[2] - rise)
    flat_px, seen_px = camera.project(raised)[0], camera.project(seen)[0]
    rest_px = camera.project(resting)[0]

    def edge_at(image: np.ndarray, point: np.ndarray, side_of_card: bool) -> float:
        """Where the card's edge through ``point`` lies: its column (a long side, found
        along the point's row) or its row (a short side, along the point's column)."""
        if side_of_card:
            return _leftmost_bright_col(image, point[1]) - point[0]
        return _topmost_bright_row(image, point[0]) - point[1]

    raised_is_side = lengthwise
    assert float(np.linalg.norm(flat_px - seen_px)) >= 4  # far enough apart to tell
    assert abs(edge_at(images[0.0], flat_px, raised_is_side)) <= 1.5
    assert abs(edge_at(images[1.0], seen_px, raised_is_side)) <= 1.5
    for image in images.values():
        assert abs(edge_at(image, rest_px, not raised_is_side)) <= 1.5


def test_bends_leave_the_frames_stream_as_it_was() -> None:
    """A card's bend comes from a stream of its own: the frame's stream (and so every scene
    a benchmark draws after it) is the same with bends as without, and ``bends=0`` (the
    default, and all footage) draws every card flat."""
    camera = random_camera(np.random.default_rng(2), target=(0.0, 0.0), view_mm=(300, 180),
                           image_size=(480, 270))
    one = Scene((card("c", "QH", DECK, (0.0, 0.0), 30.0),), ())
    streams = {bends: np.random.default_rng(4) for bends in (None, 0.0, 1.0)}
    first = Renderer(camera, streams[None], CLEAN).render(one)[0]
    again = Renderer(camera, streams[0.0], CLEAN, bends=0.0).render(one)[0]
    bent = Renderer(camera, streams[1.0], CLEAN, bends=1.0).render(one)[0]
    assert np.array_equal(first, again)
    assert not np.array_equal(first, bent)
    assert streams[1.0].random() == streams[0.0].random() == streams[None].random()
