"""Numbered live messages over WebSocket; a reconnecting page catches up from its number."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from referee.web.hub import Hub
from tests.web.conftest import start_clip, wait_for


def test_messages_are_numbered_and_a_reconnect_catches_up(client: TestClient) -> None:
    start_clip(client)
    wait_for(lambda: client.get("/api/session").json()["finished"], "the clip to end")
    with client.websocket_connect("/api/live/ws?since=0") as ws:
        snapshot = ws.receive_json()
    assert snapshot["kind"] == "snapshot" and len(snapshot["data"]["rulings"]) == 23
    with client.websocket_connect("/api/live/ws?since=1") as ws:
        seen = [ws.receive_json() for _ in range(40)]
    numbers = [m["seq"] for m in seen]
    assert numbers == list(range(2, 42))
    assert seen[0]["kind"] in ("recording", "frame", "table")
    kinds = {m["kind"] for m in seen}
    assert "ruling" in kinds and "frame" in kinds


def test_publishing_never_waits_for_readers_and_lost_history_is_reported() -> None:
    hub = Hub(max_kept=10)
    for n in range(25):  # nobody reads: publishing still returns at once
        hub.publish("frame", {"i": n})
    messages, lost = hub.since(3)
    assert lost and messages[0].seq == 16
    messages, lost = hub.since(20)
    assert not lost and [m.seq for m in messages] == [21, 22, 23, 24, 25]


def test_a_camera_that_does_not_come_back_ends_the_session_with_a_message(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import cv2

    from referee.web import live as live_module
    from referee.web.live import LiveConfig, LiveSession

    class Gone:  # a camera index with nothing behind it
        def __init__(self, source: object) -> None:
            self.source = source

        def isOpened(self) -> bool:
            return False

        def release(self) -> None:
            pass

    monkeypatch.setattr(live_module, "CAMERA_PATIENCE_S", 0.3)
    monkeypatch.setattr(live_module.cv2, "VideoCapture", Gone)
    hub = Hub()
    config = LiveConfig(game="shove", players=("Ann", "Ben"), settings={}, source="7",
                        source_label="camera 7", mode="vision", mode_label="camera pipeline",
                        calibration=None)
    session = LiveSession(config, hub, pipeline=None, recordings=None)  # type: ignore[arg-type]
    assert session._camera_back(Gone(7)) is None  # type: ignore[arg-type]
    statuses = [m.data for m in hub.since(0)[0] if m.kind == "status"]
    assert statuses[0]["level"] == "warning" and "stopped sending frames" in statuses[0]["message"]
    assert statuses[-1]["level"] == "error" and "what was recorded is kept" in \
        statuses[-1]["message"]
    assert cv2.VideoCapture is Gone
