"""Draw claims on the device (``zerochess.chess.device.claims``) against python-chess's
``Board.can_claim_fifty_moves()`` and ``Board.can_claim_threefold_repetition()``.

The positions: random games that shuffle pieces back and forth (many claimable
repetitions, some by a move ahead), games around a halfmove clock of 99, hand-made clock-99
positions where every non-zeroing move mates or stalemates (no claim) or loses a castling
right (a claim), and positions with legal and pinned en passant. The batch function is
compiled once (fixed batch size, padded).
"""

from __future__ import annotations

import functools
import random

import chess
import jax
import numpy as np
import pytest

from zerochess.chess import device
from zerochess.chess.device.claims import draw_claim, draw_claims
from zerochess.chess.types import GameStatus, PositionArrays
from zerochess.env import start_states

BATCH = 128
SEED = 20240611

# clock 99: every non-zeroing move mates (Nc7#) or stalemates, or there is none; and
# clock 100 without a legal move: python-chess's fifty-move claim fails
NO_FIFTY_CLAIM = [
    "kr6/pp6/N7/2P5/1P6/8/5PPP/6BK w - - 99 1",  # Nc7# is the only non-zeroing move
    "7k/Q6P/7K/8/8/8/8/8 w - - 99 1",  # queen moves mate or stalemate, king moves stalemate
    "8/8/1p6/1Q6/8/k5P1/1p6/K7 w - - 99 1",  # Kb1 stalemates
    "8/3P4/8/8/Kq3kP1/8/8/8 w - - 99 1",  # only pawn moves
    "8/8/PP6/2Kq4/8/2k5/8/8 w - - 99 1",
    "7k/5Q2/6K1/8/8/8/8/8 b - - 100 80",  # stalemate at clock 100: no legal move, no claim
    "7k/6Q1/6K1/8/8/8/8/8 b - - 100 80",  # checkmate at clock 100
]
# clock 98/99: the only non-zeroing moves lose a castling right (castling included)
CASTLING_ONLY = [
    "4k3/8/8/8/8/8/2PPPPPP/3BK2R w K - 99 1",
    "4k3/8/8/8/8/8/PPPPPP2/R3KB2 w Q - 99 1",
    "4k3/8/8/8/8/8/2PPPPPP/3BK2R w K - 98 1",
]
# shuffles start here: open positions, partial castling rights, legal and pinned en passant
SHUFFLE_STARTS = [
    chess.STARTING_FEN,
    "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/2N2N2/PPPP1PPP/R1BQK2R w KQkq - 4 5",
    "r3k2r/pppq1ppp/2n2n2/3pp3/3PP3/2N2N2/PPPQ1PPP/R3K2R w Kq - 0 1",
    "6k1/5ppp/8/8/8/8/r4PPP/1R4K1 w - - 0 1",
    "8/8/4k3/8/8/3K4/8/R7 w - - 0 1",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",  # exf6 e.p. legal
    "8/8/8/KPp4r/8/8/8/4k3 w - c6 0 2",  # bxc6 e.p. pinned: no legal en passant
    "4k3/8/8/2KPp2r/8/8/8/8 w - e6 0 2",  # dxe6 e.p. legal (the rook stays behind)
    "6k1/4r3/8/8/2pP4/8/8/K7 b - d3 0 1",  # cxd3 e.p. legal
    "8/8/4k3/8/8/3K4/8/R7 w - - 93 60",  # through clocks 98, 99, 100 with repetitions
    "6k1/5ppp/8/8/8/8/r4PPP/1R4K1 w - - 95 40",
    "8/8/4k3/8/8/3K4/8/N7 w - - 96 60",  # insufficient material: the claims still hold
    "r3k2r/pppq1ppp/2n2n2/3pp3/3PP3/2N2N2/PPPQ1PPP/R3K2R b Kq - 94 30",
]
# scripted: the first position has a legal en passant, the same placement later has
# none; python-chess does not count them as the same
EP_SCRIPT = ("e2e4 g8f6 e4e5 d7d5 g1f3 b8c6 f3g1 c6b8 g1f3 b8c6 f3g1 c6b8 g1f3 b8c6 "
             "f3g1 c6b8")


def _quiet(board: chess.Board, move: chess.Move) -> bool:
    return not board.is_zeroing(move)


def _shuffle_game(rng: random.Random, fen: str, plies: int) -> list[chess.Board]:
    """Every position of a random game that mostly moves pieces back where they came from
    (so positions repeat), with its move stack."""
    board = chess.Board(fen)
    seen = [board.copy()]
    while len(board.move_stack) < plies:
        moves = list(board.legal_moves)
        if not moves:  # mate or stalemate (insufficient material plays on: claims hold)
            break
        back = None
        if len(board.move_stack) >= 2:
            prev = board.move_stack[-2]
            back = chess.Move(prev.to_square, prev.from_square)
        quiet = [m for m in moves if _quiet(board, m)]
        r = rng.random()
        if back in moves and r < 0.55:
            move = back
        elif quiet and r < 0.93:
            move = rng.choice(quiet)
        else:
            move = rng.choice(moves)
        board.push(move)
        seen.append(board.copy())
    return seen


