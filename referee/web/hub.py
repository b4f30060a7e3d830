"""Numbered live messages: the pipeline thread appends, browsers read from their own cursor.

Appending never waits for a reader, so a slow or closed browser cannot hold up the
pipeline; a reconnecting page asks for everything after the last number it saw.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from dataclasses import dataclass
from typing import Any, Final

MAX_KEPT: Final = 20_000


@dataclass(frozen=True)
class Message:
    seq: int
    kind: str
    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "kind": self.kind, "data": self.data}


class Hub:
    def __init__(self, max_kept: int = MAX_KEPT) -> None:
        self._lock = threading.Lock()
        self._messages: deque[Message] = deque(maxlen=max_kept)
        self._seq = 0
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    @property
    def last_seq(self) -> int:
        return self._seq

    def publish(self, kind: str, data: dict[str, Any]) -> int:
        """Append one message and wake the readers (callable from any thread)."""
        with self._lock:
            self._seq += 1
            self._messages.append(Message(self._seq, kind, data))
            waiters = list(self._waiters)
            seq = self._seq
        for loop, event in waiters:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # that reader's loop has closed
                self._waiters.discard((loop, event))
        return seq

    def since(self, seq: int, limit: int = 500) -> tuple[list[Message], bool]:
        """Messages numbered above ``seq`` (at most ``limit``), and whether some the
        reader wanted are gone (it must reload the state)."""
        with self._lock:
            if not self._messages:
                return [], False
            first = self._messages[0].seq
            lost = seq + 1 < first
            start = max(0, seq + 1 - first)
            out = [self._messages[i] for i in range(start, min(len(self._messages),
                                                               start + limit))]
        return out, lost

    async def wait_after(self, seq: int, timeout: float) -> None:
        """Return when a message numbered above ``seq`` exists, or after ``timeout``."""
        event = asyncio.Event()
        key = (asyncio.get_running_loop(), event)
        with self._lock:
            if self._seq > seq:
                return
            self._waiters.add(key)
        try:
            await asyncio.wait_for(event.wait(), timeout)
        except TimeoutError:
            pass
        finally:
            with self._lock:
                self._waiters.discard(key)
