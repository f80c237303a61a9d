"""Position keys: a 64-bit Zobrist-style hash as uint32 pairs, identical in numpy and
jax.numpy (numpy only at import: no python-chess, no jax)."""

from __future__ import annotations

from typing import Any

import numpy as np

from zerochess.chess.types import CASTLE_RIGHTS, EMPTY, NUM_PIECE_CODES


def _zobrist_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0x5EC7C0DE)
    pieces = rng.integers(0, 2**32, size=(64, NUM_PIECE_CODES, 2), dtype=np.uint32)
    pieces[:, EMPTY] = 0
    turn = rng.integers(0, 2**32, size=(2, 2), dtype=np.uint32)
    turn[0] = 0
    castling = rng.integers(0, 2**32, size=(16, 2), dtype=np.uint32)
    castling[0] = 0
    ep = rng.integers(0, 2**32, size=(65, 2), dtype=np.uint32)
    ep[64] = 0  # index 64 == no en passant (ep = -1)
    return pieces, turn, castling, ep


ZOBRIST_PIECES, ZOBRIST_TURN, ZOBRIST_CASTLING, ZOBRIST_EP = _zobrist_tables()
# the castling rooks' files (bits 4-15 of the castling field); 0 (standard rooks) hashes to 0
ZOBRIST_ROOK_FILES = np.random.default_rng(0x960).integers(0, 2**32, size=(4096, 2),
                                                           dtype=np.uint32)
ZOBRIST_ROOK_FILES[0] = 0


def position_hash(xp: Any, board: Any, turn: Any, castling: Any, ep: Any) -> Any:
    """64-bit position key as uint32 [..., 2]; works with ``xp`` = numpy or jax.numpy.

    Args:
      xp: ``numpy`` or ``jax.numpy``.
      board: int8 [..., 64] piece codes; turn int [...] (1 white); castling int [...];
        ep int [...] (-1: none).

    Returns:
      uint32 [..., 2].
    """
    squares = xp.arange(64)
    words = xp.asarray(ZOBRIST_PIECES)[squares, board.astype(xp.int32)]  # [..., 64, 2]
    while words.shape[-2] > 1:  # xor-fold the squares: 64 -> 32 -> ... -> 1
        half = words.shape[-2] // 2
        words = words[..., :half, :] ^ words[..., half:, :]
    acc = words[..., 0, :]
    acc = acc ^ xp.asarray(ZOBRIST_TURN)[turn.astype(xp.int32)]
    castling = castling.astype(xp.int32)
    acc = acc ^ xp.asarray(ZOBRIST_CASTLING)[castling & CASTLE_RIGHTS]
    acc = acc ^ xp.asarray(ZOBRIST_ROOK_FILES)[(castling >> 4) & 0xFFF]
    ep_i = xp.where(ep < 0, 64, ep).astype(xp.int32)
    return acc ^ xp.asarray(ZOBRIST_EP)[ep_i]


__all__ = ["ZOBRIST_CASTLING", "ZOBRIST_EP", "ZOBRIST_PIECES", "ZOBRIST_ROOK_FILES",
           "ZOBRIST_TURN", "position_hash"]
