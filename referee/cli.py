"""The ``referee`` command line. Errors are one line on stderr and exit status 2."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn, TextIO

import click

from referee.adjudication import InputLineError, adjudicate_lines
from referee.detection.onnx_model import (
    DETECTOR_RUNTIMES,
    RUNTIME_ENV,
    ModelMissingError,
    RuntimeUnavailableError,
)
from referee.rules.registry import GAMES, UnknownGameError, rules_for

if TYPE_CHECKING:
    from referee.tracking.cards import CardReader

EXIT_BAD_INPUT = 2


def fail(message: str) -> NoReturn:
    click.echo(f"referee: error: {message}", err=True)
    sys.exit(EXIT_BAD_INPUT)


def parse_settings(pairs: Sequence[str]) -> dict[str, str]:
    settings: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            fail(f"--set expects name=value, got {pair!r}")
        settings[name.strip()] = value.strip()
    return settings


def parse_players(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [name.strip() for name in text.split(",")]
    if any(not name for name in names):
        fail(f"--players expects comma-separated names, got {text!r}")
    return names


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tabletop-referee")
def cli() -> None:
    """Tabletop Referee: a camera referee for physical tabletop games."""


@cli.command()
@click.option("--game", type=click.Choice(GAMES), help="Which game (or give a setup line).")
@click.option("--players", help="Player names in seating order, comma-separated.")
@click.option("--set", "set_", multiple=True, metavar="NAME=VALUE", help="A game setting.")
@click.argument("source", type=click.File("r", encoding="utf-8", errors="replace"))
def adjudicate(game: str | None, players: str | None, set_: tuple[str, ...],
               source: TextIO) -> None:
    """Read observation JSON lines from SOURCE (a file or -) and print rulings."""
    rulings = adjudicate_lines(
        source, game=game, players=parse_players(players), settings=parse_settings(set_)
    )
    try:
        for ruling in rulings:
            click.echo(json.dumps(ruling.to_json()))
            sys.stdout.flush()
    except InputLineError as error:
        fail(str(error))


@cli.command()
@click.argument("game", required=False, type=click.Choice(GAMES))
def settings(game: str | None) -> None:
    """List each game's settings with their defaults (as JSON lines)."""
    for name in [game] if game else GAMES:
        rules = rules_for(name)
        fields = {
            key: info.default for key, info in rules.settings_type.model_fields.items()
        }
        click.echo(json.dumps({"game": name, "title": rules.title,
                               "players": list(rules.player_counts), "settings": fields}))


@cli.command()
@click.option("--paper", type=click.Choice(["a4", "letter"]), default="a4", show_default=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=".",
              show_default=True, help="Folder for the PDF and PNG files.")
@click.option("--sheets", type=click.IntRange(1, 14), default=4, show_default=True,
              help="How many sheets (each has its own markers).")
@click.option("--dpi", type=click.IntRange(150, 1200), default=300, show_default=True)
def markers(paper: str, out_dir: str, sheets: int, dpi: int) -> None:
    """Write the printable marker sheets (one PDF, one PNG per sheet) at true scale."""
    from pathlib import Path

    from referee.calibration.errors import CalibrationError
    from referee.calibration.printing import write_marker_sheets

    try:
        written = write_marker_sheets(Path(out_dir), paper, sheets, dpi)  # type: ignore[arg-type]
    except CalibrationError as error:
        fail(str(error))
    click.echo(f"wrote {', '.join(str(p) for p in written)} (print at 100%: chequer squares "
               "32.0 mm, ruler 100 mm)")


@cli.command()
@click.argument("source")
@click.option("--out", "out_file", required=True, type=click.Path(dir_okay=False),
              help="The calibration JSON to write.")
@click.option("--game", type=click.Choice(GAMES), help="Locate this game's board layout.")
@click.option("--layout", "layout_file", type=click.Path(dir_okay=False),
              help="A board layout JSON instead of the game's default (calibration/).")
