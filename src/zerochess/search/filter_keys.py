"""The device side of move filters (``zerochess.search.move_filter``): which edges a
filter names and excludes (numpy or jax.numpy; no python-chess, so the search core can
use it)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from zerochess.chess.device.tables import FROM_SQUARE, PROMOTION, TO_SQUARE
from zerochess.chess.types import KING, NUM_MOVES, PAWN, ROOK


def _variant_tables() -> tuple[np.ndarray, np.ndarray, int]:
    """Keys of the two ambiguous kinds of lc0 index: a plain 7th-to-8th-rank step (a
    knight promotion when a pawn makes it) and a 1st-rank move along the rank (castling
    when the king moves onto its own rook). -1 where an index has no such variant."""
    knight = np.full(NUM_MOVES, -1, np.int32)
    castle = np.full(NUM_MOVES, -1, np.int32)
    key = NUM_MOVES
    frm, to = FROM_SQUARE.astype(int), TO_SQUARE.astype(int)
    for i in range(NUM_MOVES):
        if (PROMOTION[i] == 0 and frm[i] // 8 == 6 and to[i] // 8 == 7
                and abs(frm[i] % 8 - to[i] % 8) <= 1):
            knight[i] = key
            key += 1
    for i in range(NUM_MOVES):
        if PROMOTION[i] == 0 and frm[i] // 8 == 0 and to[i] // 8 == 0:
            castle[i] = key
            key += 1
    return knight, castle, key


KNIGHT_KEY, CASTLE_KEY, NUM_KEYS = _variant_tables()
_FROM = FROM_SQUARE.astype(np.int32)
_TO = TO_SQUARE.astype(np.int32)


KNIGHT_KEY, CASTLE_KEY, NUM_KEYS = _variant_tables()
_FROM = FROM_SQUARE.astype(np.int32)
_TO = TO_SQUARE.astype(np.int32)


def edge_keys(xp: Any, board: Any, turn: Any, moves: Any) -> Any:
    """Keys of a node's edges (numpy or jax.numpy, one node).

    Args:
      board: int8 [64] piece codes (``zerochess.chess.state``).
      turn: scalar, 1 White to move, 0 Black.
      moves: int16 [K] lc0 indices in the mover's frame (any value where invalid).

    Returns:
      int32 [K] keys in [0, NUM_KEYS).
    """
    safe = xp.clip(moves.astype(xp.int32), 0, NUM_MOVES - 1)
    mirror = xp.where(turn == 1, 0, 56)
    own = xp.where(turn == 1, 0, 6)
    piece_from = board[xp.asarray(_FROM)[safe] ^ mirror]
    piece_to = board[xp.asarray(_TO)[safe] ^ mirror]
    knight, castle = xp.asarray(KNIGHT_KEY)[safe], xp.asarray(CASTLE_KEY)[safe]
    is_knight = (knight >= 0) & (piece_from == PAWN + own)
    is_castle = (castle >= 0) & (piece_from == KING + own) & (piece_to == ROOK + own)
    return xp.where(is_knight, knight, xp.where(is_castle, castle, safe))


def excluded_edges(xp: Any, avoid: Any, allowed: Any, allow_until: Any, board: Any, turn: Any,
                   depth: Any, moves: Any, valid: Any) -> Any:
    """bool [K]: the edges of one node a filter excludes (``avoid``/``allowed`` [2, KEYS],
    ``allow_until`` scalar: one tree's ``SearchParams`` fields). A node all of whose
    valid edges would be excluded excludes none."""
    out = raw_excluded(xp, avoid, allowed, allow_until, board, turn, depth, moves, valid)
    return out & xp.any(valid & ~out)


def raw_excluded(xp: Any, avoid: Any, allowed: Any, allow_until: Any, board: Any, turn: Any,
              depth: Any, moves: Any, valid: Any) -> Any:
    keys = edge_keys(xp, board, turn, moves)
    side = xp.where(turn == 1, 0, 1)
    return valid & ((avoid[side][keys] > depth)
                    | ((allow_until > depth) & ~allowed[side][keys]))


@dataclasses.dataclass(frozen=True)
class FilterArrays:
    """Host arrays of a batch's filters (the ``SearchParams`` fields), [B, ...]."""

    avoid: np.ndarray  # int16 [B, 2, NUM_KEYS]
    allowed: np.ndarray  # bool [B, 2, NUM_KEYS]
    allow_until: np.ndarray  # int16 [B]

    def take(self, index: np.ndarray) -> FilterArrays:
        """The rows ``index`` (int [b])."""
        return FilterArrays(avoid=self.avoid[index], allowed=self.allowed[index],
                            allow_until=self.allow_until[index])


def no_filters(count: int) -> FilterArrays:
    return FilterArrays(avoid=np.zeros((count, 2, NUM_KEYS), np.int16),
                        allowed=np.zeros((count, 2, NUM_KEYS), np.bool_),
                        allow_until=np.zeros(count, np.int16))


__all__ = ["CASTLE_KEY", "KNIGHT_KEY", "NUM_KEYS", "FilterArrays", "edge_keys",
           "excluded_edges", "no_filters", "raw_excluded"]
