"""Training examples as arrays: compact on the host, expanded to network inputs on the device."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess import planes as planes_module
from zerochess.chess.policy_map import MAX_LEGAL_MOVES, NUM_MOVES
from zerochess.errors import UserError, quote

NUM_PLANES = 112
ILLEGAL = -1.0  # lc0's policy target value of an illegal move


class Examples(NamedTuple):
    """Training examples (host numpy; every field has the leading dimension N)."""

    plane_bits: np.ndarray  # uint8 [N, 112, 8]: square s of plane p is bit s % 8 of byte s // 8
    plane_values: np.ndarray  # float32 [N, 112]: the value of each plane on its set squares
    policy_index: np.ndarray  # int16 [N, 218]: 1858-indices of the legal moves, -1 padded
    policy_target: np.ndarray  # float32 [N, 218]: visit fractions over them, 0 padded
    result: np.ndarray  # float32 [N, 3]: game result W, D, L for the side to move
    root_q: np.ndarray  # float32 [N]: root Q = W - L after the search, side to move
    root_d: np.ndarray  # float32 [N]: root draw probability after the search
    best_q: np.ndarray  # float32 [N]: Q of the best move's subtree, side to move
    best_d: np.ndarray  # float32 [N]: D of the best move's subtree
    moves_left: np.ndarray  # float32 [N]: plies from this position to the end of the game
    game: np.ndarray  # int32 [N]: the game's index in its run
    ply: np.ndarray  # int32 [N]: the position's ply in its game (0 = the game's start)

    def __len__(self) -> int:
        return int(self.plane_bits.shape[0])

    def take(self, index: np.ndarray | Sequence[int] | slice) -> Examples:
        """The examples at ``index`` (numpy indexing on every field)."""
        if not isinstance(index, slice):
            index = np.asarray(index)
        return Examples(*(np.asarray(a)[index] for a in self))


EXAMPLE_DTYPES = Examples(
    plane_bits=np.uint8, plane_values=np.float32, policy_index=np.int16,
    policy_target=np.float32, result=np.float32, root_q=np.float32, root_d=np.float32,
    best_q=np.float32, best_d=np.float32, moves_left=np.float32, game=np.int32, ply=np.int32)
EXAMPLE_SHAPES = Examples(
    plane_bits=(NUM_PLANES, 8), plane_values=(NUM_PLANES,), policy_index=(MAX_LEGAL_MOVES,),
    policy_target=(MAX_LEGAL_MOVES,), result=(3,), root_q=(), root_d=(), best_q=(),
    best_d=(), moves_left=(), game=(), ply=())


def empty_examples() -> Examples:
    """Zero examples with the right dtypes and trailing shapes."""
    return Examples(*(np.zeros((0, *s), d) for s, d in zip(EXAMPLE_SHAPES, EXAMPLE_DTYPES,
                                                              strict=True)))


def concat_examples(parts: Sequence[Examples]) -> Examples:
    """All examples of ``parts`` in order (an empty list gives ``empty_examples()``)."""
    parts = [p for p in parts if len(p)]
    if not parts:
        return empty_examples()
    return Examples(*(np.concatenate(cols) for cols in zip(*parts, strict=True)))


def check_examples(ex: Examples) -> None:
    """Raise ``ValueError`` unless every field has its dtype, trailing shape and length N."""
    n = len(ex)
    for name, arr, shape, dtype in zip(Examples._fields, ex, EXAMPLE_SHAPES, EXAMPLE_DTYPES,
                                       strict=True):
        arr = np.asarray(arr)
        if arr.shape != (n, *shape) or arr.dtype != dtype:
            raise UserError(f"examples.{name}: expected {np.dtype(dtype).name} {(n, *shape)}, "
                             f"got {arr.dtype.name} {arr.shape}")


# --- planes ------------------------------------------------------------------------------------

def compact_planes(planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float32 ``[..., 112, 8, 8]`` planes -> (bits uint8 ``[..., 112, 8]``, values float32
    ``[..., 112]``), lc0's mask-and-value form.

    Raises:
      ValueError: a plane is not one constant value on its non-zero squares (not lc0 input).
    """
    planes = np.asarray(planes, np.float32)
    if planes.shape[-3:] != (NUM_PLANES, 8, 8):
        raise UserError(f"planes must be [..., 112, 8, 8], got {planes.shape}")
    bits, values = planes_module.compact_planes(planes)
    flat = planes.reshape(*planes.shape[:-2], 64)
    if np.any((flat != 0) & (flat != values[..., None])):
        raise UserError("a plane holds more than one non-zero value: not lc0 input planes")
    return bits, values


