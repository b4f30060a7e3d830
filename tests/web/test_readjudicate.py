"""Re-adjudicating a log (a recording, after a correction) rules it as `referee adjudicate`
rules the same lines."""

from __future__ import annotations

import json

from referee.adjudication import adjudicate_lines
from referee.observations import parse_line
from referee.web.adjudicate import Entry, readjudicate
from tests.rules.test_shove_piecepack import PLAYERS, TILE, R, bed_centre, coin


def test_a_log_listing_a_knocked_coin_before_its_shove_is_ruled_as_the_command_rules_it(
        ) -> None:
    lines = [json.dumps(line) for line in (
        {**coin("s", TILE - R - 5), "t": 1.0}, {**coin("s", bed_centre(2)), "t": 2.0},
        {**coin("b", 60.0), "t": 2.0},
        *({**coin(f"c{i}", 60.0), "t": 2.0 + i} for i in range(1, 5)))]
    entries = [Entry(index, parse_line(line)) for index, line in enumerate(lines)]  # type: ignore[arg-type]
    again = [r.ruling.to_json() for r in readjudicate("shove-piecepack", PLAYERS, {}, entries)]
    command = [r.to_json() for r in adjudicate_lines(lines, game="shove-piecepack",
                                                      players=PLAYERS, settings={})]
    assert again == command
    assert [r["coin"] for r in again if r["kind"] == "legal"] == ["b", "c1", "c2", "c3", "c4"]
    # The knocked coin's rulings are filed at its own line; the shove's at its own.
    at = {r.ruling.coin: r.index for r in readjudicate("shove-piecepack", PLAYERS, {}, entries)
          if r.ruling.kind == "legal"}
    assert at["b"] == 2