@click.option("--preview", "preview_file", type=click.Path(dir_okay=False),
              help="Where to write the preview PNG (default: beside --out).")
@click.option("--lens", "lens_file", type=click.Path(dir_okay=False),
              help="Keep the lens of this earlier calibration.")
@click.option("--plane", "plane_file", type=click.Path(dir_okay=False),
              help="An earlier table calibration to use when no markers are in view.")
@click.option("--max-error", type=click.FloatRange(min=0.0, min_open=True), default=1.0,
              show_default=True, help="Refuse a fit worse than this (mm RMS).")
@click.option("--board-offset", metavar="DX,DY,DEG",
              help="Correct the located board: move it DX, DY mm and turn it DEG degrees.")
@click.option("--frames", type=click.IntRange(1, 1000), default=30, show_default=True,
              help="Frames to try from a video or camera (the best is kept).")
@click.option("--card-size", metavar="WxL",
              help="The cards' width and length in mm (default: the --plane calibration's, "
                   "else 63x88; a bridge deck: 57x89).")
def calibrate(source: str, out_file: str, game: str | None, layout_file: str | None,
              preview_file: str | None, lens_file: str | None, plane_file: str | None,
              max_error: float, board_offset: str | None, frames: int,
              card_size: str | None) -> None:
    """Calibrate the table (and the game's board) from SOURCE: an image, a video or a camera
    index. Writes the calibration JSON and a top-down preview PNG, prints a summary."""
    from pathlib import Path

    from referee.calibration.errors import CalibrationError
    from referee.calibration.runner import run_calibration
    from referee.cards import card_size as parse_card_size

    correction = (0.0, 0.0, 0.0)
    if board_offset is not None:
        try:
            dx, dy, deg = (float(v) for v in board_offset.split(","))
        except ValueError:
            fail(f"--board-offset expects DX,DY,DEG, got {board_offset!r}")
        correction = (dx, dy, deg)
    card_mm = None
    if card_size is not None:
        try:
            card_mm = parse_card_size(card_size)
        except ValueError as error:
            fail(f"--card-size: {error}")
    out = Path(out_file)
    preview = Path(preview_file) if preview_file else out.with_suffix(".preview.png")
    try:
        summary = run_calibration(source, out, preview, game=game, layout_file=layout_file,
                                  lens_file=lens_file, plane_file=plane_file,
                                  max_error_mm=max_error, board_correction=correction,
                                  max_frames=frames, card_mm=card_mm)
    except CalibrationError as error:
        fail(str(error))
    click.echo(summary)


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind; anything but loopback needs the printed token.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--recordings", "recordings_dir", type=click.Path(file_okay=False),
              default="recordings", show_default=True, help="Where sessions are recorded.")
@click.option("--calibrations", "calibrations_dir", type=click.Path(file_okay=False),
              default="calibration", show_default=True, help="Calibration files folder.")
@click.option("--samples", "samples_dir", type=click.Path(file_okay=False),
              help="Sample clips folder (default: the bundled sample_footage).")
@click.option("--max-upload-mb", type=click.IntRange(1, 10_000), default=200, show_default=True)
def serve(host: str, port: int, recordings_dir: str, calibrations_dir: str,
          samples_dir: str | None, max_upload_mb: int) -> None:
    """Start the dashboard (live table, announcements, recording, dispute replay)."""
    import ipaddress
    import secrets
    import socket
    from pathlib import Path

    import uvicorn

    from referee.web.app import ServerConfig, create_app
    from referee.web.recording import list_recordings

    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        fail(f"--host expects an IP address or localhost, got {host!r}")
    token = None if loopback else secrets.token_urlsafe(24)
    samples = Path(samples_dir) if samples_dir else \
        Path(__file__).resolve().parents[1] / "sample_footage"
    if not samples.is_dir():
        samples = Path("sample_footage")
    config = ServerConfig(recordings=Path(recordings_dir), calibrations=Path(calibrations_dir),
                          samples=samples, token=token,
                          max_upload_bytes=max_upload_mb * 1_000_000)
    if port:  # a port in use is one line here, not uvicorn's log after "open http://..."
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as error:
                fail(f"cannot listen on {host}:{port}: {error.strerror}")
    try:
        app = create_app(config)
    except OSError as error:
        fail(f"cannot use {recordings_dir}: {error.strerror}")
    unclosed = [r.id for r in list_recordings(config.recordings) if not r.closed]
    if unclosed:
        click.echo(f"recoverable recordings (the server stopped without closing them): "
                   f"{', '.join(unclosed)}; open them under Replay")
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    if token:
        click.echo(f"binding {host}: every request needs the token {token}")
        click.echo(f"open http://{shown}:{port}/?token={token}")
    else:
        click.echo(f"open http://{shown}:{port}/")
    uvicorn.run(app, host=host, port=port, log_level="warning")