def expand_planes(bits: Any, values: Any, xp: Any = jnp) -> Any:
    """(bits ``[..., 112, 8]``, values ``[..., 112]``) -> float32 planes ``[..., 112, 8, 8]``
    (``xp`` = ``jnp`` on the device, ``np`` on the host)."""
    squares = xp.unpackbits(xp.asarray(bits, xp.uint8), axis=-1, bitorder="little")
    planes = squares.astype(xp.float32) * xp.asarray(values, xp.float32)[..., None]
    return planes.reshape(*planes.shape[:-1], 8, 8)


# --- targets -----------------------------------------------------------------------------------

def wdl_from_qd(q: Any, d: Any, xp: Any = jnp) -> Any:
    """W/D/L ``[..., 3]`` from Q = W - L and D: ``((1 + q - d) / 2, d, (1 - q - d) / 2)``."""
    return xp.stack([(1 + q - d) / 2, d, (1 - q - d) / 2], axis=-1)


def dense_policy(index: Any, target: Any, xp: Any = jnp) -> Any:
    """Sparse (index ``[..., K]``, target ``[..., K]``) -> ``[..., 1858]`` with lc0's
    convention: the visit fraction on legal moves, -1 on illegal ones."""
    index = xp.asarray(index).astype(xp.int32)
    lead = index.shape[:-1]
    flat_idx = index.reshape(-1, index.shape[-1])
    flat_tgt = xp.asarray(target, xp.float32).reshape(flat_idx.shape)
    rows = xp.arange(flat_idx.shape[0])[:, None]
    safe = xp.where(flat_idx >= 0, flat_idx, NUM_MOVES)  # padding goes to a spare column
    if xp is jnp:
        dense = jnp.full((flat_idx.shape[0], NUM_MOVES + 1), ILLEGAL, jnp.float32)
        dense = dense.at[rows, safe].set(flat_tgt)
    else:
        dense = np.full((flat_idx.shape[0], NUM_MOVES + 1), ILLEGAL, np.float32)
        dense[rows, safe] = flat_tgt
    return dense[:, :NUM_MOVES].reshape(*lead, NUM_MOVES)


class Batch(NamedTuple):
    """A training batch as the losses take it (device arrays)."""

    planes: jax.Array  # float32 [B, 112, 8, 8]: network input
    policy: jax.Array  # float32 [B, 1858]: visit fractions, -1 on illegal moves (lc0)
    result: jax.Array  # float32 [B, 3]: game result W/D/L, side to move
    best_wdl: jax.Array  # float32 [B, 3]: W/D/L of the best move after the search
    root_wdl: jax.Array  # float32 [B, 3]: W/D/L of the root after the search
    moves_left: jax.Array  # float32 [B]: plies to the end of the game


def to_batch(ex: Examples) -> Batch:
    """Expand examples into a ``Batch`` (jit-able; call it inside the train step)."""
    return Batch(
        planes=expand_planes(ex.plane_bits, ex.plane_values),
        policy=dense_policy(ex.policy_index, ex.policy_target),
        result=jnp.asarray(ex.result, jnp.float32),
        best_wdl=wdl_from_qd(jnp.asarray(ex.best_q, jnp.float32),
                             jnp.asarray(ex.best_d, jnp.float32)),
        root_wdl=wdl_from_qd(jnp.asarray(ex.root_q, jnp.float32),
                             jnp.asarray(ex.root_d, jnp.float32)),
        moves_left=jnp.asarray(ex.moves_left, jnp.float32),
    )


def result_wdl(result: str | np.ndarray, white_to_move: np.ndarray) -> np.ndarray:
    """float32 ``[N, 3]``: a PGN result (``1-0``, ``0-1``, ``1/2-1/2``), or a W/D/L ``[3]``
    for white (a graded target), as W/D/L from the side to move of each position
    (``white_to_move`` bool ``[N]``)."""
    white_to_move = np.asarray(white_to_move, bool)
    if not isinstance(result, str):
        wdl = np.asarray(result, np.float32)
        return np.where(white_to_move[:, None], wdl, wdl[::-1])
    if result == "1/2-1/2":
        row = np.array([0.0, 1.0, 0.0], np.float32)
        return np.tile(row, (white_to_move.size, 1))
    if result not in ("1-0", "0-1"):
        raise UserError(f"unknown game result {quote(result)} (expected 1-0, 0-1 or 1/2-1/2)")
    mover_won = white_to_move == (result == "1-0")
    out = np.zeros((white_to_move.size, 3), np.float32)
    out[mover_won, 0] = 1.0
    out[~mover_won, 2] = 1.0
    return out


__all__ = [
    "Batch", "EXAMPLE_DTYPES", "EXAMPLE_SHAPES", "Examples", "ILLEGAL", "check_examples",
    "compact_planes", "concat_examples", "dense_policy", "empty_examples", "expand_planes",
    "result_wdl", "to_batch", "wdl_from_qd",
]