def _clock_positions(rng: random.Random) -> list[chess.Board]:
    """Middlegame positions (no move stack) with their halfmove clock set to 98, 99, 100."""
    out = []
    for _ in range(12):
        board = chess.Board()
        for _ in range(rng.randrange(10, 50)):
            if board.is_game_over():
                break
            board.push(rng.choice(list(board.legal_moves)))
        if board.is_game_over():
            continue
        parts = board.fen().split()
        for clock in (98, 99, 100):
            out.append(chess.Board(" ".join([*parts[:4], str(clock), parts[5]])))
    return out


def _positions() -> list[chess.Board]:
    rng = random.Random(SEED)
    boards: list[chess.Board] = []
    for fen in NO_FIFTY_CLAIM + CASTLING_ONLY:
        board = chess.Board(fen)
        boards += [board, board.mirror()]
    for fen in SHUFFLE_STARTS:
        for _ in range(3):
            game = _shuffle_game(rng, fen, rng.randrange(20, 50))
            boards += [b for b in game if rng.random() < 0.45]
    script = chess.Board()
    for uci in EP_SCRIPT.split():
        script.push_uci(uci)
        boards.append(script.copy())
    boards += _clock_positions(rng)
    return boards


def _expected(board: chess.Board) -> int:
    if board.can_claim_fifty_moves():
        return GameStatus.RULE50
    if board.can_claim_threefold_repetition():
        return GameStatus.REPETITION
    return GameStatus.ONGOING


@functools.cache
def _claims_program():
    def run(pos, keys, num_keys):
        legal, num_legal = jax.vmap(device.legal_moves)(pos)
        return draw_claims(pos, legal, num_legal, keys, num_keys)

    return jax.jit(run)


def _device_claims(boards: list[chess.Board]) -> tuple[np.ndarray, np.ndarray]:
    """(draw claims, the states' statuses) of ``boards``, in batches of ``BATCH``."""
    state = start_states(boards)
    n = len(boards)
    claims = []
    for lo in range(0, n, BATCH):
        rows = np.minimum(np.arange(lo, lo + BATCH), n - 1)  # pad with the last row
        pos = PositionArrays(*(np.asarray(f)[rows] for f in state.position))
        out = _claims_program()(pos, state.keys[rows], state.num_keys[rows])
        claims.append(np.asarray(out)[:min(BATCH, n - lo)])
    return np.concatenate(claims), np.asarray(state.status)


@pytest.fixture(scope="module")
def sample() -> tuple[list[chess.Board], np.ndarray, np.ndarray, np.ndarray]:
    boards = _positions()
    expected = np.array([_expected(b) for b in boards], np.int8)
    claims, statuses = _device_claims(boards)
    return boards, expected, claims, statuses


def test_draw_claims_match_python_chess(sample) -> None:
    boards, expected, claims, statuses = sample
    wrong = [(b.fen(), [m.uci() for m in b.move_stack[-8:]], int(e), int(c))
             for b, e, c in zip(boards, expected, claims, strict=True) if e != c]
    assert not wrong, wrong[:5]
    # the sample is not vacuous: each answer occurs often, each kind of claim by the
    # position itself and by a move ahead, in ongoing and finished positions alike
    ongoing = statuses == GameStatus.ONGOING
    repetition = expected == GameStatus.REPETITION
    fifty = expected == GameStatus.RULE50
    assert len(boards) >= 300
    assert np.sum(repetition & ongoing) >= 40  # claimable a move ahead
    assert np.sum(statuses == GameStatus.REPETITION) >= 20  # a third occurrence now
    assert np.sum(fifty & ongoing) >= 10  # clock 99: claimable a move ahead
    assert np.sum(statuses == GameStatus.RULE50) >= 10  # clock >= 100
    assert np.sum(expected == GameStatus.ONGOING) >= 100
    both = [b.can_claim_threefold_repetition() for b, f in zip(boards, fifty, strict=True)
            if f]
    assert sum(both) >= 2  # the fifty-move claim comes first


def test_hand_made_clock_99_positions() -> None:
    """No claim where every non-zeroing move ends the game (or none exists) or where the
    game is over; a claim where they all lose a castling right."""
    boards = [chess.Board(f) for f in NO_FIFTY_CLAIM + CASTLING_ONLY]
    boards += [b.mirror() for b in boards]
    claims, _ = _device_claims(boards)
    want = [_expected(b) for b in boards]
    assert claims.tolist() == want
    assert want.count(GameStatus.ONGOING) == 2 * len(NO_FIFTY_CLAIM) + 2
    assert want.count(GameStatus.RULE50) == 4


def test_single_position_function_agrees(sample) -> None:
    """``draw_claim`` for one position (jitted unbatched, so its loop over the children
    of a clock of 99 runs for that position alone) gives python-chess's answers."""
    boards, expected, _, _ = sample
    picked = list(range(0, len(boards), 9))
    picked += [i for i, b in enumerate(boards) if b.halfmove_clock == 99][:12]
    state = start_states([boards[i] for i in picked])
    one = jax.jit(lambda pos, keys, num: draw_claim(pos, *device.legal_moves(pos), keys, num))
    got = [int(one(PositionArrays(*(np.asarray(f)[j] for f in state.position)),
                   state.keys[j], state.num_keys[j])) for j in range(len(picked))]
    assert got == expected[picked].tolist()
    assert {GameStatus.ONGOING, GameStatus.RULE50, GameStatus.REPETITION} <= set(got)
