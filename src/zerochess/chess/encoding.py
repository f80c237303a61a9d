"""lc0's classic 112-plane network input (``INPUT_CLASSICAL_112_PLANE``).

Layout (plane p, row = rank, col = file, everything in the frame of the side to
move now: ranks mirrored ``sq ^ 56`` and colours swapped when black is to move):

- 8 history slots x 13 planes: slot i shows the position i plies ago: ours
  P N B R Q K, theirs P N B R Q K, then "this position occurred before" (all ones).
- 104..111: us O-O-O, us O-O, them O-O-O, them O-O, all ones if black is to
  move, the rule50 ply count (raw), zeros, ones.

History before the game start follows lc0's ``FillEmptyHistory::FEN_ONLY``
(``EncodePositionForNN`` in lc0's ``src/neural/encoder.cc``): zeros when the game
started from the standard start position, otherwise copies of the first
position, with its last double pawn push undone when it carries an en-passant
flag.

``repeated`` follows lc0's ``PositionHistory::ComputeLastMoveRepetitions``: a
position repeats when an earlier position with the same side to move has the
same pieces, castling rights and en-passant flag. lc0 sets that flag after a
double pawn push only when an enemy pawn stands next to the pushed pawn (pins
are not checked), and for the first position exactly as the FEN gives it.

``planes_from_arrays`` works with numpy on the host and jax.numpy on the device
(it is jittable: no Python branching on values); the rest is host-only
python-chess glue.
"""

from __future__ import annotations

from typing import Any

import chess
import numpy as np

from zerochess.chess.state import (
    CASTLE_BK,
    CASTLE_BQ,
    CASTLE_WK,
    CASTLE_WQ,
    board_codes,
    castling_bits,
    legal_ep_square,
    position_hash,
)

NUM_PLANES = 112
HISTORY = 8
PLANES_PER_POSITION = 13
AUX_BASE = HISTORY * PLANES_PER_POSITION  # 104
MAX_ROOT_HASHES = 100

_MIRROR = np.arange(64) ^ 56
_PIECE_CODES = np.arange(1, 13, dtype=np.int8)  # plane k of a slot is code k + 1 (frame-relative)
_START_CODES = board_codes(chess.Board())


def planes_from_arrays(
    xp: Any, boards: Any, repeated: Any, turn: Any, castling: Any, rule50: Any
) -> Any:
    """The 112 input planes from compact arrays (numpy or jax.numpy, jittable).

    Args:
      xp: ``numpy`` or ``jax.numpy``.
      boards: int8 ``[..., 8, 64]`` absolute-frame piece codes (``zerochess.chess.state``);
        slot 0 is the current position, slot i the position i plies ago; an all-zero
        board means "no position" and gives all-zero planes.
      repeated: bool ``[..., 8]``: that slot's position occurred earlier in the game.
      turn: int ``[...]``, 1 if white is to move in the current position, 0 if black.
      castling: int ``[...]``, castling bits of the current position (1 WK, 2 WQ, 4 BK, 8 BQ).
      rule50: int ``[...]``, the current position's halfmove clock.

    Returns:
      float32 ``[..., 112, 8, 8]``, plane p, row = rank, col = file, in the frame of
      the side to move.
    """
    boards = xp.asarray(boards)
    turn = xp.asarray(turn)
    castling = xp.asarray(castling).astype(xp.int32)
    black = turn == 0  # [...]
    lead = boards.shape[:-2]

    codes = boards.astype(xp.int32)
    mirrored = codes[..., xp.asarray(_MIRROR)]
    codes = xp.where(black[..., None, None], mirrored, codes)
    # Swap colours for black: 1..6 <-> 7..12, empty stays 0.
    swapped = xp.where(codes > 0, (codes + 5) % 12 + 1, 0)
    codes = xp.where(black[..., None, None], swapped, codes)  # [..., 8, 64]

    pieces = codes[..., None, :] == xp.asarray(_PIECE_CODES, dtype=xp.int32)[:, None]
    present = xp.any(boards != 0, axis=-1)  # [..., 8]
    rep = xp.logical_and(xp.asarray(repeated), present)
    rep_plane = xp.broadcast_to(rep[..., None, None], (*lead, HISTORY, 1, 64))
    history = xp.concatenate([pieces, rep_plane], axis=-2)  # [..., 8, 13, 64]
    history = history.reshape(*lead, AUX_BASE, 64).astype(xp.float32)

    us_ooo = xp.where(black, castling & CASTLE_BQ, castling & CASTLE_WQ) != 0
    us_oo = xp.where(black, castling & CASTLE_BK, castling & CASTLE_WK) != 0
    them_ooo = xp.where(black, castling & CASTLE_WQ, castling & CASTLE_BQ) != 0
    them_oo = xp.where(black, castling & CASTLE_WK, castling & CASTLE_BK) != 0
    ones = xp.ones(lead, xp.float32)
    aux = xp.stack(
        [
            us_ooo.astype(xp.float32),
            us_oo.astype(xp.float32),
            them_ooo.astype(xp.float32),
            them_oo.astype(xp.float32),
            black.astype(xp.float32),
            xp.asarray(rule50).astype(xp.float32) * ones,
            0.0 * ones,
            ones,
        ],
        axis=-1,
    )  # [..., 8]
    aux = xp.broadcast_to(aux[..., None], (*lead, 8, 64))
    planes = xp.concatenate([history, aux], axis=-2)  # [..., 112, 64]
    return planes.reshape(*lead, NUM_PLANES, 8, 8)


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


