"""The ``referee adjudicate`` command: contract behaviour and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.cli import main

ROOT = Path(__file__).resolve().parents[1]
GOOD = [
    {"t": 0, "type": "setup", "game": "shove-piggy-shove", "players": ["Ann", "Ben"]},
    {"t": 1, "type": "card_placed", "card": "KS", "corners": [[0, 0], [63, 0], [63, 88], [0, 88]]},
    {"t": 2, "type": "card_placed", "card": "9H",
     "corners": [[200, 0], [263, 0], [263, 88], [200, 88]]},
]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(args)
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, lines: list[str]) -> str:
    path = tmp_path / "observations.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_rulings_are_json_lines_in_time_order(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["adjudicate", write(tmp_path, [json.dumps(o) for o in GOOD])], capsys)
    assert code == 0 and err == ""
    rulings = [json.loads(line) for line in out.splitlines()]
    assert [r["kind"] for r in rulings] == ["legal", "turn", "legal", "turn"]
    assert all({"t", "kind", "message"} <= set(r) for r in rulings)
    assert [r["t"] for r in rulings] == sorted(r["t"] for r in rulings)


def test_command_line_players_win_over_the_setup_line(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, [json.dumps(o) for o in GOOD])
    code, out, _ = run(["adjudicate", "--players", "Zed,Yan", path], capsys)
    assert code == 0
    assert json.loads(out.splitlines()[0])["player"] == "Zed"


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("{not json", "not valid JSON"),
        ('{"t": 3, "type": "card_placed", "x": ' + "[" * 3000 + "]" * 3000 + "}",
         "nesting too deep"),
        ('{"t": 3, "type": "card_placed", "card": ' + "9" * 5000 + "}", "number too long"),
        ('{"t": 3, "type": "card_placed", "card": "ZZ", "corners": [[0,0],[1,0],[1,1],[0,1]]}',
         "unknown card code"),
        ('{"t": 3, "type": "card_placed"}', "missing field 'card'"),
        ('{"t": 3, "type": "card_placed", "card": "QS"}', "corners"),
        ('{"t": 1, "type": "card_placed", "card": "QS", '
         '"corners": [[0,300],[63,300],[63,388],[0,388]]}', "time goes backwards"),
        ('{"t": 3, "type": "teleport"}', "unknown observation type"),
        ('{"t": "soon", "type": "declare", "what": "oink"}', "field 't'"),
        ('[1, 2]', "JSON object"),
        ('{"t": 3, "type": "card_placed", "card": "QS", "player": "Zoe", '
         '"corners": [[0,300],[63,300],[63,388],[0,388]]}', "unknown player"),
        ('{"t": 3, "type": "card_placed", "card": "QS", '
         '"corners": [[0,0],[0,0],[0,0],[0,0]]}', "no card-sized area"),
    ],
)
def test_bad_lines_are_one_line_errors_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, needle: str
) -> None:
    path = write(tmp_path, [json.dumps(o) for o in GOOD] + [line])
    code, out, err = run(["adjudicate", path], capsys)
    assert code == 2
    assert err.count("\n") == 1 and "line 4" in err and needle in err, err
    assert len(out.splitlines()) == 4  # rulings before the bad line were printed


def test_an_opening_card_without_a_card_sized_outline_is_an_error_on_its_own_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tiny = {"t": 1, "type": "card_placed", "card": "AS",
            "corners": [[0, 0], [1, 0], [1, 1], [0, 1]]}
    path = write(tmp_path, [json.dumps(GOOD[0]), json.dumps(tiny), json.dumps(GOOD[2])])
    code, out, err = run(["adjudicate", path], capsys)
    assert code == 2
    assert "line 2" in err and "no card-sized area" in err, err
    assert out == ""  # the degenerate card was not ruled legal first


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--set", "open_gap_mm=wide"], "open_gap_mm"),
        (["--set", "open_gap_mm=inf"], "finite"),
        (["--set", "touch_tolerance_mm2=1e999"], "finite"),
        (["--set", "colour=red"], "unknown setting 'colour'"),
        (["--set", "novalue"], "name=value"),
        (["--players", "Ann,Ben,Cat"], "played by 2 players"),
        (["--players", "Ann,,Ben"], "comma-separated"),
        (["--players", "Ann,Ann"], "distinct"),
    ],
)
def test_bad_options_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         args: list[str], needle: str) -> None:
    path = write(tmp_path, [json.dumps(o) for o in GOOD[1:]])
    code, _, err = run(["adjudicate", "--game", "shove-piggy-shove", *args, path], capsys)
    assert code == 2 and err.count("\n") == 1 and needle in err, err
    # The fault is on the command line, not on a line of the file.
    assert "line 1" not in err and ("command line" in err or "--" in err), err


@pytest.mark.parametrize(("setting", "needle"), [("open_gap_mm", "not true/false"),
                                               ("touch_tolerance_mm2", "not true/false")])
def test_a_setup_line_gives_numbers_as_numbers(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               setting: str, needle: str) -> None:
    setup = {"type": "setup", "game": "shove-piggy-shove", "players": ["Ann", "Ben"],
             "settings": {setting: True}}
    path = write(tmp_path, [json.dumps(setup), *(json.dumps(o) for o in GOOD[1:])])
    code, out, err = run(["adjudicate", path], capsys)
    assert code == 2 and out == "" and "line 1" in err and needle in err, err
    setup["settings"] = {"open_distance_wraps": False}  # a true/false setting takes one
    path = write(tmp_path, [json.dumps(setup), *(json.dumps(o) for o in GOOD[1:])])
    assert run(["adjudicate", path], capsys)[0] == 0


def test_game_must_be_known(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, ['{"t": 0, "type": "setup", "game": "chess"}'])
    code, _, err = run(["adjudicate", path], capsys)
    assert code == 2 and "line 1: unknown game 'chess'" in err and err.count("\n") == 1


def test_settings_lists_every_game(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["settings"], capsys)
    games = {json.loads(line)["game"]: json.loads(line) for line in out.splitlines()}
    assert code == 0 and set(games) == {"shove-piggy-shove", "shove-piecepack",
                                        "push-out-the-pig", "shove", "slapstick"}
    assert games["shove-piggy-shove"]["settings"]["touch_tolerance_mm2"] == 20.0
    assert games["shove-piecepack"]["settings"]["tiles_per_side"] == 9


def test_installed_entry_point_reads_standard_input() -> None:
    lines = "\n".join(json.dumps(o) for o in GOOD)
    done = subprocess.run([sys.executable, "-m", "referee", "adjudicate", "-"], input=lines,
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0 and len(done.stdout.splitlines()) == 4


_FIELDS = st.sampled_from(["t", "type", "card", "corners", "player", "id", "center", "radius",
                           "red", "blue", "what", "value", "game", "players", "settings"])
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 500) | st.floats(allow_nan=True)
    | st.sampled_from(["QS", "JK", "??", "back", "oink", "card_placed", "coin_stopped",
                       "board_state", "declare", "setup", "Ann", "shove"]),
    lambda inner: st.lists(inner, max_size=5),
    max_leaves=12,
)
_LINES = st.one_of(
    st.text(max_size=40),
    st.dictionaries(_FIELDS, _VALUES, max_size=6).map(json.dumps),
    st.sampled_from([json.dumps(o) for o in GOOD[1:]]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(game=st.sampled_from(["shove-piggy-shove", "shove-piecepack", "push-out-the-pig",
                             "slapstick", "shove"]),
       lines=st.lists(_LINES, max_size=8))
def test_garbled_input_never_crashes(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     game: str, lines: list[str]) -> None:
    path = write(tmp_path, [line.replace("\n", " ") for line in lines])
    code, _, err = run(["adjudicate", "--game", game, path], capsys)
    assert code in (0, 2), err
    assert "Traceback" not in err and "internal error" not in err, err
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("referee: error: ")


def test_a_bad_line_after_a_finished_turn_still_scores_that_turn(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    coins = [{"t": k, "type": "coin_stopped", "id": f"c{k}", "center": [100, 76.2 + 50.8 * k],
              "radius": 9.5} for k in range(5)]
    bad = {"t": 0, "type": "coin_stopped", "id": "x", "center": [100, 76.2], "radius": 9.5}
    path = write(tmp_path, [json.dumps(o) for o in [*coins, bad]])
    code, out, err = run(["adjudicate", "--game", "shove-piecepack", path], capsys)
    assert code == 2 and "line 6: time goes backwards" in err
    kinds = [json.loads(line)["kind"] for line in out.splitlines()]
    assert kinds.count("bed_scored") == 5 and kinds[-2:] == ["score", "turn"]


@pytest.mark.parametrize(("line", "needle"), [
    ({"type": "setup", "game": "shove", "players": ["Ann", "Bob"], "setings": {"turns": 1}},
     "unknown field 'setings' (did you mean 'settings'?)"),
    ({"t": 1, "type": "board_state", "red": [], "blue": [], "plyer": "blue"},
     "unknown field 'plyer' (did you mean 'player'?)"),
    ({"t": 1, "type": "coin_stopped", "id": "a", "center": [0, 0], "player": "Zed"},
     "unknown player 'Zed'"),
])
def test_a_misspelt_field_or_unknown_player_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], line: dict[str, object],
        needle: str) -> None:
    game = "shove" if line["type"] != "coin_stopped" else "shove-piecepack"
    code, _, err = run(["adjudicate", "--game", game, write(tmp_path, [json.dumps(line)])],
                       capsys)
    assert code == 2 and needle in err, err


def test_fields_the_referee_does_not_know_are_ignored(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [{**GOOD[0], "source": "camera 1"}, {**GOOD[1], "frame": 12}, GOOD[2]]
    code, out, _ = run(["adjudicate", write(tmp_path, [json.dumps(o) for o in lines])], capsys)
    assert code == 0 and len(out.splitlines()) == 4


def test_a_model_file_that_cannot_be_loaded_is_one_line_of_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import cv2
    import numpy as np

    from referee.detection import detect
    from referee.detection.onnx_model import ModelMissingError

    def broken(*_: object, **__: object) -> None:  # as a damaged card_suit.onnx fails
        raise ModelMissingError("models/card_suit.onnx cannot be loaded by onnxruntime "
                                "(InvalidProtobuf)")

    monkeypatch.setattr(detect, "detect", broken)
    image = tmp_path / "table.png"
    cv2.imwrite(str(image), np.full((120, 160, 3), 90, np.uint8))
    code, _, err = run(["detect", str(image)], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith("referee: error: models/card_suit.onnx cannot be loaded") \
        and "internal error" not in err and "git checkout" in err


def test_detect_with_a_calibration_gives_detect_the_table_s_plane(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    import cv2
    import numpy as np

    from referee.calibration.model import load_calibration
    from referee.detection import detect
    from referee.detection.detect import Detections

    planes: list[object] = []
    sizes: list[object] = []

    def spy(*_: object, plane: object = None, card_mm: object = None,
            **__: object) -> Detections:
        planes.append(plane)
        sizes.append(card_mm)
        return Detections([])

    monkeypatch.setattr(detect, "detect", spy)
    image = tmp_path / "table.png"
    cv2.imwrite(str(image), np.full((540, 960, 3), 90, np.uint8))
    calibration = ROOT / "sample_footage" / "shove" / "calibration.json"
    assert run(["detect", str(image), "--json"], capsys)[0] == 0
    assert run(["detect", str(image), "--json", "--calibration", str(calibration)],
               capsys)[0] == 0
    expected = load_calibration(calibration).plane
    assert planes[0] is None and planes[1] is not None
    assert np.array_equal(planes[1].image_to_table, expected.image_to_table)  # type: ignore[attr-defined]
    # and the size of the cards it names (a standard card's when it names none)
    bridge = tmp_path / "bridge.json"
    bridge.write_text(json.dumps({**json.loads(calibration.read_text()), "card_mm": [57, 89]}))
    assert run(["detect", str(image), "--json", "--calibration", str(bridge)], capsys)[0] == 0
    assert sizes[1:] == [(63.0, 88.0), (57.0, 89.0)]
