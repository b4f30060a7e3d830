"""End to end in a real headless Chromium: a game on a sample clip, a correction, a dispute.

Saves dashboard-live.png and dashboard-dispute.png in a temporary folder, or in the folder
named by REFEREE_SCREENSHOTS (``REFEREE_SCREENSHOTS=docs`` refreshes the README's pictures).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from referee.web.app import ServerConfig, create_app
from tests.web.conftest import SAMPLES

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is missing")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = ServerConfig(recordings=tmp_path / "recordings", calibrations=tmp_path,
                          samples=SAMPLES)
    server = uvicorn.Server(uvicorn.Config(create_app(config), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@contextmanager
def _dashboard(server: str) -> Iterator[Any]:
    """A page of the dashboard in headless Chromium, 1440 x 960."""
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 960})
            page.goto(server)
            yield page
        finally:
            browser.close()


def test_game_correction_and_dispute_in_chromium(server: str, tmp_path: Path) -> None:
    docs = Path(os.environ.get("REFEREE_SCREENSHOTS", tmp_path))
    with _dashboard(server) as page:
        page.select_option("#game", "shove-piggy-shove")
        page.select_option("#source", "clip:shove-piggy-shove")
        # The page's default is the camera pipeline; this test checks the page with the
        # clip's recorded observations, whose rulings are known exactly.
        page.select_option("#mode", "recorded")
        page.select_option("#speed", "4")
        page.click("#start")
        feed = page.locator("#feed")
        feed.get_by_text("Ann opens with the two of diamonds.").wait_for(timeout=30_000)
        # Only the inputs this game understands are offered.
        assert page.locator("[data-declare=oink]").is_visible()
        assert not page.locator("[data-declare=chicken_out]").is_visible()
        assert not page.locator("#m-value").is_visible()  # no die in Shove Piggy Shove
        feed.get_by_text("shoves the three of hearts").wait_for(timeout=30_000)
        page.wait_for_function("document.getElementById('cam').naturalWidth > 0")
        page.wait_for_timeout(400)
        docs.mkdir(exist_ok=True)
        page.screenshot(path=str(docs / "dashboard-live.png"))

        # correct the two of diamonds to the three: every ruling is made again
        page.locator('#cam-hit polygon[data-label="2D"]').click()
        page.fill("#c-card", "3D")
        page.click("#c-ok")
        feed.get_by_text("Ann opens with the three of diamonds.").wait_for(timeout=30_000)
        assert feed.get_by_text("Ann opens with the two of diamonds.").count() == 0

        page.click('button[data-view="replay"]')
        page.select_option("#r-source", "clip-shove-piggy-shove")
        page.click("#r-open")
        mark = page.locator(".timeline .mark.legal").nth(3)
        mark.click()
        page.locator("#d-evidence").get_by_text("threshold").first.wait_for(timeout=30_000)
        assert "one rank lower" in page.inner_text("#d-rule")
        page.wait_for_function("document.getElementById('d-after').naturalWidth > 0")
        page.click("#f-next")
        page.fill("#rs-touch_tolerance_mm2", "500")
        page.click("#r-run")
        page.locator("#r-changes").get_by_text("change").first.wait_for(timeout=30_000)
        page.wait_for_timeout(300)
        # A ruling whose words stand is shown once, with the field that changed behind it
        # (not struck out and repeated).
        items = page.evaluate("""() => [...document.querySelectorAll('#r-changes li')].map(
            (li) => [li.querySelector(':scope > .was')?.textContent.trim() ?? null,
                     li.querySelector(':scope > .now')?.textContent.trim() ?? null,
                     li.querySelectorAll('.field').length])""")
        assert items and all(fields or was != now for was, now, fields in items), items
        assert any(fields for _, _, fields in items), items
        page.screenshot(path=str(docs / "dashboard-dispute.png"), full_page=True)


def test_a_table_calibrated_by_hand_names_its_cards_size_in_chromium(server: str,
                                                                     tmp_path: Path) -> None:
    import json

    docs = Path(os.environ.get("REFEREE_SCREENSHOTS", tmp_path))
    with _dashboard(server) as page:
        page.select_option("#game", "slapstick")
        page.select_option("#source", "clip:slapstick")
        page.click("#manual-cal summary")
        page.wait_for_function("document.getElementById('cal-frame').naturalWidth > 0")
        frame = page.locator("#cal-frame")
        box = frame.bounding_box()
        assert box is not None
        for fx, fy in ((0.1, 0.9), (0.9, 0.9), (0.75, 0.2), (0.25, 0.2)):
            frame.click(position={"x": fx * box["width"], "y": fy * box["height"]})
        page.fill("#cal-name", "bridge-table")
        page.fill("#cal-card", "big")
        page.click("#cal-save")
        page.get_by_text("WIDTHxLENGTH in mm").wait_for(timeout=10_000)
        assert not (tmp_path / "bridge-table.json").exists()
        page.fill("#cal-card", "57x89")
        page.click("#cal-save")
        page.locator("#cal-msg").get_by_text("saved bridge-table.json").wait_for(timeout=10_000)
        saved = json.loads((tmp_path / "bridge-table.json").read_text())
        assert saved["card_mm"] == [57, 89] and saved["frame"] == "rectangle"
        docs.mkdir(exist_ok=True)
        page.locator("#manual-cal").screenshot(path=str(docs / "dashboard-calibrate.png"))