def _game_positions(board: chess.Board) -> tuple[list[np.ndarray], list[tuple], list[int]]:
    """Replays ``board``'s game from its root.

    Returns per position (root first, current last): int8 [64] codes, lc0's
    equality key (codes bytes, turn, castling bits, ep flag file) and the rule50 count.
    """
    replay = board.root()
    root_ep = -1 if replay.ep_square is None else chess.square_file(replay.ep_square)
    codes = [board_codes(replay)]
    keys = [(codes[0].tobytes(), replay.turn, castling_bits(replay), root_ep)]
    rule50 = [replay.halfmove_clock]
    for move in board.move_stack:
        ep = _lc0_ep_file_after(replay, move)
        replay.push(move)
        codes.append(board_codes(replay))
        keys.append((codes[-1].tobytes(), replay.turn, castling_bits(replay), ep))
        rule50.append(replay.halfmove_clock)
    return codes, keys, rule50


def _repetitions(keys: list[tuple], rule50: list[int]) -> list[int]:
    """lc0's ``GetRepetitions()`` of every position (``ComputeLastMoveRepetitions``)."""
    reps = [0] * len(keys)
    for k in range(1, len(keys)):
        if rule50[k] < 4:
            continue
        for idx in range(k - 2, -1, -2):
            if keys[idx] == keys[k]:
                reps[k] = 1 + reps[idx]
                break
            if rule50[idx] < 2:
                break
    return reps


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
      repeated: bool ``[8]``, lc0's ``GetRepetitions() >= 1`` of each slot's position.
    """
    codes, keys, rule50 = _game_positions(board)
    reps = _repetitions(keys, rule50)
    fill = _fill_board(board.root())
    boards = np.zeros((HISTORY, 64), np.int8)
    repeated = np.zeros(HISTORY, bool)
    n = len(codes) - 1
    for i in range(HISTORY):
        idx = n - i
        if idx >= 0:
            boards[i] = codes[idx]
            repeated[i] = reps[idx] >= 1
        elif fill is not None:
            boards[i] = fill
    return boards, repeated


def encode_board(board: chess.Board) -> np.ndarray:
    """float32 ``[112, 8, 8]`` lc0 input planes of ``board`` (history from its ``move_stack``)."""
    boards, repeated = history_arrays(board)
    return planes_from_arrays(
        np, boards, repeated, np.int8(board.turn), np.int8(castling_bits(board)),
        np.int16(board.halfmove_clock),
    )


def root_history(board: chess.Board) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """What a search rooted at ``board`` needs to know about the game so far.

    Returns:
      boards: int8 ``[7, 64]``: the 7 positions before the current one (slots 1..7 of
        :func:`history_arrays`, zeros / FEN_ONLY fill applied).
      repeated: bool ``[7]``: their lc0 repetition flags.
      hashes: uint32 ``[100, 2]``: ``state.position_hash`` keys of up to 100 positions
        before the current one, newest first (zero padded).
      num_hashes: how many rows of ``hashes`` are valid.
    """
    boards, repeated = history_arrays(board)
    hashes = np.zeros((MAX_ROOT_HASHES, 2), np.uint32)
    replay = board.copy(stack=True)
    count = 0
    while replay.move_stack and count < MAX_ROOT_HASHES:
        replay.pop()
        hashes[count] = position_hash(
            np, board_codes(replay), np.int8(replay.turn), np.int8(castling_bits(replay)),
            np.int8(legal_ep_square(replay)),
        )
        count += 1
    return boards[1:].copy(), repeated[1:].copy(), hashes, count
