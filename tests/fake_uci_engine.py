"""A minimal UCI engine for clock tests (test-only): plays a legal move chosen by a hash of
the position (deterministic, rarely repeating) after thinking for a share of its clock or
a fixed time, and logs every ``go`` line.

    python fake_uci_engine.py [--share 0.05] [--fixed-ms 0] [--log FILE]
                              [--misbehave MODE [--at N]]

``--misbehave`` makes it break the protocol at its N-th ``go`` (``--at``, default 1), as
broken or hostile engines do: ``illegal`` (a bestmove that is not legal), ``none``
(``bestmove (none)`` with legal moves left), ``crash`` (exits without answering),
``hang-go`` (never answers that ``go``), ``garbage`` (a bestmove that is not a move);
``hang-uci`` never answers ``uci``, ``hang-isready`` never answers ``isready``.
"""

from __future__ import annotations

import argparse
import sys
import time
import zlib

import chess


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--share", type=float, default=0.0, help="think this share of the clock")
    ap.add_argument("--fixed-ms", type=float, default=0.0, help="think this long")
    ap.add_argument("--log", help="append the go lines here")
    ap.add_argument("--misbehave", default="", choices=["", "illegal", "none", "crash",
                                                        "hang-go", "garbage", "hang-uci",
                                                        "hang-isready"])
    ap.add_argument("--at", type=int, default=1, help="the go that misbehaves (1 = first)")
    args = ap.parse_args()
    board = chess.Board()
    gos = 0
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        cmd = words[0]
        if cmd == "uci":
            if args.misbehave == "hang-uci":
                continue
            print("id name fakeuci\nuciok", flush=True)
        elif cmd == "isready":
            if args.misbehave == "hang-isready":
                continue
            print("readyok", flush=True)
        elif cmd == "position":
            if words[1] == "startpos":
                board = chess.Board()
                rest = words[2:]
            else:
                fen_end = words.index("moves") if "moves" in words else len(words)
                board = chess.Board(" ".join(words[2:fen_end]))
                rest = words[fen_end:]
            for m in rest[1:] if rest and rest[0] == "moves" else []:
                board.push_uci(m)
        elif cmd == "go":
            if args.log:
                with open(args.log, "a") as f:
                    f.write(line.strip() + "\n")
            key = "wtime" if board.turn == chess.WHITE else "btime"
            clock = float(words[words.index(key) + 1]) if key in words else 0.0
            time.sleep((args.share * clock + args.fixed_ms) / 1000)
            moves = sorted(board.legal_moves, key=lambda m: m.uci())
            move = moves[zlib.crc32(board.fen().encode()) % len(moves)]
            gos += 1
            mode = args.misbehave if gos == args.at else ""
            if mode == "crash":
                return 3
            if mode == "hang-go":
                continue
            text = {"illegal": _illegal(board), "none": "(none)", "garbage": "xyzzy"}.get(
                mode, move.uci())
            print(f"info depth 1 nodes 1 score cp 0\nbestmove {text}", flush=True)
        elif cmd == "quit":
            break
    return 0


def _illegal(board: chess.Board) -> str:
    """A move in UCI syntax that is not legal in ``board``."""
    for move in ("e2e5", "a1a8", "h8h1", "e7e4"):
        if chess.Move.from_uci(move) not in board.legal_moves:
            return move
    return "a1a1"


if __name__ == "__main__":
    sys.exit(main())
