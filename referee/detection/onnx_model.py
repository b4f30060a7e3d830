"""What the learned models share: where they live, their metadata, an onnxruntime session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

MODELS_DIR: Final = Path(__file__).resolve().parents[2] / "models"


class ModelMissingError(RuntimeError):
    """A model file is not there, or cannot be used (train it: models/README.md)."""


def read_meta(model: Path, what: str) -> dict[str, Any]:
    """The model's metadata (``<model>.json``); a clear error when the model or its
    metadata is missing or unreadable."""
    if not model.exists():
        raise ModelMissingError(f"{what} {model} not found (see models/README.md)")
    path = model.with_suffix(".json")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelMissingError(f"{what} {model}: its metadata {path.name} cannot be read "
                                f"({type(error).__name__})") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("classes", []), list):
        raise ModelMissingError(f"{what} {model}: its metadata {path.name} is not a model's")
    return meta


def cpu_session(model: Path, threads: int) -> Any:
    """An onnxruntime session on the CPU with ``threads`` threads inside each operator."""
    import onnxruntime  # imported on first use: a replay without cards never needs it

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    try:
        return onnxruntime.InferenceSession(str(model), options,
                                            providers=["CPUExecutionProvider"])
    except Exception as error:  # onnxruntime's own errors (InvalidProtobuf...) are plain ones
        raise ModelMissingError(f"{model} cannot be loaded by onnxruntime "
                                f"({type(error).__name__})") from None
