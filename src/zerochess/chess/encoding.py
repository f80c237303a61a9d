"""lc0's classic 112-plane network input (``INPUT_CLASSICAL_112_PLANE``)."""

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
