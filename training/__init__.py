"""Training the referee's models on synthetic renders. The runtime never imports this."""

from __future__ import annotations

import os


def use_every_core() -> None:
    """Let ultralytics train on every CPU core.

    On a CPU, ultralytics' trainer sets torch's thread count to its ``NUM_THREADS``, the
    core count less one, keeping a core for data-loading workers; but on a CPU it loads
    the data in the training process itself (no workers). On this 2-core machine that left
    one core idle: 5.5-6 s a batch of 16 for the detector with one thread (session 19).
    """
    from ultralytics.utils import torch_utils

    setattr(torch_utils, "NUM_THREADS", os.cpu_count() or 1)  # noqa: B010
