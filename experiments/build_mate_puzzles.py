"""Build the mate-puzzle set of ``zerochess bench --puzzles`` from Lichess puzzle data.

Source: the Lichess puzzle database (https://database.lichess.org/#puzzles), released
under Creative Commons CC0 (public domain). Input: a CSV with its columns
``PuzzleId,FEN,Moves,...,Themes,...``; the puzzle position is ``FEN`` after the first of
``Moves``, the rest is the solution. Every kept puzzle is checked with python-chess:
mate in 1: the solution's move mates; mate in 2: the solution line ends in mate, the
position has no mate in 1, and brute force finds a forced mate in 2.

    python experiments/build_mate_puzzles.py lichess_puzzles.csv \\
        src/zerochess/bench/data/mate_puzzles.csv --per-theme 200
"""

from __future__ import annotations

import argparse
import csv
import sys

import chess

from zerochess.bench.puzzles import forces_mate

HEADER = ("# Mate puzzles from the Lichess puzzle database (https://database.lichess.org/"
          "#puzzles), CC0 (public domain).\n# Built by experiments/build_mate_puzzles.py; "
          "fen = the puzzle position (after the opponent's first move).\n")


def check(theme: str, board: chess.Board, solution: list[str]) -> bool:
    line = board.copy()
    for uci in solution:
        move = chess.Move.from_uci(uci)
        if move not in line.legal_moves:
            return False
        line.push(move)
    if not line.is_checkmate():
        return False
    if theme == "mateIn1":
        return len(solution) == 1
    return (len(solution) == 3 and not forces_mate(board.copy(), 1)
            and forces_mate(board.copy(), 2))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", help="Lichess puzzle CSV")
    parser.add_argument("out", help="the set to write (CSV)")
    parser.add_argument("--per-theme", type=int, default=200)
    args = parser.parse_args(argv)
    kept: dict[str, list[tuple[str, str, str]]] = {"mateIn1": [], "mateIn2": []}
    with open(args.source, newline="") as f:
        for row in csv.DictReader(f):
            themes = row["Themes"].split()
            for theme, rows in kept.items():
                if theme not in themes or len(rows) >= args.per_theme:
                    continue
                moves = row["Moves"].split()
                board = chess.Board(row["FEN"])
                board.push_uci(moves[0])
                if check(theme, board, moves[1:]):
                    rows.append((row["PuzzleId"], board.fen(), " ".join(moves[1:])))
                else:
                    print(f"skipped {row['PuzzleId']}: solution does not check", file=sys.stderr)
    with open(args.out, "w", newline="") as f:
        f.write(HEADER)
        writer = csv.writer(f)
        writer.writerow(["id", "theme", "fen", "solution"])
        for theme, rows in kept.items():
            for pid, fen, solution in rows:
                writer.writerow([pid, theme, fen, solution])
    print({theme: len(rows) for theme, rows in kept.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
