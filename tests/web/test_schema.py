"""Property-based requests from the OpenAPI schema: the API never answers 500."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, settings

from referee.web.app import ServerConfig, create_app
from tests.web.conftest import SAMPLES

schemathesis = pytest.importorskip("schemathesis")


def _app() -> FastAPI:
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="referee-schema-"))
    return create_app(ServerConfig(recordings=root / "recordings", calibrations=root,
                                   samples=SAMPLES, max_upload_bytes=10_000))


app = _app()
schema = schemathesis.openapi.from_asgi("/openapi.json", app)


@pytest.fixture(scope="module", autouse=True)
def _stop_games() -> Iterator[None]:
    yield
    app.state.dashboard.stop()


@schema.parametrize()  # type: ignore[attr-defined]
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case: object) -> None:
    response = case.call()  # type: ignore[attr-defined]
    assert response.status_code < 500, response.text
