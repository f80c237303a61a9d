"""Numpy tables of the device rules, built once at import (no python-chess)."""

from __future__ import annotations

import numpy as np

from zerochess.chess.device.bitboard import DIRECTIONS, KNIGHT_JUMPS
from zerochess.chess.types import BISHOP, NUM_MOVES, QUEEN, ROOK

SLIDE_GROUPS = 8 * 7  # (direction, distance 1..7)
KNIGHT_GROUP = SLIDE_GROUPS  # 8 jump groups follow
PROMOTION_GROUP = KNIGHT_GROUP + 8  # pawn to the last rank: push, capture NE, capture NW
NUM_GROUPS = PROMOTION_GROUP + 3


def slide_group(direction: int, distance: int) -> int:
    return direction * 7 + distance - 1


def _policy() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """lc0's policy order: per from-square the queen-line and knight targets in ascending
    square order, then the promotions from the 7th rank (q r b per target)."""
    frm, to, promo = [], [], []
    for sq in range(64):
        f, r = sq % 8, sq // 8
        for t in range(64):
            df, dr = t % 8 - f, t // 8 - r
            if t != sq and (df == 0 or dr == 0 or abs(df) == abs(dr)
                            or sorted((abs(df), abs(dr))) == [1, 2]):
                frm.append(sq), to.append(t), promo.append(0)
    for f in range(8):
        for tf in (f - 1, f, f + 1):
            if 0 <= tf < 8:
                for piece in (QUEEN, ROOK, BISHOP):
                    frm.append(48 + f), to.append(56 + tf), promo.append(piece)
    return np.array(frm, np.int32), np.array(to, np.int32), np.array(promo, np.int32)


FROM_SQUARE, TO_SQUARE, PROMOTION = _policy()
assert FROM_SQUARE.shape == (NUM_MOVES,)


def _groups() -> np.ndarray:
    group = np.zeros(NUM_MOVES, np.int32)
    for i in range(NUM_MOVES):
        f, t, p = int(FROM_SQUARE[i]), int(TO_SQUARE[i]), int(PROMOTION[i])
        dr, df = t // 8 - f // 8, t % 8 - f % 8
        if p:
            group[i] = PROMOTION_GROUP + {0: 0, 1: 1, -1: 2}[df]
        elif sorted((abs(df), abs(dr))) == [1, 2]:
            group[i] = KNIGHT_GROUP + KNIGHT_JUMPS.index((dr, df))
        else:
            distance = max(abs(df), abs(dr))
            group[i] = slide_group(DIRECTIONS.index((np.sign(dr), np.sign(df))), distance)
    return group


GROUP = _groups()  # int32 [1858]: the target bitboard that holds move i
# INDEX[from, to]: the plain (non-promotion) index of a queen-line or knight move, -1 if none
INDEX = np.full((64, 64), -1, np.int32)
_plain = PROMOTION == 0
INDEX[FROM_SQUARE[_plain], TO_SQUARE[_plain]] = np.nonzero(_plain)[0]
# PROMOTION_INDEX[from_file, to_file, piece]: the promotion indices (piece 0: knight, plain)
PROMOTION_INDEX = np.full((8, 8, 7), -1, np.int32)
for _i in np.nonzero(~_plain)[0]:
    PROMOTION_INDEX[FROM_SQUARE[_i] % 8, TO_SQUARE[_i] % 8, PROMOTION[_i]] = _i

__all__ = ["FROM_SQUARE", "GROUP", "INDEX", "KNIGHT_GROUP", "NUM_GROUPS", "PROMOTION",
           "PROMOTION_GROUP", "PROMOTION_INDEX", "SLIDE_GROUPS", "TO_SQUARE", "slide_group"]
