"""lc0's 1858-move policy index, always in the mover's frame."""

from __future__ import annotations

from collections.abc import Iterable

import chess
import numpy as np

from zerochess.chess.types import MAX_LEGAL_MOVES, NUM_MOVES  # noqa: F401 - re-exported

_PROMO_PIECES = (chess.QUEEN, chess.ROOK, chess.BISHOP)
_PROMO_CHAR = {chess.QUEEN: "q", chess.ROOK: "r", chess.BISHOP: "b"}


def _build_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    frm, to, promo = [], [], []
    for sq in range(64):
        f, r = sq % 8, sq // 8
        targets = []
        for t in range(64):
            if t == sq:
                continue
            tf, tr = t % 8, t // 8
            df, dr = tf - f, tr - r
            queen_line = df == 0 or dr == 0 or abs(df) == abs(dr)
            knight = sorted((abs(df), abs(dr))) == [1, 2]
            if queen_line or knight:
                targets.append(t)
        for t in targets:
            frm.append(sq)
            to.append(t)
            promo.append(0)
    assert len(frm) == 1792
    for f in range(8):
        sq = 6 * 8 + f
        for tf in (f - 1, f, f + 1):
            if 0 <= tf < 8:
                for p in _PROMO_PIECES:
                    frm.append(sq)
                    to.append(7 * 8 + tf)
                    promo.append(p)
    assert len(frm) == NUM_MOVES
    frm_a = np.array(frm, np.int16)
    to_a = np.array(to, np.int16)
    promo_a = np.array(promo, np.int8)
    # INDEX[from, to, promo] with promo in {0 (none or knight), 1..? } keyed by piece type.
    index = np.full((64, 64, 7), -1, np.int16)
    for i, (a, b, p) in enumerate(zip(frm, to, promo, strict=True)):
        index[a, b, p] = i
    index[:, :, chess.KNIGHT] = index[:, :, 0]
    return frm_a, to_a, promo_a, index


FROM_SQUARE, TO_SQUARE, PROMOTION, _INDEX = _build_tables()
"""``FROM_SQUARE[i]``, ``TO_SQUARE[i]``: squares in the mover's frame; ``PROMOTION[i]``:
python-chess piece type (0 for none; a knight promotion uses the plain index)."""

MOVES: tuple[str, ...] = tuple(
    chess.square_name(int(a)) + chess.square_name(int(b)) + _PROMO_CHAR.get(int(p), "")
    for a, b, p in zip(FROM_SQUARE, TO_SQUARE, PROMOTION, strict=True)
)
"""lc0's move strings in the mover's frame, e.g. ``"e1h1"`` for white short castling."""


def index_array(from_sq: np.ndarray, to_sq: np.ndarray, promotion: np.ndarray) -> np.ndarray:
    """Vectorised lookup; squares already in the mover's frame, castling king-to-rook.

    Args:
      from_sq, to_sq: int arrays, any shape.
      promotion: python-chess piece type or 0, same shape.

    Returns:
      int16 policy indices (-1 where the move has no index).
    """
    return _INDEX[from_sq, to_sq, promotion]


def _castling_to_rook(board: chess.Board, move: chess.Move) -> int:
    """The target square of ``move`` with castling as king-to-rook."""
    if not board.is_castling(move):
        return move.to_square
    if board.rooks & board.occupied_co[board.turn] & chess.BB_SQUARES[move.to_square]:
        return move.to_square  # already king-to-rook (chess960 form)
    rank = chess.square_rank(move.from_square)
    file = 7 if chess.square_file(move.to_square) > chess.square_file(move.from_square) else 0
    return chess.square(file, rank)  # e1g1 / e1c1: the standard rooks


def move_to_index(board: chess.Board, move: chess.Move) -> int:
    """The 1858 index of a legal ``move`` in ``board`` (mover's frame)."""
    to_sq = _castling_to_rook(board, move)
    frm, to = move.from_square, to_sq
    if board.turn == chess.BLACK:
        frm, to = frm ^ 56, to ^ 56
    idx = int(_INDEX[frm, to, move.promotion or 0])
    if idx < 0:
        raise ValueError(f"move {move.uci()} has no lc0 policy index")
    return idx


def index_to_move(board: chess.Board, index: int) -> chess.Move:
    """The python-chess move for policy ``index`` in ``board``; raises if illegal."""
    if not 0 <= index < NUM_MOVES:
        raise ValueError(f"policy index {index} out of range [0, {NUM_MOVES})")
    frm, to, promo = int(FROM_SQUARE[index]), int(TO_SQUARE[index]), int(PROMOTION[index])
    if board.turn == chess.BLACK:
        frm, to = frm ^ 56, to ^ 56
    piece = board.piece_type_at(frm)
    if piece == chess.PAWN and chess.square_rank(to) in (0, 7) and not promo:
        promo = chess.KNIGHT
    if piece == chess.KING and board.piece_type_at(to) == chess.ROOK and board.color_at(
        to
    ) == board.turn:
        # king-to-rook castling: python-chess writes it so on chess960 boards, and as the
        # king's two-square move on standard boards
        move = chess.Move(frm, to)
        if not board.chess960:
            move = chess.Move(frm, chess.square(6 if to > frm else 2, chess.square_rank(frm)))
    else:
        move = chess.Move(frm, to, promo or None)
    if not board.is_legal(move):
        raise ValueError(f"policy index {index} ({MOVES[index]}) is not legal in {board.fen()}")
    return move


def indices_to_moves(board: chess.Board, indices: Iterable[int]) -> list[chess.Move]:
    """``index_to_move`` of many indices of one board: its legal moves are generated once
    and indexed (about 3x faster for a whole move list); raises as ``index_to_move``."""
    moves, legal = legal_move_indices(board)
    by_index = dict(zip(legal.tolist(), moves, strict=True))
    out = []
    for index in indices:
        move = by_index.get(int(index))
        out.append(move if move is not None else index_to_move(board, int(index)))
    return out


def legal_move_indices(board: chess.Board) -> tuple[list[chess.Move], np.ndarray]:
    """Legal moves of ``board`` in python-chess order and their 1858 indices."""
    moves = list(board.legal_moves)
    return moves, np.array([move_to_index(board, m) for m in moves], np.int16)


__all__ = ["MAX_LEGAL_MOVES", "MOVES", "NUM_MOVES", "index_array", "index_to_move",
           "indices_to_moves", "legal_move_indices", "move_to_index"]
