"""What the learned models share: where they live, their metadata, an onnxruntime session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

MODELS_DIR: Final = Path(__file__).resolve().parents[2] / "models"


class ModelMissingError(RuntimeError):
    """A model file is not there (train it: models/README.md)."""


def read_meta(model: Path, what: str) -> dict[str, Any]:
    """The model's metadata (``<model>.json``); a clear error when the model is missing."""
    if not model.exists():
        raise ModelMissingError(f"{what} {model} not found (see models/README.md)")
    meta: dict[str, Any] = json.loads(model.with_suffix(".json").read_text(encoding="utf-8"))
    return meta


def cpu_session(model: Path, threads: int) -> Any:
    """An onnxruntime session on the CPU with ``threads`` threads inside each operator."""
    import onnxruntime  # imported on first use: a replay without cards never needs it

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
