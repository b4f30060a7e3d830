"""A dashboard app over temporary recordings and the bundled sample clips."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from referee.web.app import ServerConfig, create_app

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_footage"


@pytest.fixture
def config(tmp_path: Path) -> ServerConfig:
    calibrations = tmp_path / "calibration"
    calibrations.mkdir()
    return ServerConfig(recordings=tmp_path / "recordings", calibrations=calibrations,
                        samples=SAMPLES, max_upload_bytes=10_000)


@pytest.fixture
def client(config: ServerConfig) -> Iterator[TestClient]:
    with TestClient(create_app(config)) as test_client:
        yield test_client
        test_client.delete("/api/session")


def wait_for(check: Callable[[], Any], what: str, limit: float = 60.0) -> Any:
    """Poll until ``check()`` is truthy; the limit only stops a hung test."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"gave up waiting for {what}")


def start_clip(client: TestClient, game: str = "shove-piggy-shove", **extra: Any) -> Any:
    body = {"game": game, "source": {"kind": "clip", "id": game}, "calibration": "clip",
            "speed": 0, **extra}
    response = client.post("/api/session", json=body)
    assert response.status_code == 200, response.text
    return response.json()
