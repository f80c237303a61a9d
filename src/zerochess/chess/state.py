"""python-chess boards <-> the compact position arrays (``zerochess.chess.types``)."""

from __future__ import annotations

import functools

import chess
import numpy as np

from zerochess.chess.keys import (  # noqa: F401 - re-exported (the old import path)
    ZOBRIST_CASTLING,
    ZOBRIST_EP,
    ZOBRIST_PIECES,
    ZOBRIST_ROOK_FILES,
    ZOBRIST_TURN,
    position_hash,
)
from zerochess.chess.types import (  # noqa: F401 - re-exported (the old import path)
    CASTLE_BK,
    CASTLE_BQ,
    CASTLE_RIGHTS,
    CASTLE_WK,
    CASTLE_WQ,
    EMPTY,
    NUM_PIECE_CODES,
    PositionArrays,
    empty_positions,
)

# (right, colour, king side?, shift of its rook's file code)
_CASTLE_FIELDS = ((CASTLE_WK, chess.WHITE, True, 4), (CASTLE_WQ, chess.WHITE, False, 7),
                  (CASTLE_BK, chess.BLACK, True, 10), (CASTLE_BQ, chess.BLACK, False, 13))
# The halfmove clock and fullmove number are int32 (``zerochess.positions.MAX_COUNTER``
# bounds them at the input, so that the network's float32 rule50 plane stays exact).


def piece_code(piece: chess.Piece | None) -> int:
    if piece is None:
        return EMPTY
    return piece.piece_type + (6 if piece.color == chess.BLACK else 0)


def legal_ep_square(board: chess.Board) -> int:
    return board.ep_square if board.ep_square is not None and board.has_legal_en_passant() else -1


def castling_bits(board: chess.Board) -> int:
    """The castling field (rights and rook files, see docs/DESIGN.md) of ``board``."""
    rights = board.clean_castling_rights()
    if not rights:
        return 0
    kings = [board.king(chess.WHITE), board.king(chess.BLACK)]
    return _castling_bits(rights, *(-1 if k is None else k for k in kings))


@functools.lru_cache(maxsize=4096)
def _castling_bits(rights: int, white_king: int, black_king: int) -> int:
    # a game has a handful of distinct (rights, kings) triples: root preparation replays
    # whole games, and the vectorised field costs ~0.1 ms per single call
    return int(castling_fields(np.array([rights], np.uint64), np.array([white_king]),
                               np.array([black_king]))[0])


def castling_fields(rights: np.ndarray, white_king: np.ndarray,
                    black_king: np.ndarray) -> np.ndarray:
    """int32 [n] castling fields from python-chess castling-rights bitboards (the castling
    rooks' squares, already cleaned: at most one rook on each side of its king) uint64 [n]
    and the kings' squares int [n] (-1: none)."""
    rights = np.asarray(rights, np.uint64)
    out = np.zeros(rights.shape, np.int32)
    files = np.arange(8)
    for color_rank, king, (king_bit, king_shift), (queen_bit, queen_shift) in (
            (0, np.asarray(white_king), (CASTLE_WK, 4), (CASTLE_WQ, 7)),
            (7, np.asarray(black_king), (CASTLE_BK, 10), (CASTLE_BQ, 13))):
        rank_bits = ((rights >> np.uint64(8 * color_rank)) & np.uint64(0xFF)).astype(np.int64)
        present = (rank_bits[..., None] >> files) & 1  # [n, 8]
        on_rank = (king >= 0) & (king // 8 == color_rank)
        king_file = np.where(on_rank, king % 8, -1)[..., None]
        king_side = (present == 1) & (files > king_file) & on_rank[..., None]
        queen_side = (present == 1) & (files < king_file) & on_rank[..., None]
        k_file = np.max(np.where(king_side, files, -1), axis=-1)
        q_file = np.min(np.where(queen_side, files, 8), axis=-1)
        out |= np.where(k_file >= 0, king_bit | ((7 - k_file) << king_shift), 0).astype(np.int32)
        out |= np.where(q_file < 8, queen_bit | (q_file << queen_shift), 0).astype(np.int32)
    return out


def castling_rights_bitboard(castling: int) -> int:
    """python-chess's castling-rights bitboard (rook squares) of a castling field."""
    rights = 0
    for bit, color, king_side, shift in _CASTLE_FIELDS:
        if castling & bit:
            code = (castling >> shift) & 7
            file = 7 - code if king_side else code
            rights |= chess.BB_SQUARES[chess.square(file, 0 if color == chess.WHITE else 7)]
    return rights


def is_standard_castling(castling: int) -> bool:
    """Whether all castling rooks stand where standard chess has them (a- and h-files)."""
    return (castling >> 4) == 0


_CODE_WEIGHTS = np.arange(1, 13, dtype=np.int8)[:, None]


def piece_bitboards(board: chess.Board) -> tuple[int, ...]:
    """The 12 bitboards of ``board``'s pieces, in code order (white P..K, black P..K)."""
    white, black = board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK]
    masks = (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings)
    return tuple([m & white for m in masks] + [m & black for m in masks])


def codes_from_bitboards(bitboards: np.ndarray) -> np.ndarray:
    """int8 [..., 64] piece codes from ``piece_bitboards`` rows (uint64 [..., 12])."""
    bbs = np.ascontiguousarray(bitboards, dtype="<u8")
    lead = bbs.shape[:-1]
    bits = np.unpackbits(bbs.view(np.uint8).reshape(*lead, 12, 8), axis=-1, bitorder="little")
    return (bits.astype(np.int8) * _CODE_WEIGHTS).sum(axis=-2, dtype=np.int8)


def board_codes(board: chess.Board) -> np.ndarray:
    """int8 [64] piece codes of ``board`` (from its bitboards, no per-square Python loop)."""
    return codes_from_bitboards(np.array(piece_bitboards(board), dtype="<u8"))


def from_board(board: chess.Board) -> PositionArrays:
    """The compact arrays (numpy scalars/[64]) of one python-chess board."""
    return PositionArrays(
        board=board_codes(board),
        turn=np.int8(board.turn),
        castling=np.int32(castling_bits(board)),
        ep=np.int8(legal_ep_square(board)),
        rule50=np.int32(board.halfmove_clock),
        fullmove=np.int32(board.fullmove_number),
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
    board.chess960 = not is_standard_castling(castling)
    board.castling_rights = castling_rights_bitboard(castling)
    board.ep_square = None if int(pos.ep) < 0 else int(pos.ep)
    board.halfmove_clock = int(pos.rule50)
    board.fullmove_number = int(pos.fullmove)
    return board
