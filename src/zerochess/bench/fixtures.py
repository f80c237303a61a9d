"""The benchmarks' shared positions: seeded middlegames from random games, cycled to a batch."""

from __future__ import annotations

import random
from collections.abc import Sequence

import chess

__all__ = ["NUM_POSITIONS", "bench_positions", "fill"]

NUM_POSITIONS = 32


def bench_positions(count: int = NUM_POSITIONS, seed: int = 0, min_plies: int = 20,
                    max_plies: int = 50) -> list[chess.Board]:
    """``count`` varied middlegame positions from seeded random games (with move stacks).

    Each game plays ``min_plies..max_plies`` uniformly random legal moves from the
    start; a position is kept if the game is not over, the side to move has at
    least 10 legal moves and both sides still have a piece besides king and pawns.
    """
    rng = random.Random(seed)
    boards: list[chess.Board] = []
    while len(boards) < count:
        board = chess.Board()
        for _ in range(rng.randint(min_plies, max_plies)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        pieces_ok = all(
            any(board.pieces_mask(pt, color) for pt in (chess.KNIGHT, chess.BISHOP,
                                                         chess.ROOK, chess.QUEEN))
            for color in chess.COLORS)
        if not board.is_game_over(claim_draw=False) and board.legal_moves.count() >= 10 \
                and pieces_ok:
            boards.append(board)
    return boards


def fill(boards: Sequence[chess.Board], batch: int) -> list[chess.Board]:
    """``boards`` cycled to ``batch`` rows."""
    return [boards[i % len(boards)] for i in range(batch)]
