"""Draw claims on the device: may the side to move claim a draw, as python-chess decides
(``Board.can_claim_fifty_moves()``, then ``Board.can_claim_threefold_repetition()``)?"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from zerochess.chess.device import tables
from zerochess.chess.device.position import apply_move, castle_rooks, targets
from zerochess.chess.keys import ZOBRIST_EP, ZOBRIST_PIECES, ZOBRIST_TURN
from zerochess.chess.types import KING, PAWN, GameStatus, PositionArrays


class _Moves(NamedTuple):
    """What a draw claim needs of a position's legal moves."""

    non_zeroing: jax.Array  # bool [218]: legal, neither a pawn move nor a capture
    child_keys: jax.Array  # uint32 [218, 2]: the child's key (valid where ``quiet``)
    quiet: jax.Array  # bool [218]: non-zeroing and keeps every castling right


def _quiet_moves(pos: PositionArrays, legal: jax.Array, key: jax.Array) -> _Moves:
    """Classify the legal moves of ``pos`` (key ``key``); key the quiet ones' children.

    Only a quiet move (not a pawn move, not a capture, no castling right lost, so not
    castling either) can lead to a position of the repetition window (the positions since
    the last pawn move or capture): a pawn move or capture changes the pawns or the
    material for good, and the positions of the window had every castling right the
    position has, so a child that lost one matches none of them. After a quiet move only
    the moved piece's two squares, the side to move and the en-passant term change (no
    en passant is legal after a move that is not a double push), so the child's key is
    the position's key xor those terms.
    """
    white = pos.turn == 1
    flip = jnp.where(white, 0, 56)
    idx = jnp.maximum(legal, 0).astype(jnp.int32)  # [218]
    frm_own = jnp.asarray(tables.FROM_SQUARE)[idx]  # [218] mover's frame
    frm = frm_own ^ flip  # [218] absolute
    to = jnp.asarray(tables.TO_SQUARE)[idx] ^ flip  # [218]
    piece = pos.board[frm].astype(jnp.int32)  # [218] piece code of the mover
    target = pos.board[to].astype(jnp.int32)  # [218]
    offset = jnp.where(white, 0, 6)
    enemy_target = (target > 0) & ((target <= offset) | (target > offset + 6))
    # castling (king onto its own rook in lc0's moves) is non-zeroing, as in python-chess
    non_zeroing = (legal >= 0) & (piece - offset != PAWN) & ~enemy_target  # [218]
    rooks = castle_rooks(pos.castling, white)  # [2] first-rank squares, -1: no right
    loses_right = (((piece - offset == KING) & jnp.any(rooks >= 0))
                   | jnp.any(frm_own[:, None] == rooks[None, :], axis=1))  # [218]
    quiet = non_zeroing & (target == 0) & ~loses_right  # [218]

    z_pieces = jnp.asarray(ZOBRIST_PIECES)
    ep_index = jnp.where(pos.ep < 0, 64, pos.ep).astype(jnp.int32)
    # the turn term: ZOBRIST_TURN[0] is 0, so either side's move xors ZOBRIST_TURN[1]
    fixed = key ^ jnp.asarray(ZOBRIST_TURN)[1] ^ jnp.asarray(ZOBRIST_EP)[ep_index]  # [2]
    child_keys = fixed[None, :] ^ z_pieces[frm, piece] ^ z_pieces[to, piece]  # [218, 2]
    return _Moves(non_zeroing=non_zeroing, child_keys=child_keys, quiet=quiet)


