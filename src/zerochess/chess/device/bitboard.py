"""64-bit bitboards as pairs of uint32 words, for jax without ``jax_enable_x64``."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

U32 = jnp.uint32


class Bitboard(NamedTuple):
    lo: jax.Array  # uint32, squares 0..31
    hi: jax.Array  # uint32, squares 32..63

    def __and__(self, other: Bitboard) -> Bitboard:
        return Bitboard(self.lo & other.lo, self.hi & other.hi)

    def __or__(self, other: Bitboard) -> Bitboard:
        return Bitboard(self.lo | other.lo, self.hi | other.hi)

    def __xor__(self, other: Bitboard) -> Bitboard:
        return Bitboard(self.lo ^ other.lo, self.hi ^ other.hi)

    def __invert__(self) -> Bitboard:
        return Bitboard(~self.lo, ~self.hi)

    def any(self) -> jax.Array:
        """bool [...]: the board has a square set."""
        return (self.lo | self.hi) != 0

    def __getitem__(self, index) -> Bitboard:  # type: ignore[override]
        return Bitboard(self.lo[index], self.hi[index])

    def expand(self, axis: int = -1) -> Bitboard:
        return Bitboard(jnp.expand_dims(self.lo, axis), jnp.expand_dims(self.hi, axis))

    def reduce_or(self, axis: int = -1) -> Bitboard:
        """The union over ``axis``."""
        return Bitboard(_reduce_or(self.lo, axis), _reduce_or(self.hi, axis))


def _reduce_or(x: jax.Array, axis: int) -> jax.Array:
    return jax.lax.reduce(x, np.uint32(0), jax.lax.bitwise_or, (axis % x.ndim,))


def _words(mask: int) -> tuple[int, int]:
    return mask & 0xFFFFFFFF, (mask >> 32) & 0xFFFFFFFF


def const(mask: int | list[int]) -> Bitboard:
    """A constant bitboard (or an array of them) from Python ints."""
    if isinstance(mask, int):
        lo, hi = _words(mask)
        return Bitboard(U32(lo), U32(hi))
    words = np.array([_words(m) for m in mask], np.uint32)
    return Bitboard(jnp.asarray(words[:, 0]), jnp.asarray(words[:, 1]))


def stack(boards: list[Bitboard], axis: int = 0) -> Bitboard:
    return Bitboard(jnp.stack([b.lo for b in boards], axis),
                    jnp.stack([b.hi for b in boards], axis))


def where(cond: jax.Array, a: Bitboard, b: Bitboard) -> Bitboard:
    return Bitboard(jnp.where(cond, a.lo, b.lo), jnp.where(cond, a.hi, b.hi))


def _mask(squares) -> int:
    return sum(1 << s for s in squares)


FILE = [_mask(r * 8 + f for r in range(8)) for f in range(8)]
RANK = [_mask(r * 8 + f for f in range(8)) for r in range(8)]
ALL = (1 << 64) - 1

N, E, NE, NW, S, W, SW, SE = range(8)
DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1), (-1, 0), (0, -1), (-1, -1), (-1, 1))
ORTHOGONAL = np.array([True, True, False, False, True, True, False, False])
KNIGHT_JUMPS = ((2, 1), (2, -1), (1, 2), (1, -2), (-1, 2), (-1, -2), (-2, 1), (-2, -1))


def _entry_mask(file_step: int) -> int:
    """Squares a step with ``file_step`` can land on without wrapping."""
    if file_step > 0:
        return ALL & ~sum(FILE[f] for f in range(file_step))
    if file_step < 0:
        return ALL & ~sum(FILE[7 - f] for f in range(-file_step))
    return ALL


def _deltas(steps) -> tuple[np.ndarray, Bitboard]:
    return (np.array([8 * r + f for r, f in steps], np.int32),
            const([_entry_mask(f) for _, f in steps]))


DELTA, _ENTRY = _deltas(DIRECTIONS)  # [8] square steps and landing masks of the directions
KNIGHT_DELTA, _KNIGHT_ENTRY = _deltas(KNIGHT_JUMPS)


def shift(b: Bitboard, delta) -> Bitboard:
    """Shift by ``delta`` squares (int array or int, |delta| < 64; positive: towards h8),
    no file masking."""
    delta = jnp.asarray(delta, jnp.int32)
    left = jnp.maximum(delta, 0).astype(U32)
    right = jnp.maximum(-delta, 0).astype(U32)
    c32 = U32(32)
    shl = Bitboard(b.lo << left, (b.hi << left) | (b.lo >> (c32 - left)) | (b.lo << (left - c32)))
    shr = Bitboard((b.lo >> right) | (b.hi << (c32 - right)) | (b.hi >> (right - c32)),
                   b.hi >> right)
    return where(delta >= 0, shl, shr)


def step(b: Bitboard, rank_step: int, file_step: int) -> Bitboard:
    """Every piece of ``b`` moved by (rank_step, file_step); pieces leaving the board vanish."""
    moved = shift(b, 8 * rank_step + file_step)
    return moved if file_step == 0 else moved & const(_entry_mask(file_step))


def direction_steps(b: Bitboard) -> Bitboard:
    """``b`` [..., 8] (or broadcastable) moved one step along each of the 8 directions."""
    return shift(b, DELTA) & _ENTRY


def slides(b: Bitboard, empty: Bitboard) -> Bitboard:
    """[..., 8]: the squares the pieces of ``b`` attack along each direction: every
    square up to and including the first occupied one (``empty``: the free squares;
    both broadcast against [..., 8]). Kogge-Stone occluded fill: three doubling steps."""
    pro = empty & _ENTRY
    gen = b
    gen = gen | (pro & shift(gen, DELTA))
    pro = pro & shift(pro, DELTA)
    gen = gen | (pro & shift(gen, 2 * DELTA))
    pro = pro & shift(pro, 2 * DELTA)
    gen = gen | (pro & shift(gen, 4 * DELTA))
    return direction_steps(gen)


def knight_jumps(b: Bitboard) -> Bitboard:
    """[..., 8]: ``b`` moved by each knight jump."""
    return shift(b, KNIGHT_DELTA) & _KNIGHT_ENTRY


def knight_attacks(b: Bitboard) -> Bitboard:
    return knight_jumps(b.expand()).reduce_or()


def king_attacks(b: Bitboard) -> Bitboard:
    return direction_steps(b.expand()).reduce_or()


def popcount(b: Bitboard) -> jax.Array:
    """int32 number of squares set."""
    return (jax.lax.population_count(b.lo) + jax.lax.population_count(b.hi)).astype(jnp.int32)


def _ctz(x: jax.Array) -> jax.Array:
    """Trailing zeros of a uint32 (32 for 0)."""
    return jax.lax.population_count((x & (~x + U32(1))) - U32(1)).astype(jnp.int32)


def lowest_square(b: Bitboard) -> jax.Array:
    """int32 index of the lowest set square (64 for an empty board)."""
    return jnp.where(b.lo != 0, _ctz(b.lo), 32 + _ctz(b.hi)).astype(jnp.int32)


def square(sq: jax.Array) -> Bitboard:
    """The bitboard of square ``sq`` (int array, 0..63; anything else: an empty board)."""
    sq = jnp.asarray(sq, jnp.int32)
    bit = U32(1) << (sq & 31).astype(U32)
    on = (sq >= 0) & (sq < 64)
    return Bitboard(jnp.where(on & (sq < 32), bit, U32(0)),
                    jnp.where(on & (sq >= 32), bit, U32(0)))


def has(b: Bitboard, sq: jax.Array) -> jax.Array:
    """bool: square ``sq`` (int array, 0..63) is set in ``b`` (broadcasting)."""
    sq = jnp.asarray(sq, jnp.int32)
    word = jnp.where(sq < 32, b.lo, b.hi)
    return ((word >> (sq & 31).astype(U32)) & U32(1)) != 0


_POW2 = np.left_shift(np.uint32(1), np.arange(32, dtype=np.uint32))
_POW2_64 = np.concatenate([_POW2, _POW2])


def from_lanes(lanes: jax.Array) -> Bitboard:
    """Pack bool [..., 64] (square-indexed) into a bitboard of shape [...]."""
    bits = jnp.where(lanes, jnp.asarray(_POW2_64), U32(0))
    return Bitboard(_reduce_or(bits[..., :32], -1), _reduce_or(bits[..., 32:], -1))


def to_lanes(b: Bitboard) -> jax.Array:
    """bool [..., 64] from a bitboard of shape [...]."""
    pow2 = jnp.asarray(_POW2)
    return jnp.concatenate([(b.lo[..., None] & pow2) != 0, (b.hi[..., None] & pow2) != 0],
                           axis=-1)


__all__ = ["ALL", "DELTA", "DIRECTIONS", "FILE", "KNIGHT_DELTA", "KNIGHT_JUMPS", "ORTHOGONAL",
           "RANK", "Bitboard", "const", "direction_steps", "from_lanes", "has", "king_attacks",
           "knight_attacks", "knight_jumps", "lowest_square", "popcount", "shift", "slides",
           "square", "stack", "step", "to_lanes", "where"]
