"""Host-side chess rules for batch expansion (numpy + python-chess, no jax)."""

from __future__ import annotations

from collections.abc import Sequence

import chess
import numpy as np

from zerochess.chess import policy_map
from zerochess.chess.state import castling_fields
from zerochess.chess.types import (  # noqa: F401 - GameStatus, Expansion re-exported
    CASTLE_BK,
    CASTLE_BQ,
    CASTLE_WK,
    CASTLE_WQ,
    Expansion,
    GameStatus,
    PositionArrays,
)

_K = policy_map.MAX_LEGAL_MOVES
_PIECE_CODES = np.arange(1, 13, dtype=np.int8)  # 1..6 white P..K, 7..12 black P..K
_TYPE_WEIGHTS = np.arange(1, 7, dtype=np.int8)[None, :, None]  # [1, 6, 1]


def _bitboards(board: np.ndarray) -> np.ndarray:
    """uint64 [n, 12] bitboards (white P..K, black P..K) of int8 piece codes [n, 64]."""
    onehot = board[:, None, :] == _PIECE_CODES[None, :, None]  # [n, 12, 64]
    packed = np.packbits(onehot, axis=-1, bitorder="little")  # [n, 12, 8]
    return np.ascontiguousarray(packed).view("<u8")[..., 0]


def _codes_from_bitboards(types: np.ndarray, white: np.ndarray) -> np.ndarray:
    """int8 [n, 64] piece codes from uint64 piece-type bitboards [n, 6] (P..K) and white [n]."""
    n = types.shape[0]
    bits = np.unpackbits(
        np.ascontiguousarray(types.astype("<u8")).view(np.uint8).reshape(n, 6, 8),
        axis=-1,
        bitorder="little",
    ).astype(np.int8)  # [n, 6, 64]
    type_code = (bits * _TYPE_WEIGHTS).sum(axis=1, dtype=np.int8)  # [n, 64]
    wbits = np.unpackbits(
        np.ascontiguousarray(white.astype("<u8")).view(np.uint8).reshape(n, 8),
        axis=-1,
        bitorder="little",
    ).astype(bool)
    return np.where((type_code > 0) & ~wbits, type_code + 6, type_code).astype(np.int8)


def _castling_bitboards(castling: np.ndarray) -> list[int]:
    """python-chess ``castling_rights`` bitboards (python ints) of castling fields [n]
    (``state.castling_rights_bitboard`` over a batch)."""
    c = castling.astype(np.int64)
    rights = np.zeros(c.shape, np.uint64)
    for bit, king_side, shift, rank in ((CASTLE_WK, True, 4, 0), (CASTLE_WQ, False, 7, 0),
                                        (CASTLE_BK, True, 10, 7), (CASTLE_BQ, False, 13, 7)):
        code = (c >> shift) & 7
        square = (7 - code if king_side else code) + 8 * rank
        rights |= np.where(c & bit, np.left_shift(np.uint64(1), square.astype(np.uint64)),
                           np.uint64(0))
    return rights.tolist()


def _king_squares(codes: np.ndarray, king_code: int) -> np.ndarray:
    """int [n]: the square of the king with piece code ``king_code`` (-1 if none)."""
    found = codes == king_code
    return np.where(found.any(axis=1), np.argmax(found, axis=1), -1)