def _twice(keys: jax.Array, within: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The keys that occur at least twice among the rows of ``keys`` [R, 2] where
    ``within`` [R]: each listed once, at its second occurrence in row order (uint32
    [R // 2, 2], and bool [R // 2] the valid entries; at most R // 2 keys occur twice)."""
    same = jnp.all(keys[:, None] == keys[None, :], axis=-1) & within[None, :]  # [R, R]
    before = jnp.sum(jnp.tril(same, -1), axis=1, dtype=jnp.int32)  # [R] equal earlier rows
    second = within & (before == 1)  # [R]
    size = keys.shape[0] // 2
    rows = jnp.nonzero(second, size=size, fill_value=0)[0]  # [R // 2]
    return keys[rows], jnp.arange(size) < jnp.sum(second, dtype=jnp.int32)


def _threefold(keys: jax.Array, num_keys: jax.Array, rule50: jax.Array,
               moves: _Moves) -> jax.Array:
    """bool: python-chess's ``can_claim_threefold_repetition``: the position occurs for the
    third time, or a move makes some position occur for the third time.

    Its window is the position and those before it back to the last irreversible move;
    here back to the last pawn move or capture (``rule50`` plies). Positions of the wider
    window match neither the position nor its quiet children: those before a lost castling
    right have more rights, and one with a legal en-passant capture directly follows a
    double push, so it opens the window (and python-chess leaves it out: no difference).
    The side to move is part of a key, so the position is compared with the even rows of
    ``keys`` (itself included), its children with the keys that occur twice among the odd
    rows (a short list: cheaper than counting each child's occurrences).
    """
    row = jnp.arange(keys.shape[0])  # [101]
    within = (row <= rule50) & (row < num_keys)  # [101]
    now = jnp.sum(within[0::2] & jnp.all(keys[0::2] == keys[0], axis=-1), dtype=jnp.int32)
    twice, valid = _twice(keys[1::2], within[1::2])  # [25, 2], [25]
    child = moves.child_keys  # [218, 2]
    equal = ((child[:, None, 0] == twice[None, :, 0]) & (child[:, None, 1] == twice[None, :, 1])
             & valid[None, :])  # [218, 25]
    return (now >= 3) | jnp.any(moves.quiet[:, None] & equal)


def _fifty_after(pos: PositionArrays, legal: jax.Array, non_zeroing: jax.Array,
                 needed: jax.Array) -> jax.Array:
    """bool: where ``needed``, some legal non-zeroing move leads to a position with a legal
    move (at a clock of 99 the child's clock is 100: ``is_fifty_moves()`` holds there).

    The moves are tried in order, stopping at the first that does (almost always the first
    tried); where not ``needed``, none is tried: the loop is the branch a ``lax.cond``
    would take, and it stays as cheap under ``vmap`` (which would turn a ``lax.cond``
    into a select running both branches)."""

    def more(carry: tuple[jax.Array, jax.Array]) -> jax.Array:
        untried, found = carry
        return jnp.any(untried) & ~found

    def step(carry: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        untried, _ = carry
        slot = jnp.argmax(untried)  # the first untried non-zeroing move
        child = apply_move(pos, legal[slot]).child  # its ep: -1 (no double push)
        return untried.at[slot].set(False), targets(child).any()

    return jax.lax.while_loop(more, step, (non_zeroing & needed, jnp.asarray(False)))[1]


class _Parts(NamedTuple):
    fifty_now: jax.Array  # bool: ``is_fifty_moves()``
    fifty_needed: jax.Array  # bool: clock >= 99 and not fifty_now (try the children)
    threefold: jax.Array  # bool
    non_zeroing: jax.Array  # bool [218]


def _parts(pos: PositionArrays, legal: jax.Array, num_legal: jax.Array, keys: jax.Array,
           num_keys: jax.Array) -> _Parts:
    moves = _quiet_moves(pos, legal, keys[0])
    fifty_now = (pos.rule50 >= 100) & (num_legal > 0)
    return _Parts(fifty_now=fifty_now, fifty_needed=(pos.rule50 >= 99) & ~fifty_now,
                  threefold=_threefold(keys, num_keys, pos.rule50, moves),
                  non_zeroing=moves.non_zeroing)


def _status(fifty: jax.Array, threefold: jax.Array) -> jax.Array:
    return jnp.where(fifty, GameStatus.RULE50,
                     jnp.where(threefold, GameStatus.REPETITION, GameStatus.ONGOING)
                     ).astype(jnp.int8)


def draw_claim(pos: PositionArrays, legal: jax.Array, num_legal: jax.Array,
               keys: jax.Array, num_keys: jax.Array) -> jax.Array:
    """Whether the side to move may claim a draw, for ONE position (vmap it, or use
    ``draw_claims``, for batches).

    Args:
      pos: ``PositionArrays`` of one position (``ep``: the legal en-passant square or -1).
      legal: int16 [218] its legal moves as lc0 indices (mover's frame), ascending, -1
        padded; ``num_legal``: int32 their count (``zerochess.chess.device.legal_moves``).
      keys: uint32 [101, 2] the game's repetition keys (``position_hash``), this
        position's first, then the positions before it, newest first; ``num_keys``: int32
        the valid rows (at least 1). ``zerochess.env.State.keys`` / ``.num_keys``.

    Returns:
      int8 ``GameStatus``: ``RULE50`` if python-chess's ``can_claim_fifty_moves()`` holds,
      else ``REPETITION`` if ``can_claim_threefold_repetition()`` holds, else ``ONGOING``.
      Neither looks at checkmate, stalemate or insufficient material (python-chess's
      claims do not), except that a fifty-move claim needs a legal move.
    """
    p = _parts(pos, legal, num_legal, keys, num_keys)
    fifty_after = _fifty_after(pos, legal, p.non_zeroing, p.fifty_needed)
    return _status(p.fifty_now | fifty_after, p.threefold)


def draw_claims(pos: PositionArrays, legal: jax.Array, num_legal: jax.Array,
                keys: jax.Array, num_keys: jax.Array) -> jax.Array:
    """``draw_claim`` for a batch [B]: int8 [B] (arguments with a leading batch dimension).

    The children of a clock of 99 are tried only when some position of the batch has
    one (an unbatched ``lax.cond``), and then only for those positions."""
    p = jax.vmap(_parts)(pos, legal, num_legal, keys, num_keys)
    fifty_after = jax.lax.cond(
        jnp.any(p.fifty_needed),
        lambda: jax.vmap(_fifty_after)(pos, legal, p.non_zeroing, p.fifty_needed),
        lambda: jnp.zeros_like(p.fifty_needed))  # [B]
    return _status(p.fifty_now | fifty_after, p.threefold)


__all__ = ["draw_claim", "draw_claims"]
