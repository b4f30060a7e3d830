"""The dashboard's FastAPI application: game setup, live view, recordings, dispute replay.

Files are only ever read from the samples, recordings and calibration folders (named by id,
resolved and checked to stay inside). Off loopback every request needs the printed token.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import re
import threading
import types
import typing
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from fastapi import FastAPI, HTTPException, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import ValidationError

from referee.adjudication import Session
from referee.calibration.errors import CalibrationError
from referee.calibration.model import Calibration, load_calibration, save_calibration
from referee.calibration.sources import is_camera_index
from referee.observations import CardPlaced, Observation
from referee.rules.base import ObservationInputError
from referee.rules.registry import GAMES, rules_for
from referee.web.hub import Hub
from referee.web.live import LiveConfig, LiveSession
from referee.web.models import (
    Accepted,
    ChangeOut,
    ClipInfo,
    CorrectRequest,
    DeclareRequest,
    GameInfo,
    ManualCalibrationRequest,
    ReadjudicateRequest,
    ReadjudicateResult,
    RecordingSummary,
    SettingInfo,
    SettingValue,
    SourceRef,
    Sources,
    StartRequest,
    Uploaded,
)
from referee.web.protocol import FramePipeline
from referee.web.recorded import (
    LABEL,
    RecordedLogError,
    RecordedObservationsPipeline,
    read_observations,
)
from referee.web.recording import RECORDING_ID, list_recordings, recover
from referee.web.replay import Dispute, ReplayError, open_clip, open_recording

STATIC: Final = Path(__file__).parent / "static"
VIDEO_SUFFIXES: Final = frozenset({".mp4", ".avi", ".mkv", ".mov", ".webm"})
SAFE_NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,80}$")
MAX_CALIBRATION_BYTES: Final = 1_000_000


@dataclass(frozen=True)
class ServerConfig:
    recordings: Path
    calibrations: Path
    samples: Path
    token: str | None = None
    max_upload_bytes: int = 200_000_000

    @property
    def uploads(self) -> Path:
        return self.recordings / "uploads"


def _at_table(session: Session, observation: Observation) -> bool:
    """Whether the game knows who the observation names (a player, or a Shove colour)."""
    try:
        session.rules.check_player(session.state, getattr(observation, "player", None))
    except ObservationInputError:
        return False
    return True


def inside(root: Path, name: str) -> Path:
    """``root / name`` when that stays inside ``root`` (no traversal), else 404."""
    if not SAFE_NAME.match(name):
        raise HTTPException(404, "no such file")
    path = (root / name).resolve()
    if not path.is_relative_to(root.resolve()):
        raise HTTPException(404, "no such file")
    return path


def setting_info(name: str, annotation: Any, default: Any) -> SettingInfo:
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Literal:
        return SettingInfo(name=name, type="choice", default=default,
                           choices=[str(a) for a in args])
    if annotation is bool:
        return SettingInfo(name=name, type="bool", default=default)
    if annotation is int or (isinstance(annotation, types.UnionType) and set(args) == {int,
                                                                                     type(None)}):
        return SettingInfo(name=name, type="int", default=default,
                           help="" if default is not None else "empty: the game's default")
    if annotation is float:
        return SettingInfo(name=name, type="float", default=default)
    return SettingInfo(name=name, type="text", default=default)


def games() -> list[GameInfo]:
    out = []
    for name in GAMES:
        rules = rules_for(name)
        settings = [setting_info(key, info.annotation, info.default)
                    for key, info in rules.settings_type.model_fields.items()]
        out.append(GameInfo(name=name, title=rules.title, player_counts=list(rules.player_counts),
                            default_players=list(rules.default_players), settings=settings,
                            declares=list(rules.declares)))
    return out


VisionFactory = Callable[[str, Sequence[str], Mapping[str, Any], Calibration], FramePipeline]


def vision_factory() -> VisionFactory:
    """The camera pipeline: video or camera frames -> tracking -> observations -> rulings."""

    def build(game: str, players: Sequence[str], settings: Mapping[str, Any],
              calibration: Calibration) -> FramePipeline:
        from referee.pipeline.runner import RefereePipeline
        from referee.tracking.identity import reader_for

        reader, _ = reader_for(game)  # a missing model shows as ?? cards on the page
        return RefereePipeline(game, calibration, players=players, settings=settings,
                               reader=reader)

    return build


class Dashboard:
    """The server's state: at most one live session, a few open disputes."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.hub = Hub()
        self.live: LiveSession | None = None
        self.disputes: OrderedDict[str, Dispute] = OrderedDict()
        self.lock = threading.Lock()

    # sources

    def clips(self) -> list[ClipInfo]:
        root = self.config.samples
        out = []
        if root.is_dir():
            for folder in sorted(root.iterdir()):
                if not (folder / "video.mp4").is_file():
                    continue
                players: list[str] = []
                game = folder.name
                if (folder / "observations.jsonl").is_file():
                    try:
                        setup, _ = read_observations(folder / "observations.jsonl")
                    except RecordedLogError:
                        setup = None
                    if setup is not None:
                        game = setup.game or game
                        players = list(setup.players or ())
                out.append(ClipInfo(id=folder.name, game=game, players=players,
                                    has_observations=(folder / "observations.jsonl").is_file(),
                                    has_calibration=(folder / "calibration.json").is_file()))
        return out

    def calibration_names(self) -> list[str]:
        root = self.config.calibrations
        names = []
        for path in sorted(root.glob("*.json")) if root.is_dir() else []:
            try:
                load_calibration(path)
            except CalibrationError:
                continue  # board layouts live here too
            names.append(path.name)
        return names

    def video_of(self, source: SourceRef) -> tuple[str, str, Path | None]:
        """(what to open, label, observations file beside it or None)."""
        if source.kind == "camera":
            if not is_camera_index(source.id) or int(source.id) > 63:
                raise HTTPException(400, "a camera is given by its index (0, 1, ...)")
            return source.id, f"camera {source.id}", None
        if source.kind == "clip":
            folder = inside(self.config.samples, source.id)
            video = folder / "video.mp4"
            if not video.is_file():
                raise HTTPException(404, f"no sample clip {source.id!r}")
            beside = folder / "observations.jsonl"
            return str(video), f"sample clip {source.id}", beside if beside.is_file() else None
        path = inside(self.config.uploads, source.id)
        if not path.is_file():
            raise HTTPException(404, f"no uploaded video {source.id!r}")
        beside = path.with_suffix(".observations.jsonl")
        return str(path), f"video {source.id}", beside if beside.is_file() else None

    def served_settings(self, given: Mapping[str, SettingValue]) -> dict[str, SettingValue]:
        """The settings a page sent, blanks dropped. A Shove ``board`` layout is a file in
        the calibrations folder, by name: the page may not have the server read any path."""
        settings: dict[str, SettingValue] = {k: v for k, v in given.items()
                                             if v is not None and v != ""}
        board = settings.get("board")
        if isinstance(board, str) and board != "default":
            folder = self.config.calibrations.resolve()
            path = Path(board).resolve() if Path(board).is_absolute() \
                else inside(self.config.calibrations, board)
            if not path.is_relative_to(folder):  # (a recording keeps the path it resolved)
                raise HTTPException(404, "no such file")
            settings["board"] = str(path)
        return settings

    def recorded_buttons(self, source: SourceRef, session: Session) -> list[Observation]:
        """A sample clip's ``manual.jsonl``: the buttons pressed while it was filmed (what
        the camera cannot see), fed at their times as ``referee replay --observations``
        does; none for other sources or when the file cannot be read, and none pressed by
        a player not at this table (the players were renamed)."""
        from referee.pipeline.replay import read_manual

        if source.kind != "clip":
            return []
        path = inside(self.config.samples, source.id) / "manual.jsonl"
        try:
            declared = read_manual(path) if path.is_file() else []
        except (ValueError, OSError):
            return []
        return [d for d in declared if _at_table(session, d)]

    def calibration(self, name: str | None, source: SourceRef) -> Calibration | None:
        if not name:
            return None
        try:
            if name == "clip":
                if source.kind != "clip":
                    raise HTTPException(400, "only a sample clip has its own calibration")
                path = inside(self.config.samples, source.id) / "calibration.json"
                return load_calibration(path) if path.is_file() else None
            return load_calibration(inside(self.config.calibrations, name))
        except CalibrationError as error:
            raise HTTPException(400, str(error)) from None

    # live

    def start(self, request: StartRequest) -> LiveSession:
        if request.game not in GAMES:
            raise HTTPException(400, f"unknown game {request.game!r}")
        video, label, beside = self.video_of(request.source)
        calibration = self.calibration(request.calibration, request.source)
        settings = self.served_settings(request.settings)
        try:
            setup, observed = read_observations(beside) if beside else (None, ())
        except RecordedLogError as error:
            if request.mode != "vision":  # the camera pipeline does without them
                raise HTTPException(400, str(error)) from None
            setup, observed = None, ()
        same_game = setup is not None and (not setup.game or setup.game == request.game)
        if setup is not None and same_game:  # the clip's own settings, unless changed here
            settings = {**setup.settings, **settings}
        players = request.players or (list(setup.players) if setup and setup.players and
                                      same_game else None)
        try:
            session = Session.start(request.game, players, settings)
        except ValueError as error:
            raise HTTPException(400, str(error)) from None
        pipeline: FramePipeline
        if request.mode == "vision":
            if calibration is None:
                raise HTTPException(400, "the camera pipeline needs a calibration")
            try:
                pipeline = vision_factory()(request.game, session.players, settings,
                                            calibration)
            except ValueError as error:  # a calibration for another board or image size
                raise HTTPException(400, str(error)) from None
            for declared in self.recorded_buttons(request.source, session):
                pipeline.manual(declared)
            mode_label = "camera pipeline"
        else:
            if beside is None:
                raise HTTPException(400, f"{label} has no recorded observations beside it")
            if setup is not None and setup.game and setup.game != request.game:
                raise HTTPException(400, f"the recorded observations are for {setup.game}")
            pitch = calibration.board.pitch_mm if calibration and calibration.board else 30.0
            pipeline = RecordedObservationsPipeline(
                session, observed, calibration.plane if calibration else None, pitch)
            mode_label = LABEL
        config = LiveConfig(game=request.game, players=session.players,
                            settings=dict(settings), source=video, source_label=label,
                            mode=request.mode, mode_label=mode_label, calibration=calibration,
                            speed=request.speed, record=request.record)
        with self.lock:
            self.stop()
            live = LiveSession(config, self.hub, pipeline, self.config.recordings)
            try:
                live.start()
            except ValueError as error:
                raise HTTPException(400, str(error)) from None
            self.live = live
        return live

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    def need_live(self) -> LiveSession:
        if self.live is None:
            raise HTTPException(409, "no game is running")
        return self.live

    # disputes

    def dispute(self, rid: str) -> Dispute:
        if RECORDING_ID.match(rid):  # a recording's own id, as /api/recordings lists it
            rid = f"rec-{rid}"
        if rid in self.disputes:
            self.disputes.move_to_end(rid)
            return self.disputes[rid]
        try:
            if rid.startswith("clip-"):
                folder = inside(self.config.samples, rid.removeprefix("clip-"))
                video, observations = folder / "video.mp4", folder / "observations.jsonl"
                if not (video.is_file() and observations.is_file()):
                    raise HTTPException(404, "no such clip")
                calibration = folder / "calibration.json"
                dispute = open_clip(folder, rid, video, observations,
                                    calibration if calibration.is_file() else None)
            elif rid.startswith("rec-") and RECORDING_ID.match(rid.removeprefix("rec-")):
                folder = inside(self.config.recordings, rid.removeprefix("rec-"))
                if not folder.is_dir():
                    raise HTTPException(404, "no such recording")
                dispute = open_recording(folder)
                dispute.id = rid
            else:
                raise HTTPException(404, "no such recording")
        except (ReplayError, RecordedLogError) as error:
            raise HTTPException(400, str(error)) from None
        except ValueError as error:
            raise HTTPException(400, f"cannot replay: {error}") from None
        self.disputes[rid] = dispute
        while len(self.disputes) > 4:
            self.disputes.popitem(last=False)
        return dispute


