"""Black-box harness for the referee's `adjudicate` command (see shared/spec/contract.md).

The tests in this folder are written from shared/spec/rules.md and contract.md only.
They drive `python -m referee adjudicate` as a subprocess and read its JSON-lines rulings.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 60

HERE = Path(__file__).resolve().parent

_cache: dict[str, list[dict]] = {}


def _key(game, observations, players, settings) -> str:
    return json.dumps([game, observations, players, settings], sort_keys=True)


def _format_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _run(
    game: str,
    observations: list[dict | str],
    players: list[str] | None,
    settings: dict | None,
    *,
    real_process: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Write observations as JSON lines (a str item is written verbatim) and run the CLI."""
    fd, path = tempfile.mkstemp(prefix="scenario-", suffix=".jsonl")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for obs in observations:
                fh.write(obs if isinstance(obs, str) else json.dumps(obs))
                fh.write("\n")
        cmd = [sys.executable, "-m", "referee", "adjudicate", "--game", game]
        if players is not None:
            cmd += ["--players", ",".join(players)]
        for key, value in (settings or {}).items():
            cmd += ["--set", f"{key}={_format_value(value)}"]
        cmd.append(path)
        if real_process or os.environ.get("SCENARIO_SUBPROCESS") == "1":
            return subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True,
                                  timeout=TIMEOUT_S)
        return _run_in_process(cmd)
    finally:
        os.unlink(path)


def _run_in_process(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    """The same `referee` entry point without a new interpreter (~0.5 s saved per run).
    SCENARIO_SUBPROCESS=1 runs every scenario as a real subprocess instead."""
    from referee.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(cmd[3:])
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    return subprocess.CompletedProcess(cmd, code, out.getvalue(), err.getvalue())


def adjudicate(
    game: str,
    observations: list[dict],
    players: list[str] | None = None,
    settings: dict | None = None,
) -> list[dict]:
    """Run `referee adjudicate`, assert exit status 0, return the parsed rulings."""
    key = _key(game, observations, players, settings)
    if key not in _cache:
        proc = _run(game, observations, players, settings)
        assert proc.returncode == 0, (
            f"referee adjudicate --game {game} exited {proc.returncode}\n"
            f"stderr:\n{proc.stderr[-4000:]}"
        )
        rulings = []
        for n, line in enumerate(proc.stdout.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:  # pragma: no cover - reported as failure
                raise AssertionError(f"stdout line {n} is not JSON: {line!r} ({exc})") from exc
            assert isinstance(obj, dict), f"stdout line {n} is not a JSON object: {line!r}"
            rulings.append(obj)
        _cache[key] = rulings
    return copy.deepcopy(_cache[key])


def adjudicate_failure(
    game: str,
    observations: list[dict | str],
    players: list[str] | None = None,
    settings: dict | None = None,
) -> tuple[int, str]:
    """Run `referee adjudicate` (a real process: what a user sees) expecting it to reject the
    input; return (returncode, stderr)."""
    proc = _run(game, observations, players, settings, real_process=True)
    assert proc.returncode != 0, (
        f"expected a failure exit status, got 0; stdout:\n{proc.stdout[-2000:]}"
    )
    return proc.returncode, proc.stderr


@pytest.fixture(scope="session", name="adjudicate")
def adjudicate_fixture():
    return adjudicate


@pytest.fixture(scope="session", name="adjudicate_failure")
def adjudicate_failure_fixture():
    return adjudicate_failure
