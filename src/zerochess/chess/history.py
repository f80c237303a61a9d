"""The game before a position, on the host: lc0's history slots, repetitions, and what a
search root keeps of its game (python-chess + numpy, no jax)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import NamedTuple

import chess
import numpy as np

from zerochess.chess.state import (
    board_codes,
    castling_bits,
    codes_from_bitboards,
    legal_ep_square,
    piece_bitboards,
    position_hash,
)
from zerochess.chess.types import (  # noqa: F401 - re-exported (the old import path)
    INPUT_POSITIONS,
    MAX_REPETITIONS,
    PAST_POSITIONS,
    REPETITION_WINDOW,
    RootHistory,
)

_START_CODES = board_codes(chess.Board())


def earlier_occurrences(key: Hashable, earlier: Sequence[Hashable], limit: int) -> tuple[int, int]:
    """How often a position occurred before, within the last ``limit`` plies.

    Args:
      key: the position's identity (any notion of equality).
      earlier: the identities of the positions before it, newest first: ``earlier[j - 1]``
        is the position ``j`` plies back.
      limit: plies to look back, the halfmove clock: an irreversible move lies further back.

    Returns:
      ``(count, nearest)``: the earlier occurrences (same side to move, so an even number
      of plies back) and the plies back to the nearest one (0 if none).
    """
    count = nearest = 0
    for j in range(2, min(int(limit), len(earlier)) + 1, 2):
        if earlier[j - 1] == key:
            count += 1
            nearest = nearest or j
    return count, nearest


# --- python-chess game history -> lc0 history slots ------------------------------------------

def _lc0_ep_file_after(board: chess.Board, move: chess.Move) -> int:
    """lc0's en-passant flag after ``move`` (played on ``board``): the file of a double
    pawn push when an enemy pawn stands next to the pushed pawn, else -1."""
    if board.piece_type_at(move.from_square) != chess.PAWN:
        return -1
    if abs(chess.square_rank(move.to_square) - chess.square_rank(move.from_square)) != 2:
        return -1
    to_file, to_rank = chess.square_file(move.to_square), chess.square_rank(move.to_square)
    enemy = chess.Piece(chess.PAWN, not board.turn)
    for df in (-1, 1):
        f = to_file + df
        if 0 <= f < 8 and board.piece_at(chess.square(f, to_rank)) == enemy:
            return to_file
    return -1


class _Replay(NamedTuple):
    """A game replayed from its root; per position, root first, current last."""

    codes: np.ndarray  # int8 [positions, 64] piece codes
    keys: list[tuple]  # lc0's equality key (codes bytes, turn, castling bits, ep flag file)
    rule50: list[int]
    turn: list[int]  # 1 White to move
    castling: list[int]  # the castling field (``state.castling_bits``)
    ep: list[int]  # python-chess's legal en-passant square (``state.legal_ep_square``)


def _game_positions(board: chess.Board) -> _Replay:
    """``board``'s game, root first (one pass; the piece codes of every position are
    unpacked from their bitboards at once). Walked back from ``board`` by taking moves
    back (python-chess restores each earlier position from its stack: cheaper than
    replaying the moves from the root)."""
    walk = board.copy()
    pieces, turn, castling, ep, rule50 = [], [], [], [], []
    flags = []  # lc0's en-passant flag of each position after the root, newest first
    while True:
        pieces.append(piece_bitboards(walk))
        turn.append(int(walk.turn))
        castling.append(castling_bits(walk))
        ep.append(legal_ep_square(walk))
        rule50.append(walk.halfmove_clock)
        if not walk.move_stack:
            break
        move = walk.pop()
        flags.append(_lc0_ep_file_after(walk, move))
    root_flag = -1 if walk.ep_square is None else chess.square_file(walk.ep_square)
    lc0_ep = [root_flag, *reversed(flags)]
    for column in (pieces, turn, castling, ep, rule50):
        column.reverse()
    codes = codes_from_bitboards(np.array(pieces, dtype="<u8"))
    keys = [(c.tobytes(), bool(t), k, f) for c, t, k, f in zip(codes, turn, castling, lc0_ep,
                                                                strict=True)]
    return _Replay(codes, keys, rule50, turn, castling, ep)


def _fill_board(root: chess.Board) -> np.ndarray | None:
    """lc0's FEN_ONLY fill for slots before the game start: None (zeros) when the
    game started from the standard start position, else the root's codes with the
    last double pawn push undone when the root carries an en-passant square."""
    codes = board_codes(root)
    is_startpos = (
        np.array_equal(codes, _START_CODES)
        and root.turn == chess.WHITE
        and castling_bits(root) == 15
        and root.ep_square is None
    )
    if is_startpos:
        return None
    if root.ep_square is not None:
        file = chess.square_file(root.ep_square)
        # The side that just moved is the one not to move at the root.
        if root.turn == chess.BLACK:  # white pushed f2-f4
            src, dst, pawn = chess.square(file, 1), chess.square(file, 3), 1
        else:  # black pushed f7-f5
            src, dst, pawn = chess.square(file, 6), chess.square(file, 4), 7
        if codes[dst] == pawn and codes[src] == 0:
            codes = codes.copy()
            codes[src], codes[dst] = pawn, 0
    return codes


def history_arrays(board: chess.Board) -> tuple[np.ndarray, np.ndarray]:
    """lc0's 8 history slots of ``board`` (a python-chess board with its ``move_stack``).

    Returns:
      boards: int8 ``[8, 64]`` absolute-frame piece codes, slot i = i plies ago
        (zeros or the FEN_ONLY fill before the game start).
      repeated: bool ``[8]``: the slot's position occurred earlier in the game (lc0's
        ``GetRepetitions() >= 1``, lc0's equality).
    """
    return _history_slots(board, _game_positions(board))


def _history_slots(board: chess.Board, game: _Replay) -> tuple[np.ndarray, np.ndarray]:
    codes, keys, rule50 = game.codes, game.keys, game.rule50
    fill = _fill_board(board.root())
    boards = np.zeros((INPUT_POSITIONS, 64), np.int8)
    repeated = np.zeros(INPUT_POSITIONS, bool)
    n = len(codes) - 1
    for i in range(INPUT_POSITIONS):
        idx = n - i
        if idx >= 0:
            boards[i] = codes[idx]
            repeated[i] = earlier_occurrences(keys[idx], keys[:idx][::-1], rule50[idx])[0] > 0
        elif fill is not None:
            boards[i] = fill
    return boards, repeated


def root_history(board: chess.Board) -> RootHistory:
    """What a search rooted at ``board`` needs to know about the game so far (see
    ``RootHistory``; ``boards``/``repeated`` are slots 1..7 of :func:`history_arrays`)."""
    game = _game_positions(board)
    boards, repeated = _history_slots(board, game)
    n = len(game.codes) - 1
    count = min(n, REPETITION_WINDOW)
    # the root, then the positions before it, newest first: one vectorised hash
    idx = np.arange(n, n - count - 1, -1)
    hashes = position_hash(np, game.codes[idx], np.asarray(game.turn)[idx],
                           np.asarray(game.castling)[idx],
                           np.asarray(game.ep)[idx])  # uint32 [count + 1, 2]
    keys = np.zeros((REPETITION_WINDOW, 2), np.uint32)
    keys[:count] = hashes[1:]
    occurrences, _ = earlier_occurrences(hashes[0].tobytes(),
                                         [k.tobytes() for k in keys[:count]],
                                         board.halfmove_clock)
    return RootHistory(boards=boards[1:].copy(), repeated=repeated[1:].copy(), keys=keys,
                       num_keys=np.int32(count),
                       repetitions=np.int8(min(occurrences, MAX_REPETITIONS)))
