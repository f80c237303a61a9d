"""lc0's classic 112-plane network input from compact arrays (numpy or jax.numpy; numpy
only at import: no python-chess, no jax)."""

from __future__ import annotations

from typing import Any

import numpy as np

from zerochess.chess.types import CASTLE_BK, CASTLE_BQ, CASTLE_WK, CASTLE_WQ, INPUT_POSITIONS

NUM_PLANES = 112
PLANES_PER_POSITION = 13
AUX_BASE = INPUT_POSITIONS * PLANES_PER_POSITION  # 104

_MIRROR = np.arange(64) ^ 56
_PIECE_CODES = np.arange(1, 13, dtype=np.int8)  # plane k of a slot is code k + 1 (frame-relative)


def planes_from_arrays(
    xp: Any, boards: Any, repeated: Any, turn: Any, castling: Any, rule50: Any
) -> Any:
    """The 112 input planes from compact arrays (numpy or jax.numpy, jittable).

    Args:
      xp: ``numpy`` or ``jax.numpy``.
      boards: int8 ``[..., 8, 64]`` absolute-frame piece codes (``zerochess.chess.state``);
        slot 0 is the current position, slot i the position i plies ago; an all-zero
        board means "no position" and gives all-zero planes.
      repeated: bool ``[..., 8]``: that slot's position occurred earlier in the game.
      turn: int ``[...]``, 1 if white is to move in the current position, 0 if black.
      castling: int ``[...]``, the current position's castling field (rights bits 1 WK,
        2 WQ, 4 BK, 8 BQ; the rook files above them do not enter the classic planes).
      rule50: int ``[...]``, the current position's halfmove clock.

    Returns:
      float32 ``[..., 112, 8, 8]``, plane p, row = rank, col = file, in the frame of
      the side to move.
    """
    boards = xp.asarray(boards)
    turn = xp.asarray(turn)
    castling = xp.asarray(castling).astype(xp.int32)
    black = turn == 0  # [...]
    lead = boards.shape[:-2]

    codes = boards.astype(xp.int32)
    mirrored = codes[..., xp.asarray(_MIRROR)]
    codes = xp.where(black[..., None, None], mirrored, codes)
    # Swap colours for black: 1..6 <-> 7..12, empty stays 0.
    swapped = xp.where(codes > 0, (codes + 5) % 12 + 1, 0)
    codes = xp.where(black[..., None, None], swapped, codes)  # [..., 8, 64]

    pieces = codes[..., None, :] == xp.asarray(_PIECE_CODES, dtype=xp.int32)[:, None]
    present = xp.any(boards != 0, axis=-1)  # [..., 8]
    rep = xp.logical_and(xp.asarray(repeated), present)
    rep_plane = xp.broadcast_to(rep[..., None, None], (*lead, INPUT_POSITIONS, 1, 64))
    history = xp.concatenate([pieces, rep_plane], axis=-2)  # [..., 8, 13, 64]
    history = history.reshape(*lead, AUX_BASE, 64).astype(xp.float32)

    us_ooo = xp.where(black, castling & CASTLE_BQ, castling & CASTLE_WQ) != 0
    us_oo = xp.where(black, castling & CASTLE_BK, castling & CASTLE_WK) != 0
    them_ooo = xp.where(black, castling & CASTLE_WQ, castling & CASTLE_BQ) != 0
    them_oo = xp.where(black, castling & CASTLE_WK, castling & CASTLE_BK) != 0
    ones = xp.ones(lead, xp.float32)
    aux = xp.stack(
        [
            us_ooo.astype(xp.float32),
            us_oo.astype(xp.float32),
            them_ooo.astype(xp.float32),
            them_oo.astype(xp.float32),
            black.astype(xp.float32),
            xp.asarray(rule50).astype(xp.float32) * ones,
            0.0 * ones,
            ones,
        ],
        axis=-1,
    )  # [..., 8]
    aux = xp.broadcast_to(aux[..., None], (*lead, 8, 64))
    planes = xp.concatenate([history, aux], axis=-2)  # [..., 112, 64]
    return planes.reshape(*lead, NUM_PLANES, 8, 8)


def compact_planes(planes: Any, xp: Any = np) -> tuple[Any, Any]:
    """float32 ``[..., 112, 8, 8]`` planes -> lc0's mask-and-value form: (bits uint8
    ``[..., 112, 8]``, a plane's non-zero squares; values float32 ``[..., 112]``, its first
    non-zero value). ``xp``: ``np`` on the host, ``jnp`` in the device game scan."""
    flat = planes.reshape(*planes.shape[:-2], 64)
    mask = flat != 0
    values = xp.where(mask.any(-1), xp.take_along_axis(
        flat, xp.argmax(mask, -1)[..., None], -1)[..., 0], 0.0).astype(xp.float32)
    return xp.packbits(mask, axis=-1, bitorder="little"), values


__all__ = ["AUX_BASE", "NUM_PLANES", "PLANES_PER_POSITION", "compact_planes",
           "planes_from_arrays"]
