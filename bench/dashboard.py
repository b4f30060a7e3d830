"""Pipeline frame rate with 0 and with 10 browser clients connected to the dashboard.

Each client holds the live WebSocket and fetches the camera image the way the page does
(the next one 1/10 s after the last arrived). The pipeline reads the clip as fast as it can
(speed 0), so any cost of serving clients shows as a lower frame rate.

    python bench/dashboard.py [--clients 10] [--game shove-piggy-shove]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

import httpx
import websockets

ROOT = Path(__file__).resolve().parents[1]


async def _client(base: str, stop: asyncio.Event) -> None:
    async with websockets.connect(base.replace("http", "ws") + "/api/live/ws?since=0") as ws, \
            httpx.AsyncClient() as http:
        async def frames() -> None:
            while not stop.is_set():
                await http.get(base + "/api/live/frame.jpg")
                await asyncio.sleep(1 / 10)  # as the page does
        task = asyncio.create_task(frames())
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ws.recv(), 0.5)
        task.cancel()


async def _run(base: str, game: str, clients: int) -> float:
    stop = asyncio.Event()
    async with httpx.AsyncClient(timeout=30) as http:
        await http.post(base + "/api/session", json={
            "game": game, "source": {"kind": "clip", "id": game}, "calibration": "clip",
            "speed": 0, "record": True})
        tasks = [asyncio.create_task(_client(base, stop)) for _ in range(clients)]
        while not (state := (await http.get(base + "/api/session")).json())["finished"]:
            await asyncio.sleep(0.2)
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        await http.delete(base + "/api/session")
    return float(state["fps"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--game", default="shove-piggy-shove")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    root = Path(tempfile.mkdtemp(prefix="referee-bench-"))
    # The server runs as people run it: its own process (`referee serve`), so the clients'
    # work here never shares its interpreter, just as browsers would not.
    server = subprocess.Popen(
        [sys.executable, "-m", "referee", "serve", "--port", str(port), "--recordings",
         str(root), "--calibrations", str(root), "--samples", str(ROOT / "sample_footage")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(base)
        results: dict[int, list[float]] = {0: [], args.clients: []}
        for _ in range(args.repeat):
            for clients in results:
                results[clients].append(asyncio.run(_run(base, args.game, clients)))
    finally:
        server.terminate()
        server.wait(timeout=10)
    none, many = max(results[0]), max(results[args.clients])
    print(f"pipeline frame rate ({args.game}, recording on, best of {args.repeat}):")
    print(f"  0 clients:  {none:7.1f} frames/s  {results[0]}")
    print(f"  {args.clients} clients: {many:7.1f} frames/s  {results[args.clients]}")
    print(f"  change (best): {100 * (many - none) / none:+.1f}%, (median): "
          f"{100 * (median(results[args.clients]) / median(results[0]) - 1):+.1f}%")


def _wait_until_up(base: str, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(base + "/api/games", timeout=1).status_code == 200:
                return
        time.sleep(0.2)
    raise SystemExit("the dashboard did not start")


if __name__ == "__main__":
    main()