@cli.command()
@click.argument("video", type=click.Path(dir_okay=False))
@click.option("--game", required=True, type=click.Choice(GAMES), help="Which game.")
@click.option("--players", help="Player names in seating order, comma-separated.")
@click.option("--set", "set_", multiple=True, metavar="NAME=VALUE", help="A game setting.")
@click.option("--calibration", "calibration_file", type=click.Path(dir_okay=False),
              help="The calibration JSON (default: calibration.json beside the video).")
@click.option("--observations", "observations_file", type=click.Path(),
              help="Manual inputs to merge by time: a file of declare lines, or a "
                   "dashboard recording (its folder or log.jsonl).")
@click.option("--json", "as_json", is_flag=True, help="JSON lines only (no progress bar).")
def replay(video: str, game: str, players: str | None, set_: tuple[str, ...],
           calibration_file: str | None, observations_file: str | None,
           as_json: bool) -> None:
    """Run the whole pipeline on recorded footage: print observations and rulings in time
    order."""
    from pathlib import Path

    from referee.calibration.errors import CalibrationError
    from referee.calibration.model import load_calibration
    from referee.observations import ObservationError
    from referee.pipeline.replay import VideoError, probe_video, read_manual
    from referee.pipeline.runner import CalibrationMismatch, RefereePipeline, check_calibration
    from referee.rules.base import PlayersError, SettingsError

    path = Path(video)
    cal_path = Path(calibration_file) if calibration_file else path.parent / "calibration.json"
    if not path.is_file():
        fail(f"no such video: {path}")
    if not cal_path.is_file():
        fail(f"no calibration for {path} (give --calibration FILE; make one with "
             "`referee calibrate`)" if calibration_file is None
             else f"cannot read calibration {cal_path}: no such file")
    try:
        info = probe_video(path)
        calibration = load_calibration(cal_path)
        check_calibration(game, calibration, info.size)
        manual = read_manual(Path(observations_file)) if observations_file else []
        pipeline = RefereePipeline(game, calibration, players=parse_players(players),
                                   settings=parse_settings(set_), reader=_card_reader(game))
    except (VideoError, CalibrationError, CalibrationMismatch, ObservationError,
            SettingsError, PlayersError) as error:
        fail(str(error))
    except OSError as error:
        fail(f"cannot read {error.filename}: {error.strerror}")
    # A manual input naming someone not at the table would stop the replay where it comes:
    # say so before the video is read.
    seated = list(pipeline.session.players)
    strangers = sorted({str(p) for o in manual if (p := getattr(o, "player", None))} - set(seated))
    if strangers:
        fail(f"{observations_file}: player {strangers[0]!r} is not at the table (players: "
             f"{', '.join(seated)}; name them with --players)")
    _print_replay(path, info, pipeline, manual, as_json)


def _card_reader(game: str) -> CardReader:
    from referee.tracking.identity import reader_for

    reader, warning = reader_for(game)
    if warning:
        click.echo(f"referee: warning: {warning}", err=True)
    return reader


