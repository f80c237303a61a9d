"""Batch expansion on the device: the same ``Expansion`` record as the host expander."""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from zerochess.chess.device import bitboard as bb
from zerochess.chess.device import movegen, tables
from zerochess.chess.device.position import (
    Described,
    apply_move,
    compact,
    describe,
    is_checkmate_after,
    mover_codes,
)
from zerochess.chess.types import (
    KING,
    MAX_LEGAL_MOVES,
    PAWN,
    Expansion,
    GameStatus,
    PositionArrays,
    empty_positions,
)


def check_candidates(pos: PositionArrays, legal: jax.Array, num_legal: jax.Array) -> jax.Array:
    """bool [218]: the legal moves of ``pos`` that give check, exactly for ordinary moves
    (a piece landing where it attacks the enemy king, or leaving the line on which it
    alone shielded that king from one of our sliders); every castling, en passant and
    promotion is included too (the caller plays the candidates out)."""
    white = pos.turn == 1
    codes = mover_codes(pos.board, white)
    us, them = movegen.sides_from_codes(codes)
    king = them[movegen.K]
    occ_us = us.all()
    empty = ~(occ_us | them.all())
    rays = bb.slides(king.expand(), empty.expand())  # [8] up to the first piece
    orthogonal = jnp.asarray(bb.ORTHOGONAL)
    orth = bb.where(orthogonal, rays, bb.const(0)).reduce_or()
    diag = bb.where(~orthogonal, rays, bb.const(0)).reduce_or()
    checks = bb.stack([bb.const(0), bb.step(king, -1, 1) | bb.step(king, -1, -1),
                       bb.knight_attacks(king), diag, orth, orth | diag, bb.const(0)])  # by type
    # our pieces alone between the king and one of our sliders, per direction
    first = rays & occ_us
    shielding = bb.where((bb.slides(first, empty.expand()) & us.sliders()).any(), first,
                         bb.const(0))  # [8]
    lines = bb.slides(king.expand(), bb.const(bb.ALL).expand())  # [8] to the board's edge

    idx = jnp.maximum(legal, 0).astype(jnp.int32)
    frm = jnp.asarray(tables.FROM_SQUARE)[idx]
    to = jnp.asarray(tables.TO_SQUARE)[idx]
    piece = codes[frm].astype(jnp.int32)  # 1..6, ours
    target = codes[to].astype(jnp.int32)
    promotion = (piece == PAWN) & (to >= 56)
    castle = (piece == KING) & (target >= 1) & (target <= 6)
    en_passant = (piece == PAWN) & (frm % 8 != to % 8) & (target == 0)
    direct = bb.has(checks[piece], to)
    uncovered = jnp.any(bb.has(shielding.expand(0), frm[:, None])
                        & ~bb.has(lines.expand(0), to[:, None]), axis=1)
    gives = direct | uncovered | promotion | castle | en_passant
    return gives & (jnp.arange(MAX_LEGAL_MOVES) < num_legal)


def _first_passing(pos: PositionArrays, legal: jax.Array, candidates: jax.Array,
                   passes: Callable[[PositionArrays, jax.Array, jax.Array], jax.Array]
                   ) -> jax.Array:
    """int16 [n]: per row, the first slot of ``candidates`` [n, 218] whose move passes
    ``passes(parents [n], moves [n], live [n]) -> bool [n]``; -1 if none.

    The batch's candidates are tried ``n`` at a time whatever row they come from, so a
    batch costs about (candidates / n) rounds, not the most any one row has; a candidate
    after its row's first passing one is not tried."""
    n = legal.shape[0]
    slots, counts = jax.vmap(compact)(candidates)  # [n, 218] candidate slots per row
    ends = jnp.cumsum(counts)
    total = ends[-1]

    def round_(carry):
        start, best = carry
        k = start + jnp.arange(n)
        row = jnp.minimum(jnp.searchsorted(ends, k, side="right"), n - 1)
        slot = slots[row, jnp.clip(k - (ends[row] - counts[row]), 0, MAX_LEGAL_MOVES - 1)]
        slot = jnp.maximum(slot, 0).astype(jnp.int32)
        live = (k < total) & (slot < best[row])
        parent = jax.tree.map(lambda a: a[row], pos)
        ok = live & passes(parent, legal[row, slot], live)
        best = best.at[row].min(jnp.where(ok, slot, MAX_LEGAL_MOVES))
        return start + n, best

    _, best = jax.lax.while_loop(lambda c: c[0] < total, round_,
                                 (jnp.int32(0), jnp.full(n, MAX_LEGAL_MOVES, jnp.int32)))
    return jnp.where(best < MAX_LEGAL_MOVES, best, -1).astype(jnp.int16)


def mating_slots(pos: PositionArrays, legal: jax.Array, num_legal: jax.Array,
                 check: jax.Array) -> jax.Array:
    """int16 [n]: for the rows ``check`` [n] asks about, the slot of the first legal move
    (ascending index) that mates at once; -1 if none (and for the other rows). Only
    the moves that may give check (``check_candidates``) are played out, the batch's
    together (``_first_passing``)."""
    candidates = jax.vmap(check_candidates)(pos, legal, num_legal) & check[:, None]
    return _first_passing(pos, legal, candidates,
                          lambda parent, move, live: jax.vmap(is_checkmate_after)(parent, move))


def _children(parents: PositionArrays, moves: jax.Array) -> Described:
    return jax.vmap(describe)(jax.vmap(lambda p, m: apply_move(p, m).child)(parents, moves))