def _settings_error(error: Exception) -> HTTPException:
    return HTTPException(400, str(error))


def create_app(config: ServerConfig) -> FastAPI:
    board = Dashboard(config)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        board.stop()

    app = FastAPI(title="Tabletop Referee dashboard", version="1", lifespan=lifespan,
                  description="Game setup, live rulings, recordings and dispute replay.")
    app.state.dashboard = board
    config.recordings.mkdir(parents=True, exist_ok=True)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        # FastAPI's own answer echoes the input, which cannot be JSON when it holds NaN or
        # Infinity (a 500 instead of a 422): say where and what, without the input.
        detail = [{"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")),
                   "type": str(e.get("type", ""))} for e in error.errors()]
        return JSONResponse(status_code=422, content={"detail": detail})

    if config.token:
        token = config.token

        @app.middleware("http")
        async def require_token(request: Request,
                                call_next: Callable[[Request], Awaitable[Response]]
                                ) -> Response:
            given = (request.query_params.get("token") or request.cookies.get("referee_token")
                     or request.headers.get("authorization", "").removeprefix("Bearer "))
            if not hmac.compare_digest(given.encode(), token.encode()):
                return JSONResponse({"detail": "a token is needed (printed by the server)"},
                                    status_code=401)
            response = await call_next(request)
            if request.query_params.get("token"):
                response.set_cookie("referee_token", token, httponly=True, samesite="strict")
            return response

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/api/games", response_model=list[GameInfo])
    def list_games() -> list[GameInfo]:
        return games()

    @app.get("/api/sources", response_model=Sources)
    def sources() -> Sources:
        uploads = sorted(p.name for p in config.uploads.glob("*")
                         if p.suffix.lower() in VIDEO_SUFFIXES) if config.uploads.is_dir() \
            else []
        return Sources(clips=board.clips(), uploads=uploads,
                       calibrations=board.calibration_names(),
                       recordings=[RecordingSummary(**{**r.__dict__, "players": list(r.players)})
                                   for r in list_recordings(config.recordings)],
                       vision_available=True)

    @app.post("/api/session", response_model=dict[str, Any])
    def start(request: StartRequest) -> dict[str, Any]:
        return board.start(request).snapshot()

    @app.get("/api/session", response_model=dict[str, Any])
    def state() -> dict[str, Any]:
        return board.need_live().snapshot()

    @app.delete("/api/session", response_model=Accepted)
    def stop() -> Accepted:
        with board.lock:
            board.stop()
        return Accepted(message="stopped")

    @app.post("/api/session/declare", response_model=Accepted)
    def declare(request: DeclareRequest) -> Accepted:
        live = board.need_live()
        if request.player is not None and request.player not in live.config.players:
            raise HTTPException(400, f"{request.player!r} is not playing")
        live.declare(request.player, request.what, request.value)
        return Accepted(message=f"{request.what} sent")

    @app.post("/api/session/correct", response_model=Accepted)
    def correct(request: CorrectRequest) -> Accepted:
        live = board.need_live()
        try:
            CardPlaced(type="card_placed", t=0, card=request.card.upper())
        except ValidationError:
            raise HTTPException(400, f"{request.card!r} is not a card code") from None
        if request.uid not in live.objects:
            raise HTTPException(404, f"no object {request.uid!r} on the table")
        live.correct(request.uid, request.card.upper())
        return Accepted(message="correction sent")

    @app.get("/api/live/frame.jpg", response_class=Response,
             responses={200: {"content": {"image/jpeg": {}}}})
    async def live_frame() -> Response:
        # On the event loop, not a worker thread: the image is cached and re-encoded at
        # most PREVIEW_FPS times a second, and thread hand-offs cost more than that.
        live = board.need_live()
        frame = live.frame_jpeg()
        if frame is None:
            raise HTTPException(404, "no frame yet")
        return Response(frame[1], media_type="image/jpeg",
                        headers={"Cache-Control": "no-store", "X-Frame-Index": str(frame[0])})

    @app.websocket("/api/live/ws")
    async def live_ws(socket: WebSocket, since: int = 0) -> None:
        if config.token:
            given = socket.query_params.get("token") or socket.cookies.get("referee_token")
            if not given or not hmac.compare_digest(given.encode(), config.token.encode()):
                await socket.close(code=4401)
                return
        await socket.accept()
        cursor = since
        try:
            if cursor <= 0 or cursor > board.hub.last_seq:
                cursor = await _send_snapshot(socket, board)
            while True:
                messages, lost = board.hub.since(cursor)
                if lost:
                    cursor = await _send_snapshot(socket, board)
                    continue
                for message in messages:
                    await socket.send_json(message.to_json())
                    cursor = message.seq
                if not messages:
                    await board.hub.wait_after(cursor, 10.0)
                    if board.hub.last_seq <= cursor:
                        await socket.send_json({"seq": cursor, "kind": "ping", "data": {}})
        except (WebSocketDisconnect, RuntimeError, ConnectionError):
            return

    @app.get("/api/recordings", response_model=list[RecordingSummary])
    def recordings() -> list[RecordingSummary]:
        return [RecordingSummary(**{**r.__dict__, "players": list(r.players)})
                for r in list_recordings(config.recordings)]

    @app.post("/api/recordings/{rid}/recover", response_model=Accepted)
    def recover_recording(rid: str) -> Accepted:
        if not RECORDING_ID.match(rid):
            raise HTTPException(404, "no such recording")
        folder = inside(config.recordings, rid)
        if not folder.is_dir():
            raise HTTPException(404, "no such recording")
        if board.live is not None and board.live.recording_id == rid:
            raise HTTPException(409, "that recording is still being written")
        count = recover(folder)
        return Accepted(message=f"recovered {count} one-second video segments")

    @app.get("/api/replay/{rid}", response_model=dict[str, Any])
    def replay(rid: str) -> dict[str, Any]:
        return board.dispute(rid).timeline()

    @app.get("/api/replay/{rid}/rulings/{n}", response_model=dict[str, Any])
    def ruling_detail(rid: str, n: int) -> dict[str, Any]:
        try:
            return board.dispute(rid).detail(n)
        except IndexError:
            raise HTTPException(404, f"no ruling {n}") from None

    @app.get("/api/replay/{rid}/frames/{index}", response_class=Response,
             responses={200: {"content": {"image/jpeg": {}}}})
    def replay_frame(rid: str, index: int) -> Response:
        dispute = board.dispute(rid)
        if not 0 <= index < max(dispute.frame_count, 1):
            raise HTTPException(404, f"no frame {index}")
        data = dispute.frame_jpeg(index)
        if data is None:
            raise HTTPException(404, f"frame {index} is not in the video")
        return Response(data, media_type="image/jpeg")

    @app.post("/api/replay/{rid}/readjudicate", response_model=ReadjudicateResult)
    def readjudicate(rid: str, request: ReadjudicateRequest) -> ReadjudicateResult:
        dispute = board.dispute(rid)
        settings = board.served_settings(request.settings)
        try:
            fresh, changes = dispute.readjudicate(settings)
        except ValueError as error:
            raise _settings_error(error) from None
        return ReadjudicateResult(
            settings={**dispute.settings, **settings},
            rulings=[{"i": r.index, **r.ruling.to_json()} for r in fresh],
            changes=[ChangeOut(i=c.index, t=c.t, before=c.before, after=c.after)
                     for c in changes])

    @app.get("/api/sources/{kind}/{sid}/frame.jpg", response_class=Response,
             responses={200: {"content": {"image/jpeg": {}}}})
    def source_frame(kind: str, sid: str) -> Response:
        """The first frame of a clip or uploaded video, to click calibration points on."""
        from referee.web.overlay import jpeg
        from referee.web.replay import FrameReader

        if kind not in ("clip", "upload"):
            raise HTTPException(404, "no such source")
        video, _, _ = board.video_of(SourceRef(kind=kind, id=sid))
        image = FrameReader([(0, Path(video))]).get(0)
        if image is None:
            raise HTTPException(400, "the video has no readable frame")
        return Response(jpeg(image), media_type="image/jpeg")

    @app.post("/api/calibrations/manual", response_model=Accepted)
    def manual_calibration(request: ManualCalibrationRequest) -> Accepted:
        from referee.calibration.manual import four_point_calibration

        if request.source.kind == "camera":
            raise HTTPException(400, "click the points on a clip or uploaded video")
        video, _, _ = board.video_of(request.source)
        from referee.web.replay import FrameReader

        image = FrameReader([(0, Path(video))]).get(0)
        if image is None:
            raise HTTPException(400, "the video has no readable frame")
        height, width = image.shape[:2]
        try:
            calibration = four_point_calibration(request.clicks, request.width_mm,
                                                 request.depth_mm, (width, height),
                                                 game=request.game, card_mm=request.card_mm)
        except CalibrationError as error:
            raise HTTPException(400, str(error)) from None
        except ValidationError as error:  # clicks that map nothing (all in one place...)
            message = str(error.errors()[0]["msg"]).removeprefix("Value error, ")
            raise HTTPException(400, f"these clicks give no usable calibration: {message}") \
                from None
        config.calibrations.mkdir(parents=True, exist_ok=True)
        path = inside(config.calibrations, f"{request.name}.json")
        save_calibration(calibration, path)
        return Accepted(message=f"saved {path.name} (about {calibration.error_mm:.1f} mm per "
                                "pixel of click error)")

    @app.post("/api/uploads", response_model=Uploaded)
    async def upload(request: Request, name: str = Query(max_length=80)) -> Uploaded:
        """Upload a video (raw request body) or its observations JSON lines."""
        suffixes = "".join(Path(name).suffixes).lower()
        if not (Path(name).suffix.lower() in VIDEO_SUFFIXES
                or suffixes.endswith(".observations.jsonl")):
            raise HTTPException(400, "upload a video (.mp4, .avi, .mkv, .mov, .webm) or "
                                     "NAME.observations.jsonl")
        limit = config.max_upload_bytes
        declared = request.headers.get("content-length")
        if declared and declared.isascii() and declared.isdigit() and int(declared) > limit:
            raise HTTPException(413, f"uploads are limited to {limit} bytes")
        if not SAFE_NAME.match(name):
            raise HTTPException(400, "name the file with letters, digits, '.', '-' and '_' "
                                     "only")
        config.uploads.mkdir(parents=True, exist_ok=True)
        path = inside(config.uploads, name)
        partial = path.with_name(path.name + ".part")
        size = 0
        try:
            with partial.open("wb") as handle:
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > limit:
                        raise HTTPException(413, f"uploads are limited to {limit} bytes")
                    await asyncio.to_thread(handle.write, chunk)
            partial.replace(path)
        finally:
            partial.unlink(missing_ok=True)
        return Uploaded(name=path.name, bytes=size)

    return app


async def _send_snapshot(socket: WebSocket, board: Dashboard) -> int:
    seq = board.hub.last_seq
    live = board.live
    data = live.snapshot() if live is not None else {"seq": seq, "session": None}
    await socket.send_json({"seq": seq, "kind": "snapshot", "data": data})
    return seq
