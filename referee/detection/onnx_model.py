"""What the learned models share: where they live, their metadata, a session that runs one
on the CPU (onnxruntime's, or for the card detector OpenVINO's where that is faster)."""

from __future__ import annotations

import json
import os
import queue
import threading
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, Final

import numpy as np

MODELS_DIR: Final = Path(__file__).resolve().parents[2] / "models"

#: What runs the card detector: "openvino" (OpenVINO, in bfloat16 where the CPU computes
#: bfloat16 itself, as AMX and AVX-512 BF16 do), "onnxruntime" (in float32), or "auto":
#: OpenVINO where it is installed and the CPU computes bfloat16, onnxruntime elsewhere.
#: Measured on a Xeon with AMX (session 36, models/README.md): the network 12-19 ms a pass
#: against onnxruntime's 32-40, a 1280 x 720 frame 208 ms against 252 at the median, and on
#: 300 held-out frames as many cards found (22 found only by one, 21 only by the other).
DETECTOR_RUNTIMES: Final = ("auto", "onnxruntime", "openvino")
#: The environment variable that chooses among DETECTOR_RUNTIMES ("auto" when unset;
#: ``referee detect --runtime`` and ``CardDetector(runtime=...)`` go before it).
RUNTIME_ENV: Final = "REFEREE_DETECTOR_RUNTIME"
#: ``referee detect`` runs the card detector twice a frame (on the picture and on it turned
#: left to right): OpenVINO runs both at once, each on half the threads (two passes in
#: 26-27 ms against 31-32 in turn on 2 threads, session 37, models/README.md), while the
#: shape finder works. (A pass run alone then has half the threads: 26 ms against 16.)
DETECTOR_PASSES: Final = 2


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


def member_paths(model: Path, meta: dict[str, Any], what: str) -> list[Path]:
    """The files of the further runs a model's metadata names (``members``: file names beside
    it, whose readings the model's own join); a clear error when that is no list of names."""
    members = meta.get("members", [])
    if not isinstance(members, list) or not all(
            isinstance(name, str) and name and Path(name).name == name for name in members):
        raise ModelMissingError(f"{what} {model}: its metadata's members are not file names "
                                f"beside it ({members!r})")
    return [model.parent / name for name in members]


def cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def cpu_session(model: Path, threads: int, *, spinning: bool = True) -> Any:
    """An onnxruntime session on the CPU with ``threads`` threads inside each operator;
    without ``spinning`` those threads sleep between runs rather than wait busy for the next
    (two sessions run one after the other then do not take the cores from each other)."""
    import onnxruntime  # imported on first use: a replay without cards never needs it

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    if not spinning:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        return onnxruntime.InferenceSession(str(model), options,
                                            providers=["CPUExecutionProvider"])
    except Exception as error:  # onnxruntime's own errors (InvalidProtobuf...) are plain ones
        raise ModelMissingError(f"{model} cannot be loaded by onnxruntime "
                                f"({type(error).__name__})") from None


class RuntimeUnavailableError(RuntimeError):
    """The card detector's runtime asked for cannot run here (a runtime of another name,
    OpenVINO not installed, or unable to compile the model on this machine): ``reason``,
    and after it in the message what the user may do instead (``hint``)."""

    def __init__(self, reason: str, hint: str = "") -> None:
        super().__init__(f"{reason}; {hint}" if hint else reason)
        self.reason = reason


@cache
def _openvino() -> Any:
    """OpenVINO's runtime core, or None when OpenVINO is not installed or does not start."""
    try:
        import openvino

        return openvino.Core()
    except Exception:  # not installed, or installed broken: the detector runs elsewhere
        return None


@cache
def openvino_bf16() -> tuple[bool, bool]:
    """Whether OpenVINO is installed (and starts), and whether it says this CPU computes
    bfloat16 itself."""
    core = _openvino()
    if core is None:
        return False, False
    try:
        return True, "BF16" in core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    except Exception:  # no CPU plugin: OpenVINO cannot run here
        return False, False


def detector_runtime(choice: str | None = None, *, resolve: bool = True) -> str:
    """The runtime that runs the card detector: ``choice`` (one of DETECTOR_RUNTIMES; by
    default RUNTIME_ENV's value, or "auto") with "auto" resolved (not with ``resolve``
    off). OpenVINO is looked for only when the choice may take it."""
    given = choice if choice else os.environ.get(RUNTIME_ENV, "")
    picked = (given or "auto").strip().lower()
    if picked not in DETECTOR_RUNTIMES:
        source = "runtime" if choice else RUNTIME_ENV
        raise RuntimeUnavailableError(f"{source}={given!r}: the card detector runs with one "
                                      f"of {', '.join(DETECTOR_RUNTIMES)}")
    if not resolve or picked == "onnxruntime":
        return picked
    installed, bf16 = openvino_bf16()
    if picked == "openvino" and not installed:
        raise RuntimeUnavailableError("the card detector cannot run with OpenVINO: it is not "
                                      "installed (pip install openvino)")
    if picked == "auto":
        return "openvino" if installed and bf16 else "onnxruntime"
    return picked


