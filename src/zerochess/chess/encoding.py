"""lc0's classic 112-plane network input (``INPUT_CLASSICAL_112_PLANE``).

Layout (plane p, row = rank, col = file, everything in the frame of the side to
move now: ranks mirrored ``sq ^ 56`` and colours swapped when black is to move):

- 8 history slots x 13 planes: slot i shows the position i plies ago: ours
  P N B R Q K, theirs P N B R Q K, then "this position occurred before" (all ones).
- 104..111: us O-O-O, us O-O, them O-O-O, them O-O, all ones if black is to
  move, the rule50 ply count (raw), zeros, ones. In chess960, O-O is castling with
  the rook on the king's h-side and O-O-O with the a-side rook (lc0's ``we_can_00``
  etc.); the classic input does not show the rooks' files.

The history slots of a python-chess game (lc0's fill before the game start, lc0's
repetition flags) come from ``zerochess.chess.history``.

``planes_from_arrays`` works with numpy on the host and jax.numpy on the device
(it is jittable: no Python branching on values); ``encode_board`` is the host
python-chess entry point.
"""

from __future__ import annotations

import chess
import numpy as np

from zerochess.chess.history import history_arrays
from zerochess.chess.planes import (  # noqa: F401 - re-exported (the old import path)
    AUX_BASE,
    NUM_PLANES,
    PLANES_PER_POSITION,
    planes_from_arrays,
)
from zerochess.chess.state import castling_bits


def encode_board(board: chess.Board) -> np.ndarray:
    """float32 ``[112, 8, 8]`` lc0 input planes of ``board`` (history from its ``move_stack``)."""
    boards, repeated = history_arrays(board)
    return planes_from_arrays(
        np, boards, repeated, np.int8(board.turn), np.int32(castling_bits(board)),
        np.int32(board.halfmove_clock),
    )


__all__ = ["AUX_BASE", "NUM_PLANES", "PLANES_PER_POSITION", "encode_board",
           "planes_from_arrays"]
