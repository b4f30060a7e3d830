"""`referee replay` end to end on a bundled clip, and its refusals of bad input."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLIP = ROOT / "sample_footage" / "shove-piecepack"


def _referee(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "referee", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


def test_replay_prints_observations_and_rulings_in_time_order() -> None:
    done = _referee("replay", str(CLIP / "video.mp4"), "--game", "shove-piecepack",
                    "--players", "Ann,Ben", "--json")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    stopped = [o for o in lines if o.get("type") == "coin_stopped"]
    truth = [json.loads(line) for line in (CLIP / "observations.jsonl").read_text()
             .splitlines() if '"coin_stopped"' in line]
    assert len(stopped) == len(truth)
    assert any(r.get("kind") == "bed_scored" or r.get("kind") == "not_played" for r in lines)
    # Observations come in time order (a ruling keeps the time the engine gives it).
    times = [line["t"] for line in lines if "type" in line]
    assert times == sorted(times)


def _one_line_exit_2(done: subprocess.CompletedProcess[str], words: str) -> None:
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], done.stderr


def test_a_clip_without_calibration_is_refused(tmp_path: Path) -> None:
    shutil.copy(CLIP / "video.mp4", tmp_path / "video.mp4")
    done = _referee("replay", str(tmp_path / "video.mp4"), "--game", "shove-piecepack")
    _one_line_exit_2(done, "no calibration")


def test_a_calibration_for_another_board_is_refused() -> None:
    done = _referee("replay", str(CLIP / "video.mp4"), "--game", "shove",
                    "--calibration", str(CLIP / "calibration.json"))
    _one_line_exit_2(done, "grid")


def test_manual_inputs_from_players_not_at_the_table_are_refused_before_replaying() -> None:
    # The slapstick sample's declarations name Ann, Ben and Cat; without --players the
    # table seats P1-P3. The refusal comes before the video is read: nothing is printed.
    clip = ROOT / "sample_footage" / "slapstick"
    done = _referee("replay", str(clip / "video.mp4"), "--game", "slapstick",
                    "--observations", str(clip / "manual.jsonl"), "--json")
    _one_line_exit_2(done, "player 'Ann' is not at the table")
    assert done.stdout == ""


@pytest.mark.parametrize("damage", ["garbage", "empty"])
def test_a_corrupt_video_is_refused(tmp_path: Path, damage: str) -> None:
    video = tmp_path / "video.mp4"
    video.write_bytes(b"" if damage == "empty" else b"\x00not a video\xff" * 500)
    done = _referee("replay", str(video), "--game", "shove-piecepack",
                    "--calibration", str(CLIP / "calibration.json"))
    _one_line_exit_2(done, "video")


def test_a_truncated_video_replays_what_is_there(tmp_path: Path) -> None:
    data = (CLIP / "video.mp4").read_bytes()
    video = tmp_path / "video.mp4"
    video.write_bytes(data[: len(data) // 3])
    done = _referee("replay", str(video), "--game", "shove-piecepack", "--players", "Ann,Ben",
                    "--calibration", str(CLIP / "calibration.json"), "--json")
    assert "Traceback" not in done.stderr
    assert done.returncode in (0, 2)
    if done.returncode == 2:
        assert len(done.stderr.strip().splitlines()) == 1


def test_calibrating_from_a_fake_video_is_one_line_too(tmp_path: Path) -> None:
    video = tmp_path / "video.mp4"
    video.write_bytes(b"\x00not a video\xff" * 500)  # FFmpeg has its own say about this
    done = _referee("calibrate", str(video), "--out", str(tmp_path / "cal.json"))
    _one_line_exit_2(done, "not an image or a video")


def test_reading_carries_on_past_a_long_run_of_unreadable_frames(tmp_path: Path) -> None:
    import cv2
    import numpy as np

    from referee.pipeline.replay import probe_video, read_frames

    video = tmp_path / "damaged.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 15.0, (64, 48))
    for k in range(80):
        writer.write(np.full((48, 64, 3), 3 * k, np.uint8))
    writer.release()
    data = bytearray(video.read_bytes())
    chunks = [i for i in range(len(data)) if data[i:i + 4] == b"00dc"]
    assert len(chunks) >= 80
    for start in chunks[10:50]:  # 40 frames in a row lose their JPEG data
        size = int.from_bytes(data[start + 4:start + 8], "little")
        data[start + 8:start + 8 + size] = bytes(size)
    video.write_bytes(bytes(data))
    info = probe_video(video)
    frames = list(read_frames(video, info))
    bad = [index for index, _, frame in frames if frame is None]
    assert len(bad) == 40 and bad == list(range(bad[0], bad[0] + 40))  # one run of 40
    assert [index for index, _, frame in frames if frame is not None][-1] == 79
    assert frames[60][1] == pytest.approx(60 / 15.0)  # times stay true after the gap


def test_a_declaration_after_the_source_ended_is_ruled_at_once() -> None:
    # A camera that disconnects ends the frames, not the game: inputs still get rulings.
    from referee.calibration.model import load_calibration
    from referee.observations import Declare
    from referee.pipeline.events import ObservationEvent, RulingEvent
    from referee.pipeline.runner import RefereePipeline
    from referee.tracking.identity import UnreadableReader

    clip = ROOT / "sample_footage" / "shove-piggy-shove"
    pipeline = RefereePipeline("shove-piggy-shove", load_calibration(clip / "calibration.json"),
                               players=["Ann", "Ben"], reader=UnreadableReader())
    pipeline.finish(1.0)
    events = pipeline.manual(Declare(t=2.0, type="declare", what="oink", player="Ann"))
    assert [type(e) for e in events][:1] == [ObservationEvent]
    assert any(isinstance(e, RulingEvent) for e in events)


@pytest.mark.parametrize(("seen", "warned"), [
    ([(57.4, 89.4), (57.7, 89.6)], True),  # a bridge deck
    ([(59.4, 91.5), (59.2, 91.3)], True),  # a bridge deck, its shadow measured too
    ([(57.4, 89.4), (63.2, 88.3), (57.7, 89.6)], True),  # and one measured wrong
    ([(65.7, 90.5), (65.9, 91.0)], False),  # standard cards, their shadow measured too
    ([(66.7, 89.3), (66.5, 89.1)], False),  # a hard shadow along their long sides
    ([(72.7, 89.0), (63.4, 88.3)], False),  # one card laid beside something
    ([(57.4, 89.4)], False),  # one card is no evidence
])
def test_cards_measuring_another_size_than_the_calibration_s_are_warned_of_once(
        seen: list[tuple[float, float]], warned: bool) -> None:
    from referee.calibration.model import load_calibration
    from referee.pipeline.events import StatusEvent
    from referee.pipeline.runner import RefereePipeline
    from referee.tracking.identity import UnreadableReader

    clip = ROOT / "sample_footage" / "slapstick"
    pipeline = RefereePipeline("slapstick", load_calibration(clip / "calibration.json"),
                               players=["A", "B", "C"], reader=UnreadableReader())
    pipeline.tracker.cards.sizes_seen.extend(seen)
    first, again = pipeline._check_card_size(5, 1.0), pipeline._check_card_size(6, 2.0)
    assert again == []
    if not warned:
        assert first == []
        return
    (event,) = first
    assert isinstance(event, StatusEvent) and event.level == "warning"
    assert "not the calibration's 63 x 88" in event.message and "--card-size" in event.message


def test_the_card_size_warning_comes_with_the_frames_once_the_table_is_still() -> None:
    import cv2

    from referee.calibration.model import load_calibration
    from referee.pipeline.events import StatusEvent
    from referee.pipeline.runner import RefereePipeline
    from referee.tracking.identity import UnreadableReader

    clip = ROOT / "sample_footage" / "slapstick"
    pipeline = RefereePipeline("slapstick", load_calibration(clip / "calibration.json"),
                               players=["A", "B", "C"], reader=UnreadableReader())
    pipeline.tracker.cards.sizes_seen.extend([(57.4, 89.4), (57.7, 89.6)])  # bridge cards
    video = cv2.VideoCapture(str(clip / "video.mp4"))
    warnings = []
    for index in range(45):  # the empty table, still: 3 s at 15 fps
        ok, frame = video.read()
        assert ok
        warnings += [e for e in pipeline.process(index, index / 15, frame)
                     if isinstance(e, StatusEvent) and "--card-size" in e.message]
    video.release()
    assert len(warnings) == 1 and warnings[0].level == "warning"


def test_manual_inputs_can_come_from_a_dashboard_recording(tmp_path: Path) -> None:
    # contract.md: --observations merges "declare lines, as a dashboard recording holds them".
    clip = ROOT / "sample_footage" / "shove"
    recording = tmp_path / "20261123-080000-shove"
    recording.mkdir()
    lines = [json.dumps({"i": 0, "t": 0.0, "kind": "table", "objects": []})]
    for n, line in enumerate((clip / "manual.jsonl").read_text().splitlines()):
        declared = json.loads(line)
        if declared.get("type") == "declare":
            lines.append(json.dumps({"i": n, "t": declared["t"], "kind": "observation",
                                     "origin": "manual", "observation": declared}))
            lines.append(json.dumps({"i": n, "t": declared["t"], "kind": "ruling",
                                     "ruling": {"t": declared["t"], "kind": "turn"}}))
    (recording / "log.jsonl").write_text("\n".join(lines) + "\n")
    runs = [_referee("replay", str(clip / "video.mp4"), "--game", "shove", "--json",
                     "--observations", str(source))
            for source in (clip / "manual.jsonl", recording, recording / "log.jsonl")]
    assert all(done.returncode == 0 for done in runs), [d.stderr for d in runs]
    assert runs[0].stdout == runs[1].stdout == runs[2].stdout
    assert '"kind": "legal"' in runs[0].stdout


def test_a_header_claiming_more_frames_than_there_are_adds_no_bad_frames() -> None:
    from dataclasses import replace

    from referee.pipeline.replay import probe_video, read_frames

    video = ROOT / "sample_footage" / "shove" / "video.mp4"
    info = probe_video(video)
    frames = list(read_frames(video, replace(info, frames=info.frames + 100_000)))
    assert len(frames) == info.frames and all(frame is not None for _, _, frame in frames)


def test_a_piecepack_turn_is_scored_as_soon_as_its_coins_have_rested() -> None:
    # Live, the beds are announced half a second after the fifth coin stops, not when the
    # next coin is seen (seconds later, after the board is cleared).
    from referee.calibration.model import load_calibration
    from referee.pipeline.events import ObservationEvent, RulingEvent
    from referee.pipeline.replay import probe_video, replay
    from referee.pipeline.runner import RefereePipeline
    from referee.tracking.identity import UnreadableReader

    pipeline = RefereePipeline("shove-piecepack", load_calibration(CLIP / "calibration.json"),
                               players=["Ann", "Ben"], reader=UnreadableReader())
    info = probe_video(CLIP / "video.mp4")
    frame_t: dict[int, float] = {}
    scored_at, fifth_at, next_seen_at = None, None, None
    for event in replay(CLIP / "video.mp4", info, pipeline):
        frame_t.setdefault(event.index, event.t)
        if isinstance(event, RulingEvent) and event.ruling.kind == "legal" \
                and "5 of 5" in event.ruling.message and fifth_at is None:
            fifth_at = event.t
        if isinstance(event, RulingEvent) and event.ruling.kind == "bed_scored" \
                and scored_at is None:
            scored_at = frame_t[event.index]  # when it was announced, in video time
        if isinstance(event, ObservationEvent) and fifth_at is not None \
                and event.t > fifth_at and next_seen_at is None:
            next_seen_at = event.t
    assert fifth_at is not None and scored_at is not None and next_seen_at is not None
    assert fifth_at + 0.5 <= scored_at <= fifth_at + 1.0 < next_seen_at
