"""Property-based requests from the OpenAPI schema: the API never answers 500."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, settings

from referee.web.app import ServerConfig, create_app
from tests.web.conftest import SAMPLES

schemathesis = pytest.importorskip("schemathesis")


ROOT = Path(tempfile.mkdtemp(prefix="referee-schema-"))
# made when the module is collected, so removed when the run ends whatever runs of it
atexit.register(shutil.rmtree, ROOT, True)


def _app() -> FastAPI:
    return create_app(ServerConfig(recordings=ROOT / "recordings", calibrations=ROOT,
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


def test_every_rule_id_the_referee_gives_has_its_text() -> None:
    import re
    from pathlib import Path

    from referee.web.rule_text import BY_RULE

    package = Path(__file__).resolve().parents[2] / "referee"
    source = "\n".join(p.read_text() for p in package.rglob("*.py"))
    used = set(re.findall(r'rule="([a-z_]+)"', source))
    used |= set(re.findall(r'_illegal\(t, "([a-z_]+)"', source))
    assert {"overdue_not_moved", "coin_vanished", "not_in_deck"} <= used  # the scan works
    assert used <= set(BY_RULE), used - set(BY_RULE)
