"""Playing moves on ``PositionArrays`` and describing positions, on the device."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.device import movegen, tables
from zerochess.chess.types import (
    CASTLE_BK,
    CASTLE_BQ,
    CASTLE_FIELDS,
    CASTLE_WK,
    CASTLE_WQ,
    KING,
    KNIGHT,
    MAX_LEGAL_MOVES,
    PAWN,
    ROOK,
    GameStatus,
    PositionArrays,
)

_MIRROR = np.arange(64) ^ 56
_DARK = np.array([(sq // 8 + sq % 8) % 2 == 0 for sq in range(64)])


def mover_codes(board: jax.Array, white: jax.Array) -> jax.Array:
    """int8 [64] piece codes in the mover's frame: ranks mirrored and colours swapped when
    black is to move, so the side to move has codes 1..6 and plays up the board."""
    flipped = board[_MIRROR]
    swapped = jnp.where(flipped > 0, (flipped + 5) % 12 + 1, 0).astype(board.dtype)
    return jnp.where(white, board, swapped)


def castle_rooks(castling: jax.Array, white: jax.Array) -> jax.Array:
    """int32 [2] the mover's king-side and queen-side castling rook squares in its own
    frame (first rank), -1 where the right is absent."""
    castling = castling.astype(jnp.int32)

    def rook(bit: int, king_side: bool, shift: int) -> jax.Array:
        code = (castling >> shift) & 7
        file = 7 - code if king_side else code
        return jnp.where(castling & bit, file, -1)

    king_side = jnp.where(white, rook(CASTLE_WK, True, 4), rook(CASTLE_BK, True, 10))
    queen_side = jnp.where(white, rook(CASTLE_WQ, False, 7), rook(CASTLE_BQ, False, 13))
    return jnp.stack([king_side, queen_side]).astype(jnp.int32)


def _frame_square(square: jax.Array, white: jax.Array) -> jax.Array:
    square = square.astype(jnp.int32)
    return jnp.where(square < 0, -1, jnp.where(white, square, square ^ 56))


def generate(pos: PositionArrays, ep: jax.Array | None = None) -> movegen.Generated:
    """The legal moves of ``pos`` (``ep``: the en-passant square to consider, absolute
    frame; default ``pos.ep``)."""
    white = pos.turn == 1
    us, them = movegen.sides_from_codes(mover_codes(pos.board, white))
    ep = pos.ep if ep is None else ep
    return movegen.generate(us, them, castle_rooks(pos.castling, white), _frame_square(ep, white))


def targets(pos: PositionArrays, ep: jax.Array | None = None) -> movegen.Targets:
    """``generate`` without reading the moves out as indices (enough to tell whether any
    exists)."""
    white = pos.turn == 1
    us, them = movegen.sides_from_codes(mover_codes(pos.board, white))
    ep = pos.ep if ep is None else ep
    return movegen.targets(us, them, castle_rooks(pos.castling, white), _frame_square(ep, white))


class Played(NamedTuple):
    """A move applied to a position, before the child's en passant is checked."""

    child: PositionArrays  # ep holds the candidate square (any double push), not yet checked
    capture: jax.Array  # bool
    piece_type: jax.Array  # int32 1..6 of the moving piece