def _print_replay(path: object, info: object, pipeline: object, manual: object,
                  as_json: bool) -> None:
    from referee.adjudication import InputLineError
    from referee.observations import ObservationError, dump_observation
    from referee.pipeline.events import ObservationEvent, RulingEvent, StatusEvent
    from referee.pipeline.replay import replay as run_replay
    from referee.rules.base import ObservationInputError

    frames = getattr(info, "frames", 0)
    bar = None
    if not as_json and frames:
        bar = click.progressbar(length=frames, label="replaying", file=sys.stderr)
        bar.render_progress()

    def advance(index: int) -> None:
        if bar is not None and index % 5 == 0:
            bar.update(min(5, frames - bar.pos))

    try:
        for event in run_replay(path, info, pipeline, manual, advance):  # type: ignore[arg-type]
            if isinstance(event, ObservationEvent):
                data = dump_observation(event.observation)
                line = json.dumps(data) if as_json else _describe_observation(data)
            elif isinstance(event, RulingEvent):
                ruling = event.ruling.to_json()
                line = json.dumps(ruling) if as_json else \
                    f"{ruling['t']:7.2f}  {ruling['kind']}: {ruling['message']}"
            elif isinstance(event, StatusEvent) and event.level != "info":
                click.echo(f"referee: {event.level}: {event.message}", err=True)
                continue
            else:
                continue
            if bar is not None:
                sys.stderr.write("\r\033[K")
            click.echo(line)
            sys.stdout.flush()
    except (InputLineError, ObservationError, ObservationInputError) as error:
        fail(str(error))
    finally:
        if bar is not None:
            bar.finish()
            bar.render_finish()


def _describe_observation(data: dict[str, object]) -> str:
    t = float(data["t"])  # type: ignore[arg-type]
    kind = str(data["type"])
    details = {k: v for k, v in data.items() if k not in ("t", "type", "corners")}
    text = " ".join(f"{k}={v}" for k, v in details.items())
    return f"{t:7.2f}  seen {kind} {text}"


@cli.command()
@click.argument("image", type=click.Path(dir_okay=False))
@click.option("--calibration", "calibration_file", type=click.Path(dir_okay=False),
              help="The table's calibration: each card is held to its size on the "
                   "table (a card under another outlined whole from the end it shows) "
                   "and its corners are given on the table (mm) too.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (the contract's shape).")
@click.option("--annotate", "annotate_file", type=click.Path(dir_okay=False),
              help="Write a copy of the image with outlines and labels.")
@click.option("--runtime", type=click.Choice(DETECTOR_RUNTIMES, case_sensitive=False),
              default="auto",
              envvar=RUNTIME_ENV, show_default=True, show_envvar=True,
              help="What runs the card detector: auto is OpenVINO where it is installed "
                   "and the CPU computes bfloat16 (faster), onnxruntime elsewhere.")
