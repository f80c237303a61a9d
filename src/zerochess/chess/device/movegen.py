"""Legal move generation for one position in the mover's frame, over bitboards."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.device import bitboard as bb
from zerochess.chess.device import tables
from zerochess.chess.device.bitboard import Bitboard

P, N, B, R, Q, K = range(6)  # index into a side's [6] piece bitboards
# where move i's bit lies: word of [groups.lo, groups.hi], bit in that word
_WORD = np.where(tables.TO_SQUARE < 32, tables.GROUP, tables.GROUP + tables.NUM_GROUPS)
_BIT = (tables.TO_SQUARE & 31).astype(np.uint32)
_N, _E, _NE, _NW, _W = 0, 1, 2, 3, 5  # directions (bitboard.DIRECTIONS)


class Side(NamedTuple):
    """One side's pieces in the mover's frame: a Bitboard of shape [6] (P N B R Q K)."""

    pieces: Bitboard

    def __getitem__(self, piece: int) -> Bitboard:  # type: ignore[override]
        return self.pieces[piece]

    def all(self) -> Bitboard:
        return self.pieces.reduce_or(0)

    def sliders(self) -> Bitboard:
        """[8]: the pieces that slide along each direction (rooks and queens on files and
        ranks, bishops and queens on diagonals)."""
        rq, bq = self[R] | self[Q], self[B] | self[Q]
        return bb.where(jnp.asarray(bb.ORTHOGONAL), rq.expand(), bq.expand())


class Targets(NamedTuple):
    """The legal moves of one position as target bitboards, before they are read out as
    1858 indices."""

    groups: Bitboard  # [tables.NUM_GROUPS], see ``tables.GROUP`` (castling included)
    in_check: jax.Array  # bool
    ep_legal: jax.Array  # bool: an en-passant capture onto the given square is legal

    def any(self) -> jax.Array:
        """bool: the position has a legal move (no read-out needed)."""
        return self.groups.reduce_or(0).any()


class Generated(NamedTuple):
    """The legal moves of one position by lc0 index."""

    mask: jax.Array  # bool [1858] (mover's frame)
    in_check: jax.Array  # bool
    ep_legal: jax.Array  # bool


def sides_from_codes(codes: jax.Array) -> tuple[Side, Side]:
    """(us, them) from int8 [64] mover's-frame piece codes (1..6 us, 7..12 them)."""
    lanes = codes[None, :] == jnp.arange(1, 13, dtype=codes.dtype)[:, None]  # [12, 64]
    boards = bb.from_lanes(lanes)
    return Side(boards[:6]), Side(boards[6:])


@jax.jit
def attacked(target: Bitboard, occupied: Bitboard, them: Side, them_pawns: Bitboard
             ) -> jax.Array:
    """bool [...]: some square of ``target`` [...] is attacked by ``them`` with
    ``occupied`` [...] blocking (their pawns given apart, so that an en-passant capture
    can remove one)."""
    hit = them_pawns & (bb.step(target, 1, 1) | bb.step(target, 1, -1))
    hit = hit | (them[N] & bb.knight_attacks(target)) | (them[K] & bb.king_attacks(target))
    rays = bb.slides(target.expand(), (~occupied).expand())  # [..., 8]
    return hit.any() | (rays & them.sliders()).any().any(axis=-1)