def detector_session(model: Path, threads: int, runtime: str) -> Any:
    """A session of ``runtime`` (``detector_runtime``) for the card detector (OpenVINO's runs
    DETECTOR_PASSES at once, ``start``)."""
    return OpenVinoSession(model, threads, at_once=DETECTOR_PASSES) if runtime == "openvino" \
        else cpu_session(model, threads)


def start(session: Any, feeds: dict[str, Any]) -> Callable[[], list[Any]]:
    """``session`` (``detector_session``) set to run on ``feeds``, and what gives its outputs:
    OpenVINO runs it on threads of its own, so the caller's thread may work meanwhile; an
    onnxruntime session runs it here, before this returns."""
    begun = getattr(session, "start", None)  # (OpenVinoSession's; onnxruntime has none)
    if begun is not None:
        return begun(feeds)  # type: ignore[no-any-return]
    outputs = session.run(None, feeds)
    return lambda: outputs


class _Input:
    def __init__(self, name: str, shape: list[int | None]) -> None:
        self.name, self.shape = name, shape


class OpenVinoSession:
    """A model compiled by OpenVINO for the CPU, run as an onnxruntime session is
    (``get_inputs``, ``run``; a dimension the model leaves open is None), or started to run
    while the caller works (``start``), up to ``at_once`` runs at the same time (each then
    on its share of the ``threads``). It computes in bfloat16 where OpenVINO says the CPU
    does: the card detector's scores then differ from float32's by about 0.01 (logits 0.01
    lower on average) and its boxes by up to about a pixel of its 480-pixel input."""

    def __init__(self, model: Path, threads: int, *, at_once: int = 1) -> None:
        core = _openvino()
        if core is None:
            raise RuntimeUnavailableError("OpenVINO is not installed (pip install openvino)")
        streams = max(1, min(at_once, threads))
        settings: dict[str, Any] = {"INFERENCE_NUM_THREADS": threads,
                                    "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": streams}
        if openvino_bf16()[1]:
            settings["INFERENCE_PRECISION_HINT"] = "bf16"  # as measured (session 36)
        try:
            compiled = core.compile_model(str(model), "CPU", settings)
        except RuntimeError as error:  # OpenVINO's own errors are plain RuntimeErrors
            first = str(error).strip().splitlines()[:1] or [""]
            raise RuntimeUnavailableError(
                f"{model.name} cannot be run by OpenVINO ({first[0][:100]})",
                "--runtime onnxruntime runs it without") from None
        self._inputs = [_Input(port.get_any_name(),
                               [d.get_length() if d.is_static else None
                                for d in port.get_partial_shape()])
                        for port in compiled.inputs]
        self._output_count = len(compiled.outputs)
        # Its requests not running now, each run by one caller at a time (a run started
        # when none is free gets a new one: a caller may start its runs before it waits
        # for any, and callers in other threads then never wait on each other's).
        self._compiled = compiled
        self._idle: queue.SimpleQueue[Any] = queue.SimpleQueue()
        for _ in range(streams):
            self._idle.put(compiled.create_infer_request())

    def get_inputs(self) -> list[_Input]:
        return self._inputs

    def run(self, _names: object, feeds: dict[str, Any]) -> list[Any]:
        return self.start(feeds)()

    def start(self, feeds: dict[str, Any]) -> Callable[[], list[Any]]:
        """The model set to run on ``feeds``, and what waits for its outputs (copies: the
        request runs other inputs after). Call that also when the work done meanwhile
        fails: the first call frees the request (a second gives the same outputs)."""
        try:
            request = self._idle.get_nowait()
        except queue.Empty:
            request = self._compiled.create_infer_request()
        try:
            request.start_async(feeds)
        except BaseException:
            self._idle.put(request)
            raise

        outputs: list[Any] = []
        waited: list[bool] = []
        lock = threading.Lock()  # (waited for by two threads at once, it is freed once)

        def wait() -> list[Any]:
            with lock:
                if not waited:
                    waited.append(True)
                    try:
                        request.wait()
                        outputs.extend(np.array(request.get_output_tensor(k).data)
                                       for k in range(self._output_count))
                    finally:
                        self._idle.put(request)
            if len(outputs) < self._output_count:
                raise RuntimeError("OpenVINO's run failed (as said when first waited for)")
            return outputs

        return wait