@jax.jit
def apply_move(pos: PositionArrays, move: jax.Array) -> Played:
    """Play lc0 move ``move`` (int, mover's frame; assumed legal) in ``pos``; a negative
    index plays nothing (the child is ``pos`` itself)."""
    board = pos.board
    white = pos.turn == 1
    played = move >= 0
    idx = jnp.maximum(move, 0).astype(jnp.int32)
    flip = jnp.where(white, 0, 56)
    frm = jnp.asarray(tables.FROM_SQUARE)[idx] ^ flip
    to = jnp.asarray(tables.TO_SQUARE)[idx] ^ flip
    promo = jnp.asarray(tables.PROMOTION)[idx]
    piece = board[frm].astype(jnp.int32)
    target = board[to].astype(jnp.int32)
    offset = jnp.where(white, 0, 6)
    piece_type = piece - offset
    own_target = (target > offset) & (target <= offset + 6)
    is_castle = (piece_type == KING) & own_target & (target - offset == ROOK)
    is_pawn = piece_type == PAWN
    ep_capture = is_pawn & (to == pos.ep) & (frm % 8 != to % 8)
    last_rank = (to // 8 == 0) | (to // 8 == 7)
    promo_type = jnp.where(is_pawn & last_rank, jnp.where(promo == 0, KNIGHT, promo), 0)
    new_piece = jnp.where(promo_type > 0, promo_type + offset, piece)
    captured_pawn = jnp.where(white, to - 8, to + 8)
    rank = frm // 8
    king_side = to > frm
    king_to = rank * 8 + jnp.where(king_side, 6, 2)
    rook_to = rank * 8 + jnp.where(king_side, 5, 3)

    sq = jnp.arange(64)
    new = jnp.where(sq == frm, 0, board.astype(jnp.int32))
    new = jnp.where(sq == to, jnp.where(is_castle, 0, new_piece), new)
    new = jnp.where(ep_capture & (sq == captured_pawn), 0, new)
    new = jnp.where(is_castle & (sq == king_to), piece, new)
    new = jnp.where(is_castle & (sq == rook_to), offset + ROOK, new)
    new = jnp.where(played, new, board.astype(jnp.int32)).astype(board.dtype)

    castling = pos.castling.astype(jnp.int32)
    for bit, rook_rank, king_side_right, shift in CASTLE_FIELDS:
        code = (castling >> shift) & 7
        rook_sq = rook_rank * 8 + jnp.where(king_side_right, 7 - code, code)
        mover_right = (rook_rank == 0) == white
        gone = (castling & bit != 0) & ((frm == rook_sq) | (to == rook_sq)
                                        | ((piece_type == KING) & mover_right))
        castling = jnp.where(gone, castling & ~(bit | (7 << shift)), castling)
    castling = jnp.where(played, castling, pos.castling.astype(jnp.int32))

    capture = (~own_target & (target != 0) & ~is_castle) | ep_capture
    double_push = is_pawn & (jnp.abs(to - frm) == 16)
    child = PositionArrays(
        board=new,
        turn=jnp.where(played, 1 - pos.turn, pos.turn).astype(pos.turn.dtype),
        castling=castling.astype(pos.castling.dtype),
        ep=jnp.where(played, jnp.where(double_push, (frm + to) // 2, -1),
                     pos.ep).astype(pos.ep.dtype),
        rule50=jnp.where(played, jnp.where(is_pawn | capture, 0, pos.rule50 + 1),
                         pos.rule50).astype(pos.rule50.dtype),
        fullmove=jnp.where(played & ~white, pos.fullmove + 1, pos.fullmove).astype(
            pos.fullmove.dtype),
    )
    return Played(child=child, capture=played & capture, piece_type=piece_type)


def insufficient_material(board: jax.Array) -> jax.Array:
    """bool: neither side can mate (python-chess's ``is_insufficient_material``)."""
    codes = board.astype(jnp.int32)
    count = jnp.sum(codes[None, :] == jnp.arange(13)[:, None], axis=1)  # [13] by code
    bishops = (codes == 3) | (codes == 9)
    bishops_one_colour = ~jnp.any(bishops & _DARK) | ~jnp.any(bishops & ~_DARK)
    pawns = count[1] + count[7]
    knights = count[2] + count[8]

    def side(own: int, other: int) -> jax.Array:
        heavy = count[own + 1] + count[own + 4] + count[own + 5]  # P, R, Q
        own_pieces = jnp.sum(count[own + 1:own + 7])
        other_minor_or_more = (count[other + 1] + count[other + 2] + count[other + 3]
                               + count[other + 4])  # P, N, B, R
        with_knight = (own_pieces <= 2) & (other_minor_or_more == 0)
        with_bishop = bishops_one_colour & (pawns == 0) & (knights == 0)
        return (heavy == 0) & jnp.where(count[own + 2] > 0, with_knight,
                                        jnp.where(count[own + 3] > 0, with_bishop, True))

    return side(0, 6) & side(6, 0)


_POW2 = (np.uint64(1) << np.arange(32, dtype=np.uint64)).astype(np.uint32)


def compact(mask: jax.Array, size: int = MAX_LEGAL_MOVES) -> tuple[jax.Array, jax.Array]:
    """The set entries of a bool mask [M] as a list: (int16 [size] ascending positions,
    -1 padded; int32 count of set entries).

    Gathers, no scatter (XLA:CPU runs a scatter of M entries one by one): the mask is
    packed into M / 32 words; entry j of the list lies in the first word whose running
    popcount passes j (a binary search over the words), at the bit where the word's
    popcount below it reaches j's rank in the word (a binary search over 5 bit widths)."""
    words_n = -(-mask.shape[0] // 32)
    bits = jnp.pad(mask, (0, 32 * words_n - mask.shape[0])).reshape(words_n, 32)
    words = jax.lax.reduce(jnp.where(bits, jnp.asarray(_POW2), jnp.uint32(0)), np.uint32(0),
                           jax.lax.bitwise_or, (1,))
    count = jax.lax.population_count(words).astype(jnp.int32)
    running = jnp.cumsum(count)  # set entries up to and including each word
    j = jnp.arange(size, dtype=jnp.int32)
    w = jnp.minimum(jnp.searchsorted(running, j, side="right", method="scan"),
                    words_n - 1).astype(jnp.int32)
    word = words[w]
    rank = j - (running[w] - count[w])  # set entries of the word before entry j
    low = jnp.zeros(size, jnp.uint32)
    for width in (16, 8, 4, 2, 1):
        wider = low + jnp.uint32(width)
        below = word & ((jnp.uint32(1) << wider) - jnp.uint32(1))
        low = jnp.where(jax.lax.population_count(below).astype(jnp.int32) <= rank, wider, low)
    total = running[-1]
    place = (32 * w + low.astype(jnp.int32)).astype(jnp.int16)
    return jnp.where(j < total, place, jnp.int16(-1)), total


class Described(NamedTuple):
    """A position with its legal moves (one row of an ``Expansion`` but the mate check)."""

    position: PositionArrays  # ep: the legal en-passant square or -1
    legal: jax.Array  # int16 [218] ascending 1858 indices, -1 padded
    num_legal: jax.Array  # int16
    status: jax.Array  # int8 GameStatus (never REPETITION)
    in_check: jax.Array  # bool


@jax.jit
def describe(pos: PositionArrays) -> Described:
    """The legal moves and status of ``pos``, whose ``ep`` may be any candidate square
    (it is kept only if an en-passant capture onto it is legal)."""
    gen = generate(pos)
    position = pos._replace(ep=jnp.where(gen.ep_legal, pos.ep, -1).astype(pos.ep.dtype))
    legal, num_legal = compact(gen.mask)
    status = jnp.where(
        num_legal == 0, jnp.where(gen.in_check, GameStatus.CHECKMATE, GameStatus.STALEMATE),
        jnp.where(insufficient_material(pos.board), GameStatus.INSUFFICIENT,
                  jnp.where(pos.rule50 >= 100, GameStatus.RULE50, GameStatus.ONGOING)))
    return Described(position=position, legal=legal, num_legal=num_legal.astype(jnp.int16),
                     status=status.astype(jnp.int8), in_check=gen.in_check)


def play(pos: PositionArrays, move: jax.Array) -> PositionArrays:
    """The child of ``pos`` after lc0 move ``move`` (legal; mover's frame), its ``ep`` set
    only when an en-passant capture is legal there."""
    child = apply_move(pos, move).child
    ep_legal = targets(child).ep_legal
    return child._replace(ep=jnp.where(ep_legal, child.ep, -1).astype(child.ep.dtype))


def is_checkmate_after(pos: PositionArrays, move: jax.Array) -> jax.Array:
    """bool: ``move`` (legal in ``pos``) mates at once."""
    t = targets(apply_move(pos, move).child)
    return t.in_check & ~t.any()


__all__ = ["Described", "Played", "apply_move", "castle_rooks", "describe", "generate",
           "insufficient_material", "is_checkmate_after", "mover_codes", "play", "targets"]