@jax.jit
def targets(us: Side, them: Side, castle_rooks: jax.Array, ep: jax.Array) -> Targets:
    """The legal moves of one position (mover's frame), as target bitboards.

    Args:
      us, them: the pieces of the side to move and of the other side.
      castle_rooks: int32 [2] the squares (first rank) of our king-side and queen-side
        castling rooks, -1 where that right is absent.
      ep: int32 the en-passant target square (sixth rank), -1 if none; it need not be a
        legal capture (``ep_legal`` says whether it is).

    Returns:
      ``Targets``.
    """
    occ_us, occ_them = us.all(), them.all()
    occ = occ_us | occ_them
    empty = ~occ
    king = us[K]
    not_ours = ~occ_us
    their_sliders = them.sliders()  # [8]

    # the enemy's attacks with our king lifted off the board
    danger = (bb.step(them[P], -1, 1) | bb.step(them[P], -1, -1) | bb.knight_attacks(them[N])
              | bb.king_attacks(them[K])
              | bb.slides(their_sliders, (empty | king).expand()).reduce_or())

    # checks and pins: the rays from our king
    rays = bb.slides(king.expand(), empty.expand())  # [8]
    hit = rays & their_sliders
    checkers = ((them[P] & (bb.step(king, 1, 1) | bb.step(king, 1, -1)))
                | (them[N] & bb.knight_attacks(king)) | hit.reduce_or())
    block = bb.where(hit.any(), rays, bb.const(0)).reduce_or()
    first = rays & occ_us
    pinner = bb.slides(first, empty.expand()) & their_sliders
    pinned_dir = bb.where(pinner.any(), first, bb.const(0))  # [8]
    pinned_line = pinned_dir[:4] | pinned_dir[4:]  # [4] by line (d % 4)
    pinned = pinned_line.reduce_or()
    num_checkers = bb.popcount(checkers)
    check_mask = bb.where(num_checkers == 0, bb.const(bb.ALL),
                          bb.where(num_checkers == 1, checkers | block, bb.const(0)))
    # [8]: our pieces that may move along each direction (not pinned to another line)
    free = ~(pinned.expand() & ~bb.stack([pinned_line[d % 4] for d in range(8)]))

    # sliders, one distance at a time: x [8] holds the pieces still sliding
    x = us.sliders() & free
    by_distance = []
    for _ in range(7):
        x = bb.direction_steps(x)
        by_distance.append(x & not_ours.expand() & check_mask.expand())
        x = x & empty.expand()
    slide_targets = bb.stack(by_distance, axis=1)  # [8 directions, 7 distances]
    king_steps = bb.direction_steps(king.expand()) & (not_ours & ~danger).expand()  # [8]
    # pawns: single and double pushes, captures (promotions to q/r/b: groups of their own)
    push1 = bb.step(us[P] & free[_N], 1, 0) & empty
    push2 = bb.step(push1 & bb.const(bb.RANK[2]), 1, 0) & empty & check_mask
    push1 = push1 & check_mask
    cap_ne = bb.step(us[P] & free[_NE], 1, 1) & occ_them & check_mask
    cap_nw = bb.step(us[P] & free[_NW], 1, -1) & occ_them & check_mask
    # en passant onto ``ep``: capture towards NE (pawn on its SW) and towards NW
    ep_square = bb.square(ep)
    captured = bb.step(ep_square, -1, 0)
    pawns = bb.stack([bb.step(ep_square, -1, -1), bb.step(ep_square, -1, 1)]) & us[P]  # [2]
    after = occ ^ pawns ^ ep_square ^ captured
    ep_ok = pawns.any() & ~attacked(king.expand(0), after, them, them[P] & ~captured)  # [2]
    ep_targets = bb.where(ep_ok, ep_square.expand(0), bb.const(0))

    # castling, king-to-rook: king side (king to g1, rook to f1), queen side (c1, d1); lc0
    # indexes it as the king's move onto its rook, a slide east or west
    king_sq = bb.lowest_square(king)
    rook_sq = castle_rooks.astype(jnp.int32)  # [2]
    rook = bb.square(rook_sq) & us[R]
    king_to, rook_to = jnp.array([6, 2], jnp.int32), jnp.array([5, 3], jnp.int32)
    king_target, rook_target = bb.square(king_to), bb.square(rook_to)
    king_path = _between_on_first_rank(king_sq, king_to)
    rook_path = _between_on_first_rank(rook_sq, rook_to)
    others = occ ^ king ^ rook
    clear = ~(others & (king_path | rook_path | king_target | rook_target)).any()
    safe = ~((king_path | king) & danger).any()
    safe_target = ~attacked(king_target, occ ^ king ^ rook ^ rook_target, them, them[P])
    castle = (rook_sq >= 0) & rook.any() & (king_sq < 8) & clear & safe & safe_target  # [2]
    distance = jnp.abs(rook_sq - king_sq)[:, None] == jnp.arange(1, 8)  # [2, 7]
    castles = bb.where(castle[:, None] & distance, rook.expand(), bb.const(0))  # [2, 7]

    step1 = (slide_targets[:, 0] | king_steps)  # [8]
    extra = [bb.const(0)] * 8
    extra[_N], extra[_NE], extra[_NW] = push1, cap_ne | ep_targets[0], cap_nw | ep_targets[1]
    step1 = step1 | bb.stack(extra)
    distance2 = slide_targets[:, 1] | bb.stack([push2] + [bb.const(0)] * 7)
    slide_groups = bb.stack([step1, distance2] + [slide_targets[:, k] for k in range(2, 7)],
                            axis=1)  # [8, 7]
    none = Bitboard(jnp.zeros(7, jnp.uint32), jnp.zeros(7, jnp.uint32))
    slide_groups = slide_groups | bb.stack(
        [castles[0] if d == _E else castles[1] if d == _W else none for d in range(8)])
    knight_targets = bb.knight_jumps(us[N] & ~pinned) & (not_ours & check_mask).expand()
    last = bb.const(bb.RANK[7])
    promotions = bb.stack([push1 & last, cap_ne & last, cap_nw & last])
    groups = Bitboard(
        jnp.concatenate([slide_groups.lo.reshape(-1), knight_targets.lo, promotions.lo]),
        jnp.concatenate([slide_groups.hi.reshape(-1), knight_targets.hi, promotions.hi]))
    return Targets(groups=groups, in_check=num_checkers > 0, ep_legal=ep_ok.any())


@jax.jit
def generate(us: Side, them: Side, castle_rooks: jax.Array, ep: jax.Array) -> Generated:
    """The legal moves of one position (mover's frame) as a mask over lc0's indices
    (arguments as ``targets``)."""
    t = targets(us, them, castle_rooks, ep)
    words = jnp.concatenate([t.groups.lo, t.groups.hi])  # [2 * NUM_GROUPS]
    mask = ((words[jnp.asarray(_WORD)] >> jnp.asarray(_BIT)) & 1) != 0  # [1858]
    return Generated(mask=mask, in_check=t.in_check, ep_legal=t.ep_legal)


def _between_on_first_rank(a: jax.Array, b: jax.Array) -> Bitboard:
    """The squares strictly between squares ``a`` and ``b`` of the first rank (arrays)."""
    a = jnp.clip(a, 0, 7).astype(jnp.uint32)
    b = jnp.asarray(b).astype(jnp.uint32)
    low, high = jnp.minimum(a, b), jnp.maximum(a, b)
    one = jnp.uint32(1)
    bits = ((one << high) - one) & ~((jnp.uint32(2) << low) - one)  # low+1 .. high-1
    return Bitboard(jnp.where(high > low + one, bits, jnp.uint32(0)), jnp.zeros_like(bits))


__all__ = ["Generated", "Side", "Targets", "attacked", "generate", "sides_from_codes", "targets"]
