"""Numbered live messages over WebSocket; a reconnecting page catches up from its number."""

from __future__ import annotations

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
