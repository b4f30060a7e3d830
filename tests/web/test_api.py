"""The dashboard API: setup data, a live game on a sample clip, corrections, replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from referee.rules.registry import GAMES, rules_for
from referee.web.app import ServerConfig, create_app
from tests.web.conftest import SAMPLES, start_clip, wait_for


def _recorded_rulings(game: str) -> list[dict[str, object]]:
    text = (SAMPLES / game / "rulings.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line]


def _finished(client: TestClient) -> dict[str, object] | None:
    state = client.get("/api/session").json()
    return state if state["finished"] else None


def test_games_list_every_setting_with_its_default(client: TestClient) -> None:
    games = client.get("/api/games").json()
    assert [g["name"] for g in games] == list(GAMES)
    for game in games:
        fields = rules_for(game["name"]).settings_type.model_fields
        assert {s["name"]: s["default"] for s in game["settings"]} == {
            k: f.default for k, f in fields.items()}
    piecepack = next(g for g in games if g["name"] == "shove-piecepack")
    variant = next(s for s in piecepack["settings"] if s["name"] == "variant")
    assert variant["choices"] == ["standard", "progressive"]
    assert {g["name"]: g["declares"] for g in games}["shove"] == ["die_roll", "end_turn"]


def test_sources_list_the_sample_clips(client: TestClient) -> None:
    sources = client.get("/api/sources").json()
    assert {c["id"] for c in sources["clips"]} == set(GAMES)
    assert all(c["has_observations"] and c["has_calibration"] for c in sources["clips"])


@pytest.mark.parametrize("game", GAMES)
def test_a_sample_clip_gives_its_recorded_rulings(client: TestClient, game: str) -> None:
    start_clip(client, game)
    state = wait_for(lambda: _finished(client), "the clip to end")
    assert state["session"]["mode_label"] == "replaying recorded observations"
    rulings = [{k: v for k, v in r.items() if k != "i"} for r in state["rulings"]]
    assert rulings == _recorded_rulings(game)
    assert client.get("/api/live/frame.jpg").content[:2] == b"\xff\xd8"


def test_the_camera_pipeline_on_a_sample_clip_gets_its_recorded_buttons(
        client: TestClient) -> None:
    # The Shove clip's die rolls and ends of phase are buttons (manual.jsonl), not pictures.
    start_clip(client, "shove", mode="vision")
    state = wait_for(lambda: _finished(client), "the clip to end", limit=300)
    assert state["session"]["mode_label"] == "camera pipeline"
    rulings = [{k: v for k, v in r.items() if k != "i"} for r in state["rulings"]]
    assert [r["message"] for r in rulings] == \
        [r["message"] for r in _recorded_rulings("shove")]


def test_correcting_a_card_readjudicates(client: TestClient) -> None:
    start_clip(client)
    state = wait_for(lambda: _finished(client), "the clip to end")
    two = next(o for o in state["objects"] if o["label"] == "2D")
    assert client.post("/api/session/correct", json={"uid": two["uid"], "card": "3d"}).json()["ok"]
    after = wait_for(lambda: (s := client.get("/api/session").json())["rulings"][0]["card"]
                     == "3D" and s, "the correction")
    assert after["rulings"][0]["message"] == "Ann opens with the three of diamonds."
    assert next(o for o in after["objects"] if o["uid"] == two["uid"])["label"] == "3D"
    assert client.post("/api/session/correct",
                       json={"uid": two["uid"], "card": "ZZ"}).status_code == 400


def test_manual_declarations_are_ruled(client: TestClient) -> None:
    start_clip(client)
    wait_for(lambda: _finished(client), "the clip to end")
    before = len(client.get("/api/session").json()["rulings"])
    oink = {"player": "Ben", "what": "oink"}
    assert client.post("/api/session/declare", json=oink).status_code == 200
    wait_for(lambda: len(client.get("/api/session").json()["rulings"]) > before, "a ruling")
    assert client.post("/api/session/declare",
                       json={"player": "Zed", "what": "oink"}).status_code == 400
    assert client.post("/api/session/declare", json={"what": "sing"}).status_code == 422
    # NaN or Infinity in a request is refused as bad input, not a server error.
    nan = client.post("/api/session/declare", content=b'{"what": "sing", "value": NaN}',
                      headers={"content-type": "application/json"})
    assert nan.status_code == 422 and nan.json()["detail"][0]["loc"][-1] == "what"


def test_bad_setups_are_refused_in_one_line(client: TestClient) -> None:
    clip = {"kind": "clip", "id": "shove-piggy-shove"}
    bad = [{"game": "chess", "source": clip},
           {"game": "shove-piggy-shove", "source": clip, "settings": {"open_gap_mm": "wide"}},
           {"game": "shove-piggy-shove", "source": clip, "players": ["A", "B", "C"]},
           {"game": "shove-piggy-shove", "source": {"kind": "clip", "id": "../../etc"}},
           {"game": "shove-piggy-shove", "source": {"kind": "camera", "id": "x"}},
           {"game": "slapstick", "source": clip}]
    for body in bad:
        response = client.post("/api/session", json=body)
        assert response.status_code in (400, 404), body
        assert "\n" not in response.json()["detail"]
    assert client.get("/api/session").status_code == 409


def test_a_calibration_for_other_frames_is_refused_for_the_camera_pipeline(
        client: TestClient, config: ServerConfig) -> None:
    data = json.loads((SAMPLES / "shove-piggy-shove" / "calibration.json").read_text())
    data["image_size"] = [1920, 1080]
    (config.calibrations / "other.json").write_text(json.dumps(data))
    response = client.post("/api/session", json={
        "game": "shove-piggy-shove", "source": {"kind": "clip", "id": "shove-piggy-shove"},
        "calibration": "other.json", "mode": "vision", "speed": 0})
    assert response.status_code == 400
    assert "the calibration is for 1920x1080 frames" in response.json()["detail"]
    # Replaying recorded observations uses a calibration for the overlay only.
    start_clip(client, calibration="other.json", mode="recorded")
    state = wait_for(lambda: _finished(client), "the clip to end")
    assert len(state["rulings"]) == len(_recorded_rulings("shove-piggy-shove"))


def test_a_shove_board_layout_is_read_only_from_the_calibrations_folder(
        client: TestClient) -> None:
    for path in ("/dev/zero", "/etc/passwd", "../../etc/passwd"):
        response = client.post("/api/replay/clip-shove/readjudicate",
                               json={"settings": {"board": path}})
        assert response.status_code in (400, 404), path
        assert "passwd" not in response.text and "JSON" not in response.text


def test_a_board_layout_in_the_calibrations_folder_is_used_by_name_or_path(
        client: TestClient, config: ServerConfig) -> None:
    from tests.rules.test_shove_grid import START, layout_file

    path = Path(layout_file(config.calibrations, START))
    for board in (path.name, str(path)):  # a recording keeps the path it was given
        response = client.post("/api/replay/clip-shove/readjudicate",
                               json={"settings": {"board": board}})
        assert response.status_code == 200, response.text
        assert response.json()["settings"]["board"] == str(path.resolve())


def test_files_are_served_only_from_their_folders(client: TestClient) -> None:
    for path in ["/api/replay/clip-..%2F..%2Fetc/frames/0", "/api/replay/rec-..%2F..",
                 "/api/sources/clip/..%2F..%2Fpyproject.toml/frame.jpg",
                 "/api/sources/upload/..%2F..%2Fsecret/frame.jpg",
                 "/api/recordings/..%2F..%2Fx/recover", "/static/..%2F..%2Fapp.py"]:
        assert client.get(path).status_code == 404 if "recover" not in path else \
            client.post(path).status_code == 404, path


def test_uploads_are_size_limited(client: TestClient, config: ServerConfig) -> None:
    assert client.post("/api/uploads?name=big.mp4", content=b"x" * 20_000).status_code == 413
    assert not list(config.uploads.glob("*"))
    ok = client.post("/api/uploads?name=small.mp4", content=b"x" * 100)
    assert ok.json() == {"name": "small.mp4", "bytes": 100}
    assert client.post("/api/uploads?name=..%2Fx.mp4", content=b"x").status_code == 400
    spaced = client.post("/api/uploads?name=a%20b.mp4", content=b"x")
    assert spaced.status_code == 400 and "letters, digits" in spaced.json()["detail"]
    assert client.post("/api/uploads?name=x.exe", content=b"x").status_code == 400


def test_a_recording_replays_with_its_evidence(client: TestClient) -> None:
    start_clip(client)
    wait_for(lambda: _finished(client), "the clip to end")
    client.delete("/api/session")
    recordings = client.get("/api/recordings").json()
    assert len(recordings) == 1 and recordings[0]["closed"]
    rid = "rec-" + recordings[0]["id"]
    timeline = client.get(f"/api/replay/{rid}").json()
    assert timeline["frames"] == 377
    assert timeline["label"].endswith("(replaying recorded observations)")  # its mode
    assert [r["message"] for r in timeline["rulings"]] == \
        [r["message"] for r in _recorded_rulings("shove-piggy-shove")]
    shove = next(r for r in timeline["rulings"] if r.get("evidence"))
    detail = client.get(f"/api/replay/{rid}/rulings/{shove['n']}").json()
    assert detail["evidence"]["touch_tolerance_mm2"] == 20.0
    assert detail["before"] < detail["after"] and "one rank lower" in detail["rule_text"]
    assert detail["observation"]["type"] == "card_placed"
    frame = client.get(f"/api/replay/{rid}/frames/{detail['after']}")
    assert frame.headers["content-type"] == "image/jpeg"
    assert client.get(f"/api/replay/{rid}/frames/99999").status_code == 404
    # The id /api/recordings lists opens the same replay.
    assert client.get(f"/api/replay/{recordings[0]['id']}").json()["frames"] == 377


def test_readjudicating_with_other_settings_shows_what_changes(client: TestClient) -> None:
    same = client.post("/api/replay/clip-shove-piecepack/readjudicate", json={"settings": {}})
    assert same.json()["changes"] == []
    wider = client.post("/api/replay/clip-shove-piecepack/readjudicate",
                        json={"settings": {"seam_mm": "12"}}).json()
    assert wider["changes"] and wider["settings"]["seam_mm"] == "12"
    bad = client.post("/api/replay/clip-shove-piecepack/readjudicate",
                      json={"settings": {"nope": 1}})
    assert bad.status_code == 400 and "unknown setting" in bad.json()["detail"]


def test_shove_ruling_detail_has_the_action_sequence(client: TestClient) -> None:
    timeline = client.get("/api/replay/clip-shove").json()
    legal = next(r for r in timeline["rulings"] if r.get("actions"))
    detail = client.get(f"/api/replay/clip-shove/rulings/{legal['n']}").json()
    assert detail["actions"][0]["do"] in ("move", "push") and detail["board_lines"]


def test_manual_four_point_calibration_is_saved(client: TestClient,
                                                config: ServerConfig) -> None:
    body = {"name": "by-hand", "source": {"kind": "clip", "id": "shove-piggy-shove"},
            "clicks": [[100, 500], [860, 500], [700, 100], [260, 100]],
            "width_mm": 600, "depth_mm": 400}
    assert client.post("/api/calibrations/manual", json=body).json()["ok"]
    assert (config.calibrations / "by-hand.json").is_file()
    assert "by-hand.json" in client.get("/api/sources").json()["calibrations"]
    crossed = {**body, "clicks": [[100, 500], [700, 100], [860, 500], [260, 100]]}
    assert client.post("/api/calibrations/manual", json=crossed).status_code == 400
    tiny = {**body, "width_mm": 1e-300, "depth_mm": 1e-300}  # maps everything to a point
    assert client.post("/api/calibrations/manual", json=tiny).status_code == 400
    # the cards' size: a standard card's unless named
    assert json.loads((config.calibrations / "by-hand.json").read_text())["card_mm"] == [63, 88]
    bridge = {**body, "name": "bridge", "card_mm": [57, 89]}
    assert client.post("/api/calibrations/manual", json=bridge).json()["ok"]
    assert json.loads((config.calibrations / "bridge.json").read_text())["card_mm"] == [57, 89]
    turned = client.post("/api/calibrations/manual", json={**bridge, "card_mm": [89, 57]})
    assert turned.status_code == 400 and "card size" in turned.json()["detail"]


def test_off_loopback_every_request_needs_the_token(config: ServerConfig) -> None:
    secured = ServerConfig(recordings=config.recordings, calibrations=config.calibrations,
                           samples=config.samples, token="s3cret")
    client = TestClient(create_app(secured))
    assert client.get("/api/games").status_code == 401
    assert client.get("/").status_code == 401
    assert client.get("/api/games", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    assert client.get("/?token=s3cret").status_code == 200
    assert client.get("/api/games").status_code == 200  # the cookie set by ?token=


def test_the_api_has_an_openapi_schema(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    assert "/api/session" in schema["paths"] and "/api/replay/{rid}/readjudicate" in schema["paths"]


def test_recordings_folder_is_created(tmp_path: Path) -> None:
    config = ServerConfig(recordings=tmp_path / "a" / "b", calibrations=tmp_path,
                          samples=SAMPLES)
    create_app(config)
    assert (tmp_path / "a" / "b").is_dir()