def detect(image: str, calibration_file: str | None, as_json: bool,
           annotate_file: str | None, runtime: str) -> None:
    """The cards seen in one IMAGE: outline corners (pixels), identity and confidence."""
    from pathlib import Path

    import cv2
    import numpy as np

    from referee.calibration.errors import CalibrationError
    from referee.calibration.model import load_calibration
    from referee.detection.detect import (
        DetectError,
        annotate,
        load_corner_model,
        load_detector,
        load_identifier,
        load_verifier,
        read_image,
    )
    from referee.detection.detect import detect as run_detect

    if annotate_file and not cv2.haveImageWriter(annotate_file):
        fail(f"cannot write {annotate_file}: name it .png or .jpg")
    try:
        picture = read_image(Path(image))
        calibration = load_calibration(Path(calibration_file)) if calibration_file else None
    except (DetectError, CalibrationError) as error:
        fail(str(error))
    size = (picture.shape[1], picture.shape[0])
    if calibration is not None and tuple(calibration.image_size) != size:
        width, height = calibration.image_size
        fail(f"the calibration is for {width}x{height} images, {image} is {size[0]}x{size[1]}")
    identifier, warning = load_identifier()
    if warning:
        click.echo(f"referee: warning: {warning}; cards are reported as ??", err=True)
    detector, missing = load_detector(runtime)  # (a runtime that cannot run: main says so)
    if missing:
        click.echo(f"referee: warning: {missing}; outlines come from the shape finder only",
                   err=True)
    verifier, unverified = load_verifier() if identifier is not None else (None, None)
    if unverified:
        click.echo(f"referee: warning: {unverified}; card-shaped things may be reported as "
                   "cards", err=True)
    corner_model, no_corners = load_corner_model() \
        if detector is not None and identifier is not None else (None, None)
    if no_corners:
        click.echo(f"referee: warning: {no_corners}; outlines are as tightened on the "
                   "picture's edges", err=True)
    found = run_detect(picture, identifier, detector, verifier=verifier,
                       corner_model=corner_model,
                       plane=calibration.plane if calibration is not None else None,
                       card_mm=calibration.card_mm if calibration is not None else None)
    if detector is not None and detector.fallback_reason:
        click.echo(f"referee: warning: {detector.fallback_reason}; onnxruntime ran the card "
                   "detector instead", err=True)
    result = found.to_json()
    if calibration is not None:
        from referee.detection.pieces import coins_in, tokens_in

        plane = calibration.plane
        for card, data in zip(found.cards, result["cards"], strict=True):
            data["corners_mm"] = plane.to_table(np.asarray(card.corners)).round(1).tolist()
        # Coins and tokens are found on the calibrated board (a piecepack or grid board).
        result["coins"] = coins_in(picture, calibration)
        result["tokens"] = tokens_in(picture, calibration)
    if annotate_file:
        try:
            written = cv2.imwrite(annotate_file, annotate(picture, found))
        except cv2.error:
            written = False
        if not written:
            fail(f"cannot write {annotate_file}")
    if as_json:
        click.echo(json.dumps(result))
    else:
        for data in result["cards"]:
            click.echo(f"{data['card']:>4}  {data['confidence']:.2f}  corners {data['corners']}")
        for coin in result["coins"]:
            click.echo(f"coin  centre {coin['center']} mm")
        for token in result["tokens"]:
            click.echo(f"{token['colour']} token  square {token['square']}")
        counts = [f"{len(result['cards'])} card(s)"]
        if calibration is not None:
            counts += [f"{len(result['coins'])} coin(s)", f"{len(result['tokens'])} token(s)"]
        click.echo(", ".join(counts))


def main(argv: Sequence[str] | None = None) -> None:
    # Every command reports bad input in one line of its own; FFmpeg's and OpenCV's own
    # complaints ("moov atom not found") would be a second, cryptic one.
    os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")
    os.environ.setdefault("OPENCV_LOG_LEVEL", "OFF")
    try:
        # Not standalone, so click's usage errors reach us as exceptions; it then returns
        # the exit code of --help/--version (None after a command) instead of exiting.
        code = cli.main(args=argv, prog_name="referee", standalone_mode=False)
    except click.UsageError as error:  # click's own is four lines; ours is one
        where = f"referee {error.ctx.info_name}" if error.ctx and error.ctx.parent else "referee"
        fail(f"{error.format_message()} (see '{where} --help')")
    except click.ClickException as error:
        fail(error.format_message())
    except click.exceptions.Abort:
        sys.exit(1)
    except UnknownGameError as error:
        fail(str(error))
    except RuntimeUnavailableError as error:  # what runs the card detector cannot, here
        fail(str(error))
    except ModelMissingError as error:  # a model file damaged after the install
        fail(f"{error}: restore the models folder (git checkout -- models)")
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(1)
    except Exception as error:  # one line, never a traceback; REFEREE_DEBUG=1 shows it
        if os.environ.get("REFEREE_DEBUG"):
            raise
        click.echo(f"referee: internal error: {type(error).__name__}: {error}", err=True)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