def _forces_mate(parent: PositionArrays, move: jax.Array, live: jax.Array) -> jax.Array:
    """bool [n]: ``move`` [n] gives check and every reply allows a mate in one (a reply
    that reaches the 50-move limit defends). The replies are tried in turn, each lane
    stopping at its first defence (``mating_slots`` on the replies)."""
    child = _children(parent, move)
    replies = child.legal
    num = child.num_legal.astype(jnp.int32)

    def more(c):
        j, forced = c
        return jnp.any(forced & (j < num))

    def reply(c):
        j, forced = c
        trying = forced & (j < num)
        after = _children(child.position, jnp.maximum(
            replies[:, jnp.minimum(j, MAX_LEGAL_MOVES - 1)], 0))
        mate = mating_slots(after.position, after.legal, after.num_legal,
                            trying & (after.position.rule50 < 100)) >= 0
        return j + 1, forced & (~trying | mate)

    forced = live & child.in_check & (num > 0)
    return jax.lax.while_loop(more, reply, (jnp.int32(0), forced))[1]


def checking_mates_in_two(pos: PositionArrays, legal: jax.Array, num_legal: jax.Array,
                          ask: jax.Array) -> jax.Array:
    """int16 [n]: for the rows ``ask`` [n] asks about, the slot of the first legal move
    (ascending index) that gives check and after which every reply allows a mate in one
    (a reply that reaches the 50-move limit is a defence); -1 if none. The host's
    ``rules.checking_mate_in_two``. A round of the batch's checks (``_first_passing``)
    costs as many reply searches as its most stubborn check allows."""
    candidates = jax.vmap(check_candidates)(pos, legal, num_legal) & ask[:, None]
    return _first_passing(pos, legal, candidates, _forces_mate)


def root_mate_slots(pos: PositionArrays, legal: jax.Array, num_legal: jax.Array,
                    ask: jax.Array) -> jax.Array:
    """int16 [n]: the mate check at roots (the host's ``backend.root_mate_slot``): the
    first move that mates at once, else the first check that forces a mate in two
    (``checking_mates_in_two``, tried only where no mate in one exists); -1 if none."""
    mate = mating_slots(pos, legal, num_legal, ask)
    two = ask & (mate < 0)
    return jax.lax.cond(
        jnp.any(two), lambda: jnp.where(
            two, checking_mates_in_two(pos, legal, num_legal, two), mate).astype(jnp.int16),
        lambda: mate)


def expand_one(parent: PositionArrays, move: jax.Array) -> Expansion:
    """One row of ``expand`` without the mate check (unbatched)."""
    with jax.named_scope("expand"):
        child = apply_move(parent, move).child
    with jax.named_scope("legality"):
        d = describe(child)
    return Expansion(child=d.position, legal=d.legal, num_legal=d.num_legal, status=d.status,
                     mate_slot=jnp.int16(-1))


def expand(parent: PositionArrays, move: jax.Array, mate_check: jax.Array | None = None,
           mask: jax.Array | None = None) -> Expansion:
    """``_expand`` in the named scope ``rules``."""
    with jax.named_scope("rules"):
        return _expand(parent, move, mate_check, mask)


def _expand(parent: PositionArrays, move: jax.Array, mate_check: jax.Array | None = None,
            mask: jax.Array | None = None) -> Expansion:
    """Play ``move[i]`` in ``parent[i]`` and describe each child (any leading shape).

    Args:
      parent: positions [...] (``ep`` -1 or a legal en-passant square).
      move: int [...] lc0 1858 indices in the mover's frame (legal: not checked here), or
        -1: "no move, describe the parent itself".
      mate_check: bool [...] rows whose child is searched for a mate in one, or None.
      mask: bool [...] rows to expand, or None (all); the others come back as
        ``Expansion.empty`` rows.

    Returns:
      ``Expansion`` [...] equal to the host expander's (``zerochess.chess.rules``).
    """
    shape = jnp.shape(move)
    flat = int(jnp.size(move))
    parent = jax.tree.map(lambda a: jnp.reshape(a, (flat, *jnp.shape(a)[len(shape):])), parent)
    move = jnp.reshape(move, (flat,)).astype(jnp.int32)
    check = (jnp.zeros((flat,), bool) if mate_check is None
             else jnp.reshape(mate_check, (flat,)).astype(bool))
    out = jax.vmap(expand_one)(parent, move)
    check = check & (out.status == GameStatus.ONGOING)

    with jax.named_scope("mate_check"):
        out = out._replace(mate_slot=jax.lax.cond(
            check.any(), lambda o: mating_slots(o.child, o.legal, o.num_legal, check),
            lambda o: o.mate_slot, out))
    if mask is not None:
        keep = jnp.reshape(mask, (flat,)).astype(bool)
        empty = Expansion(child=empty_positions(jnp, (flat,)),
                          legal=jnp.full((flat, MAX_LEGAL_MOVES), -1, jnp.int16),
                          num_legal=jnp.zeros((flat,), jnp.int16),
                          status=jnp.zeros((flat,), jnp.int8),
                          mate_slot=jnp.full((flat,), -1, jnp.int16))
        out = jax.tree.map(lambda a, e: jnp.where(keep.reshape((flat,) + (1,) * (a.ndim - 1)),
                                                  a, e), out, empty)
    return jax.tree.map(lambda a: a.reshape(*shape, *a.shape[1:]), out)


__all__ = ["check_candidates", "checking_mates_in_two", "expand", "expand_one", "mating_slots",
           "root_mate_slots"]
