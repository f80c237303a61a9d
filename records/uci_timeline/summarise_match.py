"""W/D/L with 95% intervals, and nodes and time per move from the PGN comments, of a
`zerochess match` folder of zerochess against lc0 (finished or stopped part-way: only
the games in games.csv/games.pgn count).

    python records/uci_timeline/summarise_match.py DIR OUT.json
"""

from __future__ import annotations

import csv
import json
import re
import statistics
import sys
from pathlib import Path

import chess.pgn

from zerochess.games import match_result

PLAYERS = ("zerochess", "lc0")


def main(folder: str, out: str) -> None:
    d = Path(folder)
    with (d / "games.csv").open() as f:
        rows = list(csv.DictReader(f))
    res = match_result(rows, "zerochess")
    lo, hi = res.elo_interval()
    score_low, score_high = res.score_interval()
    print(f"games {res.games}: W {res.wins} / D {res.draws} / L {res.losses}, score "
          f"{res.score:.3f} [{score_low:.3f}, {score_high:.3f}], Elo "
          f"{res.elo:+.0f} [{lo:+.0f}, {hi:+.0f}], LOS {res.los:.3f}")
    nodes: dict[str, list[int]] = {p: [] for p in PLAYERS}
    emt: dict[str, list[float]] = {p: [] for p in PLAYERS}
    with (d / "games.pgn").open() as f:
        while (game := chess.pgn.read_game(f)) is not None:
            white, black = game.headers["White"], game.headers["Black"]
            for node in game.mainline():
                mover = white if node.parent.board().turn else black
                m = re.search(r"nodes=(\d+)", node.comment or "")
                if m:
                    nodes[mover].append(int(m.group(1)))
                e = node.emt()
                if e is not None:
                    emt[mover].append(e)
    summary = {"games": res.games, "wins": res.wins, "draws": res.draws,
               "losses": res.losses, "score": res.score, "score_low": score_low,
               "score_high": score_high, "elo": res.elo, "elo_low": lo, "elo_high": hi,
               "los": res.los}
    for p in PLAYERS:
        summary[f"{p}_median_nodes"] = statistics.median(nodes[p])
        summary[f"{p}_median_emt_s"] = statistics.median(emt[p])
        summary[f"{p}_nodes_per_s"] = sum(nodes[p]) / sum(emt[p])
        print(f"{p}: median nodes per move {summary[f'{p}_median_nodes']:g}, median "
              f"{summary[f'{p}_median_emt_s']:.3f} s per move, "
              f"{summary[f'{p}_nodes_per_s']:.0f} nodes/s")
    Path(out).write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
