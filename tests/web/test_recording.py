"""Recordings survive kill -9: at most the last second is lost, and they replay."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

from referee.web.recording import list_recordings, read_log, recover, segments
from referee.web.replay import open_recording
from tests.web.conftest import ROOT, SAMPLES, wait_for


def _post(url: str, body: dict[str, object]) -> None:
    request = urllib.request.Request(url, json.dumps(body).encode(), method="POST",
                                      headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=10).read()


def test_a_killed_server_leaves_a_recoverable_recording(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    recordings = tmp_path / "recordings"
    server = subprocess.Popen(
        [sys.executable, "-m", "referee", "serve", "--port", str(port), "--recordings",
         str(recordings), "--samples", str(SAMPLES), "--calibrations", str(tmp_path)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"

        def up() -> bool:
            try:
                urllib.request.urlopen(f"{base}/api/games", timeout=2).read()
                return True
            except OSError:
                return False

        wait_for(up, "the server")
        _post(f"{base}/api/session", {"game": "shove-piggy-shove", "calibration": "clip",
                                      "source": {"kind": "clip", "id": "shove-piggy-shove"},
                                      "speed": 2})
        wait_for(lambda: any(read_log(f) and len(segments(f)) >= 6
                             for f in recordings.glob("2*")), "a few seconds of recording")
    finally:
        os.kill(server.pid, signal.SIGKILL)
        server.wait(10)
    folder = next(recordings.glob("2*"))
    log = read_log(folder)
    info = list_recordings(recordings)[0]
    assert not info.closed and info.frames == log[-1]["i"] + 1
    assert any(line["kind"] == "ruling" for line in log)
    readable = recover(folder)
    fps = 15
    assert (readable * fps) >= log[-1]["i"] + 1 - fps  # at most the last second is lost
    dispute = open_recording(folder)
    assert dispute.rulings and dispute.frame_jpeg(0) is not None


def test_the_cli_prints_a_token_when_binding_off_loopback() -> None:
    result = subprocess.run([sys.executable, "-m", "referee", "serve", "--host", "not-an-ip"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stderr.count("\n") == 1


def test_damaged_log_lines_leave_the_rest_of_a_recording_usable(tmp_path: Path) -> None:
    import json

    folder = tmp_path / "20261123-080000-shove-piggy-shove"
    folder.mkdir()
    (folder / "session.json").write_text(json.dumps(
        {"game": "shove-piggy-shove", "players": ["Ann", "Ben"], "fps": "fast"}))
    placed = {"type": "card_placed", "t": 1.0, "card": "5S", "player": "Ann",
              "corners": [[0, 0], [63, 0], [63, 88], [0, 88]]}
    lines = [{"i": "x", "t": 0.5, "kind": "observation", "observation": placed},
             {"i": 3, "t": 0.6, "kind": "table", "objects": [{"outline_mm": [[1]]}]},
             {"i": 4, "t": 0.7, "kind": "correction", "corners": 7},
             {"i": 5, "t": 0.8, "kind": "observation", "observation": {"type": "x"}},
             {"i": 15, "t": 1.0, "kind": "observation", "observation": placed}]
    (folder / "log.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    info = list_recordings(tmp_path)[0]
    assert info.frames == 16
    dispute = open_recording(folder)
    assert [r.ruling.kind for r in dispute.rulings][:1] == ["legal"]
    assert dispute.fps == 15.0


def test_frames_after_skipped_ones_keep_their_own_index(tmp_path: Path) -> None:
    import numpy as np

    from referee.web.recording import Recorder
    from referee.web.replay import FrameReader

    recorder = Recorder(tmp_path, {"game": "shove"}, 15.0, (64, 48))
    written = [*range(0, 5), *range(9, 20)]  # frames 5-8 could not be read
    for index in written:
        recorder.frame(index, np.full((48, 64, 3), 10 * index, np.uint8))
    recorder.close()
    reader = FrameReader(segments(tmp_path / recorder.id))
    for index in (0, 4, 9, 12, 19):
        image = reader.get(index)
        assert image is not None and abs(int(image.mean()) - 10 * index) <= 3, index
    assert reader.get(6) is None