def _decode_moves(
    parent: PositionArrays, move_index: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Absolute-frame python-chess (from, to, promotion) int arrays [n] for 1858 indices.

    Castling stays king-to-rook (the boards are played in python-chess's chess960 mode,
    which writes every castling move so); a pawn reaching the last rank without a
    promotion piece becomes a knight promotion. Rows with ``move_index < 0`` get zeros.
    Legality is checked later by python-chess.
    """
    n = move_index.shape[0]
    rows = np.arange(n)
    idx = np.where(move_index < 0, 0, move_index).astype(np.int64)
    flip = np.where(parent.turn.astype(bool), 0, 56)
    frm = policy_map.FROM_SQUARE[idx].astype(np.int64) ^ flip
    to = policy_map.TO_SQUARE[idx].astype(np.int64) ^ flip
    promo = policy_map.PROMOTION[idx].astype(np.int64)
    board = parent.board
    mover = board[rows, frm].astype(np.int64)
    white = parent.turn.astype(bool)
    mover_type = np.where(mover > 6, mover - 6, mover)
    own_mover = (mover > 0) & ((mover <= 6) == white)
    last_rank = (to // 8 == 0) | (to // 8 == 7)
    promo = np.where(own_mover & (mover_type == chess.PAWN) & last_rank & (promo == 0),
                     chess.KNIGHT, promo)
    valid = move_index >= 0
    return frm * valid, to * valid, promo * valid


def _checking_squares(board: chess.Board, king: int) -> tuple[list[int], int]:
    """Where each piece type of the side to move would give check to the king on ``king``
    (bitboards by piece type, index 1..6), and the side to move's pieces whose leaving
    their line to the king uncovers a check by one of its sliders (discovered checks)."""
    occ = board.occupied
    us = board.occupied_co[board.turn]
    diag = chess.BB_DIAG_ATTACKS[king][chess.BB_DIAG_MASKS[king] & occ]
    straight = (chess.BB_RANK_ATTACKS[king][chess.BB_RANK_MASKS[king] & occ]
                | chess.BB_FILE_ATTACKS[king][chess.BB_FILE_MASKS[king] & occ])
    squares = [0, chess.BB_PAWN_ATTACKS[not board.turn][king], chess.BB_KNIGHT_ATTACKS[king],
               diag, straight, diag | straight, 0]
    snipers = us & (((chess.BB_RANK_ATTACKS[king][0] | chess.BB_FILE_ATTACKS[king][0])
                     & (board.rooks | board.queens))
                    | (chess.BB_DIAG_ATTACKS[king][0] & (board.bishops | board.queens)))
    blockers = 0
    for sniper in chess.scan_reversed(snipers):
        between = chess.between(king, sniper) & occ
        if between and between & (between - 1) == 0 and between & us:
            blockers |= between
    return squares, blockers


def _gives_check(board: chess.Board, move: chess.Move, king: int, squares: list[int],
                 blockers: int) -> bool:
    """``board.gives_check(move)`` from ``_checking_squares`` (python-chess's own for
    castling, en passant and promotions)."""
    if move.promotion or board.is_castling(move) or board.is_en_passant(move):
        return board.gives_check(move)
    frm, to = move.from_square, move.to_square
    return bool(squares[board.piece_type_at(frm)] & chess.BB_SQUARES[to]) or bool(
        blockers & chess.BB_SQUARES[frm] and not chess.BB_RAYS[king][frm] & chess.BB_SQUARES[to])


def mating_move(board: chess.Board, moves: Sequence[chess.Move]) -> int:
    """The index in ``moves`` (``board``'s legal moves) of the first move that checkmates at
    once, -1 if none.

    Only moves that give check can mate, so only those are played: a move is a candidate
    when its piece lands on a square that attacks the enemy king, or leaves a line on
    which it alone shielded that king from one of its own sliders; castling, en passant
    and promotions (rare) are asked of python-chess's ``gives_check``."""
    king = board.king(not board.turn)
    if king is None:
        return -1
    squares, blockers = _checking_squares(board, king)
    for i, move in enumerate(moves):
        if _gives_check(board, move, king, squares, blockers):
            board.push(move)
            mate = not any(board.generate_legal_moves())
            board.pop()
            if mate:
                return i
    return -1


def checking_mate_in_two(board: chess.Board, moves: Sequence[chess.Move]) -> int:
    """The index in ``moves`` (``board``'s legal moves) of the first check after which
    every reply allows a mate in one (a forced mate in two that starts with a check);
    -1 if none. A reply that reaches the 50-move limit counts as a defence. Exact: every
    reply is played, and each of them searched with ``mating_move``."""
    king = board.king(not board.turn)
    if king is None:
        return -1
    squares, blockers = _checking_squares(board, king)
    for i, move in enumerate(moves):
        if not _gives_check(board, move, king, squares, blockers):
            continue
        board.push(move)
        replies = list(board.generate_legal_moves())
        forced = bool(replies)
        for reply in replies:
            board.push(reply)
            forced = (board.halfmove_clock < 100
                      and mating_move(board, list(board.generate_legal_moves())) >= 0)
            board.pop()
            if not forced:
                break
        board.pop()
        if forced:
            return i
    return -1


def _index_order(board: chess.Board, moves: Sequence[chess.Move]) -> np.ndarray:
    """The order that sorts ``moves`` (legal in ``board``, chess960 mode) by 1858 index."""
    flip = 0 if board.turn else 56
    idx = policy_map.index_array(np.array([m.from_square for m in moves]) ^ flip,
                                 np.array([m.to_square for m in moves]) ^ flip,
                                 np.array([m.promotion or 0 for m in moves]))
    return np.argsort(idx, kind="stable")


def expand_batch(parent: PositionArrays, move_index: np.ndarray,
                 mate_check: np.ndarray | None = None) -> Expansion:
    """Play ``move_index[i]`` in ``parent[i]`` and describe each child.

    Args:
      parent: batch of ``n`` positions (board int8[n,64], turn/ep int8[n],
        castling/rule50/fullmove int32[n]). ``ep`` may be -1 or the (legal) ep target square.
      move_index: int [n] lc0 1858 indices in the mover's frame, or -1 for "no move:
        describe the parent itself".
      mate_check: bool [n] rows whose child is searched for a mate in one of its side to
        move (``mating_move``; only where the game goes on), or None: no row.

    Returns:
      ``Expansion`` with the child arrays [n], legal int16 [n, 218] (ascending index),
      num_legal int16 [n],
      status int8 [n] (``GameStatus``; never ``REPETITION``) and mate_slot int16 [n].

    Raises:
      ValueError: if an index is out of range or not a legal move of its parent.
    """
    parent = PositionArrays(*(np.asarray(f) for f in parent))
    move_index = np.asarray(move_index).reshape(-1).astype(np.int64)
    n = move_index.shape[0]
    if parent.board.shape != (n, 64):
        raise ValueError(f"parent.board shape {parent.board.shape} != ({n}, 64)")
    bad = (move_index < -1) | (move_index >= policy_map.NUM_MOVES)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"policy index {int(move_index[i])} out of range in row {i}")

    bbs = _bitboards(parent.board.astype(np.int8))  # [n, 12]
    white_occ = np.bitwise_or.reduce(bbs[:, :6], axis=1)
    black_occ = np.bitwise_or.reduce(bbs[:, 6:], axis=1)
    types = (bbs[:, :6] | bbs[:, 6:]).tolist()
    white_l, black_l = white_occ.tolist(), black_occ.tolist()
    occ_l = (white_occ | black_occ).tolist()
    turn_l = parent.turn.astype(bool).tolist()
    rights_l = _castling_bitboards(parent.castling)
    ep_l = parent.ep.astype(np.int64).tolist()
    rule50_l = parent.rule50.astype(np.int64).tolist()
    fullmove_l = parent.fullmove.astype(np.int64).tolist()
    frm, to, promo = _decode_moves(parent, move_index)
    frm_l, to_l, promo_l, mi_l = frm.tolist(), to.tolist(), promo.tolist(), move_index.tolist()

    # Per-row outputs (python lists, converted once at the end).
    out_types: list[tuple[int, int, int, int, int, int]] = []
    out_white: list[int] = []
    out_turn: list[bool] = []
    out_rights: list[int] = []
    out_ep: list[int] = []
    out_rule50: list[int] = []
    out_fullmove: list[int] = []
    status = np.zeros(n, np.int8)
    mate_slot = np.full(n, -1, np.int16)
    check_l = (np.zeros(n, bool) if mate_check is None
               else np.asarray(mate_check, bool).reshape(n)).tolist()
    counts: list[int] = []
    mv_from: list[int] = []
    mv_to: list[int] = []
    mv_promo: list[int] = []

    # chess960 mode: castling moves are king-to-rook (lc0's form) and castling rooks may
    # stand on any file; for standard positions the legal moves are the same.
    b = chess.Board(None, chess960=True)
    occ_co = b.occupied_co
    move_cls = chess.Move
    for i in range(n):
        b.pawns, b.knights, b.bishops, b.rooks, b.queens, b.kings = types[i]
        occ_co[chess.WHITE] = white_l[i]
        occ_co[chess.BLACK] = black_l[i]
        b.occupied = occ_l[i]
        b.promoted = 0
        b.turn = turn_l[i]
        b.castling_rights = rights_l[i]
        b.ep_square = ep_l[i] if ep_l[i] >= 0 else None
        b.halfmove_clock = rule50_l[i]
        b.fullmove_number = fullmove_l[i]
        b.clear_stack()
        if mi_l[i] >= 0:
            move = move_cls(frm_l[i], to_l[i], promo_l[i] or None)
            if not b.is_legal(move):
                raise ValueError(
                    f"policy index {mi_l[i]} ({policy_map.MOVES[mi_l[i]]}) is not a legal move "
                    f"in {b.fen(en_passant='fen')} (row {i})"
                )
            b.push(move)
        else:
            b.castling_rights = b.clean_castling_rights()

        moves = list(b.generate_legal_moves())
        counts.append(len(moves))
        mv_from.extend([m.from_square for m in moves])
        mv_to.extend([m.to_square for m in moves])
        mv_promo.extend([m.promotion or 0 for m in moves])

        out_types.append((b.pawns, b.knights, b.bishops, b.rooks, b.queens, b.kings))
        out_white.append(occ_co[chess.WHITE])
        out_turn.append(b.turn)
        out_rights.append(b.castling_rights)
        out_ep.append(b.ep_square if b.ep_square is not None and b.has_legal_en_passant() else -1)
        out_rule50.append(b.halfmove_clock)
        out_fullmove.append(b.fullmove_number)
        if not moves:
            status[i] = GameStatus.CHECKMATE if b.is_check() else GameStatus.STALEMATE
        elif b.is_insufficient_material():
            status[i] = GameStatus.INSUFFICIENT
        elif b.halfmove_clock >= 100:
            status[i] = GameStatus.RULE50
        elif check_l[i]:
            mate_slot[i] = mating_move(b, [moves[k] for k in _index_order(b, moves)])

    types_a = np.array(out_types, np.uint64).reshape(n, 6)
    white_a = np.array(out_white, np.uint64).reshape(n)
    codes = _codes_from_bitboards(types_a, white_a)
    child_turn = np.array(out_turn, np.int8).reshape(n)
    child = PositionArrays(
        board=codes,
        turn=child_turn,
        castling=castling_fields(np.array(out_rights, np.uint64).reshape(n),
                                 _king_squares(codes, chess.KING),
                                 _king_squares(codes, chess.KING + 6)),
        ep=np.array(out_ep, np.int8).reshape(n),
        rule50=np.array(out_rule50, np.int32).reshape(n),
        fullmove=np.array(out_fullmove, np.int32).reshape(n),
    )

    counts_a = np.array(counts, np.int64).reshape(n)
    legal = np.full((n, _K), -1, np.int16)
    total = int(counts_a.sum())
    if total:
        row = np.repeat(np.arange(n), counts_a)
        f = np.array(mv_from, np.int64)
        t = np.array(mv_to, np.int64)
        p = np.array(mv_promo, np.int64)  # castling is already king-to-rook (chess960 mode)
        flip = np.where(child_turn[row] == 1, 0, 56)
        idx = policy_map.index_array(f ^ flip, t ^ flip, p)
        starts = np.cumsum(counts_a) - counts_a
        col = np.arange(total) - np.repeat(starts, counts_a)
        legal[row, col] = idx
        # one move order for every backend: ascending lc0 index (-1 padding stays last)
        legal = np.sort(legal.view(np.uint16), axis=1).view(np.int16)
    return Expansion(child=child, legal=legal, num_legal=counts_a.astype(np.int16), status=status,
                     mate_slot=mate_slot)
