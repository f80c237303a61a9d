"""The rules of chess on the device (jax): bitboards over uint32 pairs, lc0's move space."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.device.claims import draw_claim, draw_claims
from zerochess.chess.device.expand import (
    check_candidates,
    checking_mates_in_two,
    expand,
    mating_slots,
    root_mate_slots,
)
from zerochess.chess.device.position import (
    apply_move,
    compact,
    describe,
    generate,
    insufficient_material,
    play,
)
from zerochess.chess.keys import position_hash
from zerochess.chess.planes import planes_from_arrays
from zerochess.chess.types import PositionArrays


def legal_mask(pos: PositionArrays) -> jax.Array:
    """bool [1858]: the legal moves of ``pos`` by lc0 index (mover's frame)."""
    return generate(pos).mask


def legal_moves(pos: PositionArrays) -> tuple[jax.Array, jax.Array]:
    """(int16 [218] legal moves in ascending lc0 index, -1 padded; int32 count). There is
    no cap below 218, the most any legal position has."""
    return compact(legal_mask(pos))


def status(pos: PositionArrays) -> jax.Array:
    """int8 ``GameStatus`` of ``pos``: checkmate, stalemate, insufficient material,
    rule50 (halfmove clock >= 100; mate and stalemate first) or ongoing. Repetition needs
    the game: see ``repetitions``."""
    return describe(pos).status


def key(pos: PositionArrays) -> jax.Array:
    """uint32 [2]: the repetition key (``zerochess.chess.keys.position_hash``)."""
    return position_hash(jnp, pos.board, pos.turn, pos.castling, pos.ep)


def repetitions(key: jax.Array, earlier: jax.Array, num_earlier: jax.Array,
                rule50: jax.Array) -> jax.Array:
    """int32: how often the position with ``key`` occurred before (the same side to move,
    within its halfmove clock), as the host counts (``zerochess.chess.history``).

    Args:
      key: uint32 [2].
      earlier: uint32 [W, 2] keys of the positions before it, newest first.
      num_earlier: int32, the valid rows of ``earlier``.
      rule50: the position's halfmove clock (an irreversible move lies further back).

    A count of 2 makes the position's third occurrence (a draw by threefold repetition);
    inside a search tree one earlier occurrence below the root is a draw (lc0).
    """
    ply = jnp.arange(1, earlier.shape[0] + 1)
    within = (ply % 2 == 0) & (ply <= jnp.minimum(rule50, num_earlier))
    return jnp.sum(within & jnp.all(earlier == key, axis=-1), dtype=jnp.int32)


def encode(boards: Any, repeated: Any, turn: Any, castling: Any, rule50: Any) -> jax.Array:
    """lc0's 112 input planes (``zerochess.chess.planes.planes_from_arrays`` with jax):
    ``boards`` int8 [..., 8, 64] the position then the 7 before it, ``repeated`` bool
    [..., 8] their "occurred before" flags."""
    return planes_from_arrays(jnp, boards, repeated, turn, castling, rule50)


def from_board(board: Any) -> PositionArrays:
    """The arrays of a python-chess board (checked: an invalid or variant board raises
    ``zerochess.PositionError``, as on the host path)."""
    from zerochess.chess.state import from_board as _from_board
    from zerochess.positions import check_board

    return PositionArrays(*(np.asarray(f) for f in _from_board(check_board(board))))


def to_board(pos: PositionArrays) -> Any:
    """A python-chess board (no move history) from one position's arrays."""
    from zerochess.chess.state import to_board as _to_board

    return _to_board(PositionArrays(*(np.asarray(f) for f in jax.device_get(pos))))


__all__ = ["apply_move", "check_candidates", "checking_mates_in_two", "describe",
           "draw_claim", "draw_claims", "encode", "expand", "from_board",
           "insufficient_material", "key", "legal_mask", "legal_moves", "mating_slots",
           "play", "repetitions", "root_mate_slots", "status", "to_board"]
