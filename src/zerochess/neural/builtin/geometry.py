"""Attack geometry of the built-in evaluator on row-packed uint8 bitboards: piece sets,
slider rays and leaper jumps, shifted all directions at once, reduced to per-square facts
(``BoardFeatures``: attack counts, least attackers, checking squares)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from zerochess.neural.builtin.tables import KING_ATTACKER_VALUE, NO_ATTACKER, Params

_ROOK_DIRS = ((1, 0), (-1, 0), (0, 1), (0, -1))
_BISHOP_DIRS = ((1, 1), (1, -1), (-1, 1), (-1, -1))
_KNIGHT_JUMPS = ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2))
_KING_STEPS = _ROOK_DIRS + _BISHOP_DIRS
# Our pawns capture toward higher ranks, theirs toward lower ones (mover's frame); a
# square from which our pawn checks their king is their king shifted like their pawns.
_PAWN_CAPTURES = ((1, 1), (1, -1), (-1, 1), (-1, -1))

# A board set is [..., 8] uint8: byte r = rank r (mover's frame), bit c = file c. File
# shifts are byte shifts (bits fall off, nothing wraps), rank shifts pad the last axis.

_BITS = np.arange(8, dtype=np.uint8)


def _pack(x: jax.Array) -> jax.Array:
    """[..., 8, 8] bool -> [..., 8] uint8 rows."""
    return jnp.sum(x.astype(jnp.uint8) << _BITS, axis=-1, dtype=jnp.uint8)


def _unpack(x: jax.Array) -> jax.Array:
    """[..., 8] uint8 rows -> [..., 64] float32 0/1 (square = 8 * rank + file)."""
    bits = (x[..., None] >> _BITS) & jnp.uint8(1)
    return bits.reshape(*x.shape[:-1], 64).astype(jnp.float32)


def _shift(x: jax.Array, dr: int, dc: int) -> jax.Array:
    """Move every bit of ``x`` [..., 8] by ``dr`` ranks and ``dc`` files (off-board bits drop)."""
    if dc > 0:
        x = x << jnp.uint8(dc)
    elif dc < 0:
        x = x >> jnp.uint8(-dc)
    if dr:
        cfg = [(0, 0, 0)] * (x.ndim - 1) + [(dr, -dr, 0)]
        x = lax.pad(x, jnp.zeros((), x.dtype), cfg)
    return x


def _rays(sets: jax.Array, empty: jax.Array, dirs: tuple[tuple[int, int], ...]) -> jax.Array:
    """Squares reached from ``sets[:, d]`` stepping ``dirs[d]`` up to and including the first
    occupied square. ``sets`` [B, D, k, 8], ``empty`` [B, 1, 1, 8] -> [B, D, k, 8].

    All directions advance together, so each of the 7 steps is one fused kernel.
    """
    def step(x: jax.Array) -> jax.Array:
        return jnp.stack([_shift(x[:, d], dr, dc) for d, (dr, dc) in enumerate(dirs)], axis=1)

    a = step(sets)
    acc = a
    for _ in range(6):
        a = step(a & empty)
        acc = acc | a
    return acc


def _jumps(sets: jax.Array, offsets: tuple[tuple[int, int], ...]) -> jax.Array:
    """``sets`` [B, k, 8] shifted by each (dr, dc) of ``offsets`` -> [B, len(offsets), k, 8]."""
    return jnp.stack([_shift(sets, dr, dc) for dr, dc in offsets], axis=1)


def _any(masks: list[jax.Array]) -> jax.Array:
    out = masks[0]
    for m in masks[1:]:
        out = out | m
    return out


class BoardFeatures(NamedTuple):
    """Per-square attack facts of slot 0, all [B, 64] float32 unless noted (mover's frame)."""

    ours: jax.Array  # [B, 6, 64] 0/1 our P N B R Q K
    theirs: jax.Array  # [B, 6, 64] 0/1 their P N B R Q K
    our_count: jax.Array  # number of our pieces attacking each square (no x-rays)
    their_count: jax.Array  # number of their pieces attacking each square
    our_min: jax.Array  # SEE value (pawns) of our least valuable attacker; 1000 if none
    their_min: jax.Array  # same for their attackers (king = 100)
    check_from: jax.Array  # [B, 6, 64] 0/1: our piece of type T on s would check their king


def board_features(params: Params, planes: jax.Array) -> BoardFeatures:
    """Pieces, attack counts, least attackers and checking squares of ``planes`` [B, 112, 8, 8]."""
    pieces = planes[:, :12] > 0.5  # [B, 12, 8, 8]
    bb = _pack(pieces)  # [B, 12, 8]
    o, t = bb[:, :6], bb[:, 6:]
    empty = ~_any([bb[:, i] for i in range(12)])[:, None]  # [B, 1, 8]
    see = params["see_value"]

    # Slider rays, all 8 directions at once: sets [oX, oQ, tX, tQ, their king] with X the
    # rook (orthogonal directions) or bishop (diagonal directions).
    rook_sets = jnp.stack([o[:, 3], o[:, 4], t[:, 3], t[:, 4], t[:, 5]], axis=1)
    bishop_sets = jnp.stack([o[:, 2], o[:, 4], t[:, 2], t[:, 4], t[:, 5]], axis=1)
    sets = jnp.stack([rook_sets] * 4 + [bishop_sets] * 4, axis=1)  # [B, 8, 5, 8]
    rays = _rays(sets, empty[:, None], _ROOK_DIRS + _BISHOP_DIRS)  # [B, 8 dirs, 5, 8]
    # Leapers, one fused kernel each: [B, offsets, sets, 8].
    knights = _jumps(jnp.stack([o[:, 1], t[:, 1], t[:, 5]], axis=1), _KNIGHT_JUMPS)
    kings = _jumps(jnp.stack([o[:, 5], t[:, 5]], axis=1), _KING_STEPS)
    pawns = _jumps(jnp.stack([o[:, 0], t[:, 0], t[:, 5]], axis=1), _PAWN_CAPTURES)

    def side(i: int, j: int, pawn_offsets: slice) -> tuple[list[jax.Array], list[jax.Array]]:
        """Attack masks of one side (``i``: its index among knight/king sets, ``j``: its
        rays offset): 19 masks that each attack a square at most once (a pawn or knight
        jump, the king, the first piece along a ray: rook and queen fills of one
        direction stop at the same blocker), and 6 "attacked by type" masks P N B R Q K."""
        pawn = [pawns[:, d, i] for d in range(4)[pawn_offsets]]
        knight = [knights[:, d, i] for d in range(8)]
        king = _any([kings[:, d, i] for d in range(8)])
        per_dir = [rays[:, d, j] | rays[:, d, j + 1] for d in range(8)]
        by_type = [_any(pawn), _any(knight), _any([rays[:, d, j] for d in range(4, 8)]),
                   _any([rays[:, d, j] for d in range(4)]),
                   _any([rays[:, d, j + 1] for d in range(8)]), king]
        return pawn + knight + [king] + per_dir, by_type

    our_masks, our_types = side(0, 0, slice(0, 2))
    their_masks, their_types = side(1, 2, slice(2, 4))
    chk_b = _any([rays[:, d, 4] for d in range(4, 8)])
    chk_r = _any([rays[:, d, 4] for d in range(4)])
    check = [pawns[:, 2, 2] | pawns[:, 3, 2], _any([knights[:, d, 2] for d in range(8)]),
             chk_b, chk_r, chk_b | chk_r, jnp.zeros_like(chk_b)]
    bits = _unpack(jnp.stack(our_masks + their_masks + our_types + their_types + check,
                             axis=1))  # [B, 19 + 19 + 6 + 6 + 6, 64]
    values = jnp.concatenate([see[:5], jnp.full((1,), KING_ATTACKER_VALUE)])[None, :, None]
    our_count = bits[:, :19].sum(1)
    their_count = bits[:, 19:38].sum(1)
    our_min = jnp.min(jnp.where(bits[:, 38:44] > 0, values, NO_ATTACKER), axis=1)
    their_min = jnp.min(jnp.where(bits[:, 44:50] > 0, values, NO_ATTACKER), axis=1)
    check_from = bits[:, 50:]

    flat = planes[:, :12].reshape(-1, 12, 64)
    return BoardFeatures(
        ours=flat[:, :6], theirs=flat[:, 6:],
        our_count=our_count, their_count=their_count,
        our_min=our_min, their_min=their_min,
        check_from=check_from,
    )



def materialize(x: jax.Array) -> jax.Array:
    """Identity that XLA:CPU computes as its own kernel (a reduction), so a small table read
    by a gather is not fused into, and recomputed (unvectorised) for every element of, it."""
    return jnp.max(jnp.stack([x, jnp.full_like(x, -jnp.inf)], axis=1), axis=1)
