"""Write ``puzzles.csv`` (this folder): a small, checked subset of the Lichess puzzle database.

Source: the Lichess puzzle database, https://database.lichess.org/#puzzles, released under
CC0 (public domain dedication). Run with the path of a Lichess puzzle CSV (the full
``lichess_db_puzzle.csv`` or a sample with the same columns)::

    python notebooks/data/make_puzzles.py lichess_db_puzzle.csv

Each Lichess row gives a FEN *before* the opponent's last move and ``Moves``: that move,
then the solution. The puzzle position here is the FEN after that first move; ``solution``
is the rest (our moves at even positions). Every row is checked with python-chess: the
moves are legal, and a ``mateInN`` line ends in checkmate. Rows are taken in file order
within each group, so the output depends only on the input file.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import chess

GROUPS = (  # (name, how many, test on the Lichess themes)
    ("mateIn1", 16, lambda t: "mateIn1" in t),
    ("mateIn2", 16, lambda t: "mateIn2" in t),
    ("tactic", 16, lambda t: "mate" not in t and "short" in t
     and ("crushing" in t or "advantage" in t)),
)


def checked(row: dict[str, str], group: str) -> dict[str, str] | None:
    board = chess.Board(row["FEN"])
    moves = row["Moves"].split()
    try:
        board.push_uci(moves[0])
        fen = board.fen()
        for uci in moves[1:]:
            board.push(board.parse_uci(uci))
    except ValueError:
        return None
    if group.startswith("mateIn") and not board.is_checkmate():
        return None
    return {"puzzle_id": row["PuzzleId"], "group": group, "fen": fen,
            "solution": " ".join(moves[1:]), "rating": row["Rating"],
            "themes": row["Themes"], "url": row["GameUrl"]}


def main(src: str) -> None:
    rows = list(csv.DictReader(open(src, newline="")))
    out = []
    for group, count, wanted in GROUPS:
        picked = []
        for row in rows:
            if len(picked) == count:
                break
            if wanted(set(row["Themes"].split())):
                item = checked(row, group)
                if item is not None:
                    picked.append(item)
        out += picked
    # interleave the groups, so that the first k rows (the notebooks' CI scale) mix them
    by_group = [[r for r in out if r["group"] == g] for g, _, _ in GROUPS]
    mixed = [r for trio in zip(*by_group, strict=False) for r in trio]
    path = Path(__file__).with_name("puzzles.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(mixed[0]))
        w.writeheader()
        w.writerows(mixed)
    print(f"wrote {len(mixed)} puzzles to {path}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python notebooks/data/make_puzzles.py LICHESS_PUZZLE_CSV")
    main(sys.argv[1])
