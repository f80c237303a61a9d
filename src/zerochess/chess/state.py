"""Compact fixed-size position arrays shared by the host rules and the device tree.

One position is a handful of small integer fields (``PositionArrays``); a batch
just adds leading dimensions. Squares use python-chess numbering (a1 = 0,
rank-major) in the absolute (white) frame.

Piece codes: 0 empty, 1..6 white P N B R Q K, 7..12 black P N B R Q K
(``piece_type + 6 * (color == BLACK)``).

Castling bits: 1 white king side (h1 rook), 2 white queen side, 4 black king
side, 8 black queen side.

``ep`` holds the en-passant target square only when an en-passant capture is
legal (python-chess's transposition-key rule), else -1; so two positions are the
same for repetition exactly when all fields but ``rule50``/``fullmove`` match.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import chess
import numpy as np

EMPTY = 0
NUM_PIECE_CODES = 13

CASTLE_WK, CASTLE_WQ, CASTLE_BK, CASTLE_BQ = 1, 2, 4, 8
_CASTLE_ROOK_SQUARES = ((CASTLE_WK, chess.H1), (CASTLE_WQ, chess.A1), (CASTLE_BK, chess.H8),
                        (CASTLE_BQ, chess.A8))


class PositionArrays(NamedTuple):
    """A position (or a batch of them, with leading dims) as fixed-size arrays."""

    board: Any  # int8 [..., 64] piece codes
    turn: Any  # int8 [...], 1 white to move, 0 black
    castling: Any  # int8 [...], CASTLE_* bits
    ep: Any  # int8 [...], legal en-passant target square or -1
    rule50: Any  # int16 [...], halfmove clock
    fullmove: Any  # int16 [...], fullmove number


def empty_positions(xp: Any, shape: tuple[int, ...]) -> PositionArrays:
    """Placeholder positions of batch ``shape`` (``xp`` = numpy or jax.numpy): an empty
    board, black to move, no castling rights, no en passant, rule50 0, move 1."""
    return PositionArrays(
        board=xp.zeros((*shape, 64), xp.int8),
        turn=xp.zeros(shape, xp.int8),
        castling=xp.zeros(shape, xp.int8),
        ep=xp.full(shape, -1, xp.int8),
        rule50=xp.zeros(shape, xp.int16),
        fullmove=xp.ones(shape, xp.int16),
    )


def piece_code(piece: chess.Piece | None) -> int:
    if piece is None:
        return EMPTY
    return piece.piece_type + (6 if piece.color == chess.BLACK else 0)


def legal_ep_square(board: chess.Board) -> int:
    return board.ep_square if board.ep_square is not None and board.has_legal_en_passant() else -1


def castling_bits(board: chess.Board) -> int:
    rights = board.clean_castling_rights()
    return sum(bit for bit, sq in _CASTLE_ROOK_SQUARES if rights & chess.BB_SQUARES[sq])


_CODE_WEIGHTS = np.arange(1, 13, dtype=np.int8)[:, None]


def board_codes(board: chess.Board) -> np.ndarray:
    """int8 [64] piece codes of ``board`` (from its bitboards, no per-square Python loop)."""
    white, black = board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK]
    masks = (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings)
    bbs = np.array([m & white for m in masks] + [m & black for m in masks], dtype="<u8")
    bits = np.unpackbits(bbs.view(np.uint8).reshape(12, 8), axis=1, bitorder="little")
    return (bits.astype(np.int8) * _CODE_WEIGHTS).sum(axis=0, dtype=np.int8)


def from_board(board: chess.Board) -> PositionArrays:
    """The compact arrays (numpy scalars/[64]) of one python-chess board."""
    return PositionArrays(
        board=board_codes(board),
        turn=np.int8(board.turn),
        castling=np.int8(castling_bits(board)),
        ep=np.int8(legal_ep_square(board)),
        rule50=np.int16(board.halfmove_clock),
        fullmove=np.int16(board.fullmove_number),
    )


def stack(positions: list[PositionArrays]) -> PositionArrays:
    """Stack single positions into a batch along a new leading axis."""
    return PositionArrays(*(np.stack(f) for f in zip(*positions, strict=True)))


def to_board(pos: PositionArrays) -> chess.Board:
    """A python-chess board (no move history) from one position's arrays."""
    board = chess.Board(None)
    for sq in range(64):
        code = int(pos.board[sq])
        if code:
            color = chess.WHITE if code <= 6 else chess.BLACK
            board.set_piece_at(sq, chess.Piece(code - (0 if code <= 6 else 6), color))
    board.turn = bool(pos.turn)
    castling = int(pos.castling)
    board.castling_rights = 0
    for bit, sq in _CASTLE_ROOK_SQUARES:
        if castling & bit:
            board.castling_rights |= chess.BB_SQUARES[sq]
    board.ep_square = None if int(pos.ep) < 0 else int(pos.ep)
    board.halfmove_clock = int(pos.rule50)
    board.fullmove_number = int(pos.fullmove)
    return board


# --- Zobrist-style hashing, identical in numpy and jax.numpy --------------------------------

def _zobrist_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0x5EC7C0DE)
    pieces = rng.integers(0, 2**32, size=(64, NUM_PIECE_CODES, 2), dtype=np.uint32)
    pieces[:, EMPTY] = 0
    turn = rng.integers(0, 2**32, size=(2, 2), dtype=np.uint32)
    turn[0] = 0
    castling = rng.integers(0, 2**32, size=(16, 2), dtype=np.uint32)
    castling[0] = 0
    ep = rng.integers(0, 2**32, size=(65, 2), dtype=np.uint32)
    ep[64] = 0  # index 64 == no en passant (ep = -1)
    return pieces, turn, castling, ep


ZOBRIST_PIECES, ZOBRIST_TURN, ZOBRIST_CASTLING, ZOBRIST_EP = _zobrist_tables()


def position_hash(xp: Any, board: Any, turn: Any, castling: Any, ep: Any) -> Any:
    """64-bit position key as uint32 [..., 2]; works with ``xp`` = numpy or jax.numpy.

    Equal keys mean equal board, side to move, castling rights and legal en passant
    (the repetition identity); rule50 and move number are not part of it.
    """
    squares = xp.arange(64)
    words = xp.asarray(ZOBRIST_PIECES)[squares, board.astype(xp.int32)]  # [..., 64, 2]
    if xp is np:
        acc = np.bitwise_xor.reduce(words, axis=-2)
    else:
        acc = words[..., 0, :]
        for i in range(1, 64):
            acc = acc ^ words[..., i, :]
    acc = acc ^ xp.asarray(ZOBRIST_TURN)[turn.astype(xp.int32)]
    acc = acc ^ xp.asarray(ZOBRIST_CASTLING)[castling.astype(xp.int32) & 15]
    ep_i = xp.where(ep < 0, 64, ep).astype(xp.int32)
    return acc ^ xp.asarray(ZOBRIST_EP)[ep_i]
