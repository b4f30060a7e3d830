"""The ``referee`` command line. Errors are one line on stderr and exit status 2."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import NoReturn, TextIO

import click

from referee.adjudication import InputLineError, adjudicate_lines
from referee.rules.registry import GAMES, UnknownGameError, rules_for

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


def main(argv: Sequence[str] | None = None) -> None:
    try:
        cli.main(args=argv, prog_name="referee", standalone_mode=True)
    except UnknownGameError as error:
        fail(str(error))
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(1)
    except Exception as error:  # one line, never a traceback; REFEREE_DEBUG=1 shows it
        if os.environ.get("REFEREE_DEBUG"):
            raise
        click.echo(f"referee: internal error: {type(error).__name__}: {error}", err=True)
        sys.exit(1)
