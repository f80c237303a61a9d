"""The device rules (``zerochess.chess.device``) against python-chess, the oracle.

- perft of the standard suite and chess960 positions: the chessprogramming wiki's
  published counts, cross-checked with python-chess's own move generation at the
  shallow depths (depth 3 here, 4-5 in the slow tier);
- seeded random games through the environment (``zerochess.env``), steered towards
  castling, en passant, promotions and under-promotions, checks and repetitions: at every
  ply the legal move set, the position, the status, the repetition key and the 112 input
  planes (with history) equal python-chess's (and ``chess.encoding``'s);
- ``expand`` equals the host expander row for row (the same ``Expansion``, mate check
  included);
- edge positions: 218 moves, double check, the pinned en-passant capture, castling through
  or out of check, chess960 castling with king or rook already on its square;
- bad boards at the boundary raise ``PositionError``.
"""

from __future__ import annotations

import random

import chess
import chess.variant
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zerochess import PositionError
from zerochess.chess import device, policy_map, state
from zerochess.chess.device import tables
from zerochess.chess.device.perft import perft
from zerochess.chess.encoding import encode_board
from zerochess.chess.keys import position_hash
from zerochess.chess.rules import expand_batch
from zerochess.chess.types import GameStatus, PositionArrays
from zerochess.env import Env, start_states

# chessprogramming wiki, "Perft Results" (depths 1..)
PERFT = {
    "initial": (chess.STARTING_FEN, (20, 400, 8902, 197281, 4865609)),
    "kiwipete": ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                 (48, 2039, 97862, 4085603)),
    "position3": ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", (14, 191, 2812, 43238, 674624)),
    "position4": ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
                  (6, 264, 9467, 422333)),
    "position5": ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
                  (44, 1486, 62379, 2103487)),
    "position6": ("r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
                  (46, 2079, 89890, 3894594)),
}
# chessprogramming wiki, "Chess960 Perft Results" (positions 1-3 of its list)
PERFT960 = {
    "960-1": ("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
              (21, 528, 12189, 326672)),
    "960-2": ("2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w HEhe - 1 9",
              (21, 807, 18002, 667366)),
    "960-3": ("b1q1rrkb/pppppppp/3nn3/8/P7/1PPP4/4PPPP/BQNNRKRB w GE - 1 9",
              (20, 479, 10471, 273318)),
}
SLOW_PERFT_NODES = 5_000_000


def python_chess_perft(board: chess.Board, depth: int) -> int:
    if depth == 1:
        return board.legal_moves.count()
    total = 0
    for move in board.legal_moves:
        board.push(move)
        total += python_chess_perft(board, depth - 1)
        board.pop()
    return total


def _cases(table, chess960):
    for name, (fen, counts) in table.items():
        for depth, count in enumerate(counts, start=1):
            if depth == 3:
                yield pytest.param(fen, chess960, depth, count, id=f"{name}-d{depth}")
            elif depth > 3 and count <= SLOW_PERFT_NODES:
                yield pytest.param(fen, chess960, depth, count, id=f"{name}-d{depth}",
                                   marks=pytest.mark.slow)


@pytest.mark.parametrize("fen, chess960, depth, count",
                         [*_cases(PERFT, False), *_cases(PERFT960, True)])
def test_perft(fen, chess960, depth, count):
    board = chess.Board(fen, chess960=chess960)
    assert perft(device.from_board(board), depth, batch=1024) == count
    if depth <= 3:  # the published count, checked with python-chess's generator
        assert python_chess_perft(board, depth) == count


def test_compact_lists_the_set_entries_as_numpy_does():
    """``position.compact`` (the legal-move list from the 1858-entry mask) against numpy's
    ``flatnonzero``: empty, sparse, dense, whole 32-entry words set, the last entry, and
    more set entries than the list holds (the first ``size`` are kept)."""
    from zerochess.chess.device.position import compact

    rng = np.random.default_rng(3)
    masks = [np.zeros(1858, bool), np.ones(1858, bool)]
    for density in (0.005, 0.02, 0.1):
        masks += [rng.random(1858) < density for _ in range(20)]
    words = np.zeros(1858, bool)
    words[32:96] = words[-1] = words[0] = True  # two full words, both ends
    masks.append(words)
    listed, count = jax.jit(jax.vmap(compact))(jnp.asarray(np.stack(masks)))
    for mask, row, n in zip(masks, np.asarray(listed), np.asarray(count), strict=True):
        want = np.flatnonzero(mask)[:218]
        assert n == mask.sum()
        np.testing.assert_array_equal(row, np.pad(want, (0, 218 - len(want)),
                                                  constant_values=-1))


def test_perft_divide_sums_and_names_moves():
    board = chess.Board(PERFT["kiwipete"][0])
    split = perft(device.from_board(board), 2, divide=True, batch=1024)
    expected = {}
    for move in board.legal_moves:
        index = policy_map.move_to_index(board, move)
        board.push(move)
        expected[index] = board.legal_moves.count()
        board.pop()
    assert split == expected
    assert sum(split.values()) == PERFT["kiwipete"][1][1]


def _before(board: chess.Board) -> chess.Board:
    """The board before its last move (for move_to_index)."""
    b = board.copy()
    b.pop()
    return b


def test_tables_are_lc0s_policy():
    assert np.array_equal(tables.FROM_SQUARE, policy_map.FROM_SQUARE)
    assert np.array_equal(tables.TO_SQUARE, policy_map.TO_SQUARE)
    assert np.array_equal(tables.PROMOTION, policy_map.PROMOTION)


# --- random games through the environment ----------------------------------------------------


def _pick(board: chess.Board, rng: random.Random, history: list[chess.Move]) -> chess.Move:
    """A random legal move, steered towards the rare rules: castling, en passant,
    promotions (under-promotions too), checks, and stepping back (repetitions)."""
    moves = list(board.legal_moves)
    r = rng.random()
    if r < 0.15 and len(history) >= 2:
        back = chess.Move(history[-2].to_square, history[-2].from_square)
        if back in moves:
            return back
    special = [m for m in moves if board.is_castling(m) or board.is_en_passant(m)
               or m.promotion]
    if special and r < 0.6:
        return rng.choice(special)
    if r < 0.75:
        checks = [m for m in moves if board.gives_check(m)]
        if checks:
            return rng.choice(checks)
    if r < 0.85:
        pawn_pushes = [m for m in moves if board.piece_type_at(m.from_square) == chess.PAWN]
        if pawn_pushes:
            return rng.choice(pawn_pushes)
    return rng.choice(moves)


def _python_chess_status(board: chess.Board) -> GameStatus:
    if board.is_checkmate():
        return GameStatus.CHECKMATE
    if board.is_stalemate():
        return GameStatus.STALEMATE
    if board.is_insufficient_material():
        return GameStatus.INSUFFICIENT
    if board.halfmove_clock >= 100:
        return GameStatus.RULE50
    if board.is_repetition(3):
        return GameStatus.REPETITION
    return GameStatus.ONGOING


def _start_boards(count: int, seed: int) -> list[chess.Board]:
    """Mostly the standard start, some chess960 starts, some FEN starts with an en-passant
    square (lc0's history fill)."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        kind = i % 8
        if kind == 6:
            out.append(chess.Board.from_chess960_pos(rng.randrange(960)))
        elif kind == 7:
            b = chess.Board("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3")
            out.append(chess.Board(b.fen()))
        else:
            out.append(chess.Board())
    return out


def play_and_compare(games: int, plies: int, seed: int) -> int:
    """Play ``games`` steered random games in lockstep through the environment and
    python-chess; returns the plies compared."""
    boards = _start_boards(games, seed)
    rngs = [random.Random(seed * 100_003 + i) for i in range(games)]
    histories: list[list[chess.Move]] = [[] for _ in range(games)]
    env = Env()
    states = jax.tree.map(jnp.asarray, start_states(boards))
    step = jax.jit(jax.vmap(env.step))
    compared = 0
    for _ in range(plies):
        live = [i for i, b in enumerate(boards)
                if _python_chess_status(b) == GameStatus.ONGOING]
        if not live:
            break
        actions = np.zeros(games, np.int32)
        for i in live:
            move = _pick(boards[i], rngs[i], histories[i])
            actions[i] = policy_map.move_to_index(boards[i], move)
            boards[i].push(move)
            histories[i].append(move)
        states = step(states, jnp.asarray(actions))
        s = jax.device_get(states)
        for i in live:
            _compare(boards[i], jax.tree.map(lambda a, i=i: a[i], s))
            compared += 1
    return compared


def _compare(board: chess.Board, s) -> None:
    where = f"{board.root().fen()} moves {' '.join(m.uci() for m in board.move_stack)}"
    legal = {policy_map.move_to_index(board, m) for m in board.legal_moves}
    assert set(np.nonzero(s.legal_action_mask)[0].tolist()) == legal, where
    expected = state.from_board(board)
    for name, a, b in zip(PositionArrays._fields, s.position, expected, strict=True):
        assert np.array_equal(a, b), f"{name}: {a} != {b} in {where}"
    assert s.status == _python_chess_status(board), where
    assert bool(s.terminated) == (s.status != GameStatus.ONGOING)
    key = position_hash(np, expected.board, expected.turn, expected.castling, expected.ep)
    assert np.array_equal(s.keys[0], key), where
    assert np.array_equal(s.observation, encode_board(board)), where
    if s.status == GameStatus.CHECKMATE:  # the player who moved won
        mover = s.player_order[0 if board.turn == chess.BLACK else 1]
        assert s.rewards[mover] == 1.0 and s.rewards[1 - mover] == -1.0


def test_random_games_agree_with_python_chess():
    assert play_and_compare(games=48, plies=160, seed=1) > 3_000


@pytest.mark.tier2
def test_more_random_games_agree_with_python_chess():
    assert play_and_compare(games=256, plies=200, seed=2) > 20_000


@pytest.mark.slow
def test_ten_thousand_random_games_agree_with_python_chess():
    compared = sum(play_and_compare(games=500, plies=200, seed=100 + k) for k in range(20))
    assert compared > 500_000


# --- expand: the host expander's record ---------------------------------------------------------


def _random_positions(count: int, seed: int, chess960: bool = False) -> list[chess.Board]:
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        b = (chess.Board.from_chess960_pos(rng.randrange(960)) if chess960 else chess.Board())
        history: list[chess.Move] = []
        for _ in range(rng.randrange(0, 120)):
            if b.is_game_over():
                break
            move = _pick(b, rng, history)
            b.push(move)
            history.append(move)
        if not b.is_game_over():
            out.append(b)
    return out


@pytest.mark.parametrize("chess960", [False, True])
def test_expand_equals_host_expander(chess960):
    boards = _random_positions(300, seed=7 + chess960, chess960=chess960)
    parent = state.stack([state.from_board(b) for b in boards])
    described = expand_batch(parent, np.full(len(boards), -1, np.int16))
    rng = np.random.default_rng(3)
    move = np.array([rng.choice(described.legal[i, :described.num_legal[i]])
                     for i in range(len(boards))], np.int16)
    move[::10] = -1  # "describe the parent itself"
    check = rng.random(len(boards)) < 0.7
    mask = rng.random(len(boards)) < 0.9
    host = expand_batch(parent, move, check)
    dev = jax.device_get(jax.jit(device.expand)(parent, move, check, mask))
    for name, a, b in zip(("board", "turn", "castling", "ep", "rule50", "fullmove", "legal",
                           "num_legal", "status", "mate_slot"), dev.arrays(), host.arrays(),
                          strict=True):
        assert np.array_equal(a[mask], b[mask]), name
    assert np.all(dev.num_legal[~mask] == 0) and np.all(dev.legal[~mask] == -1)
    # every host row lists its moves in ascending index: one order for both backends
    for i in range(len(boards)):
        row = host.legal[i, :host.num_legal[i]]
        assert np.all(np.diff(row) > 0)


def test_mate_check_finds_the_first_mate_in_index_order():
    # a back-rank mate, and the scholar's mate (Qxf7#, with Qxe5+ and others checking first)
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
    scholar = "r1bqkbnr/pppp1ppp/2n5/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"
    boards = [board, chess.Board(scholar)]
    parent = state.stack([state.from_board(b) for b in boards])
    out = jax.device_get(jax.jit(device.expand)(parent, np.full(2, -1, np.int16),
                                                np.ones(2, bool)))
    for i, b in enumerate(boards):
        mates = []
        for m in b.legal_moves:
            b.push(m)
            if b.is_checkmate():
                mates.append(policy_map.move_to_index(_before(b), m))
            b.pop()
        legal = out.legal[i, :out.num_legal[i]].tolist()
        assert mates and legal[out.mate_slot[i]] == min(mates)


# --- edge positions ---------------------------------------------------------------------------

EDGE = {
    "218 moves": "R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1",
    "double check": "4k3/8/8/8/1b6/8/4r3/4K3 w - - 0 1",
    "pinned en passant": "8/8/8/KPp4r/8/8/8/7k w - c6 0 2",
    "en passant out of check": "8/8/8/3pP3/8/8/8/3k1K2 w - d6 0 2",
    "castle out of check": "r3k2r/8/8/8/8/8/4q3/R3K2R w KQkq - 0 1",
    "castle through check": "r3k2r/8/8/8/8/8/5q2/R3K2R w KQkq - 0 1",
    "castle into check": "r3k2r/8/8/8/8/8/6q1/R3K2R w KQkq - 0 1",
    "queen side b1 attacked": "r3k2r/8/8/8/8/8/1q6/R3K2R w KQkq - 0 1",
}
EDGE960 = {
    "king on its target": "1r4kr/8/8/8/8/8/8/1R4KR w HBhb - 0 1",
    "rook on its target": "5rkr/8/8/8/8/8/8/2K2R1R w Hh - 0 1",
    "king and rook swap": "rk5r/8/8/8/8/8/8/RK5R w AHah - 0 1",
    "rook shields the king": "8/8/8/8/8/8/8/rR1K2k1 w B - 0 1",
}


@pytest.mark.parametrize("fen, chess960", [*((f, False) for f in EDGE.values()),
                                           *((f, True) for f in EDGE960.values())],
                         ids=[*EDGE, *EDGE960])
def test_edge_positions(fen, chess960):
    board = chess.Board(fen, chess960=chess960)
    pos = device.from_board(board)
    legal, count = jax.device_get(jax.jit(device.legal_moves)(PositionArrays(
        *map(jnp.asarray, pos))))
    expected = sorted(policy_map.move_to_index(board, m) for m in board.legal_moves)
    assert legal[:count].tolist() == expected
    assert np.all(legal[count:] == -1)
    if fen == EDGE["218 moves"]:
        assert count == 218
    status = int(jax.jit(device.status)(PositionArrays(*map(jnp.asarray, pos))))
    assert status == _python_chess_status(board)


def test_play_equals_python_chess_push():
    for board in _random_positions(40, seed=11):
        for move in list(board.legal_moves)[:5]:
            child = jax.device_get(jax.jit(device.play)(
                PositionArrays(*map(jnp.asarray, device.from_board(board))),
                policy_map.move_to_index(board, move)))
            after = board.copy()
            after.push(move)
            expected = state.from_board(after)
            assert all(np.array_equal(a, b) for a, b in zip(child, expected, strict=True))


# --- the boundary -----------------------------------------------------------------------------


@pytest.mark.parametrize("board", [
    chess.Board("8/8/8/8/8/8/8/8 w - - 0 1"),  # no kings
    chess.Board("k7/8/8/8/8/8/8/KQ6 b - - 0 1").copy(),  # black to move, fine
    chess.variant.AtomicBoard(),
], ids=["no kings", "legal", "variant"])
def test_boundary_checks_boards(board):
    if board.is_valid() and type(board) is chess.Board:
        assert device.to_board(device.from_board(board)).fen() == board.fen()
        return
    with pytest.raises(PositionError):
        device.from_board(board)


def _mating_walks(count: int, seed: int) -> list[chess.Board]:
    """Positions from random play in endgames of heavy pieces against a bare or nearly bare
    king, where mates in one and in two by a check are common."""
    rng = random.Random(seed)
    starts = ["4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", "3k4/8/8/8/8/8/8/3QK3 w - - 0 1",
              "6k1/5ppp/8/8/8/8/5PPP/2R1R1K1 w - - 0 1", "4k3/8/8/8/8/8/2q5/4K3 b - - 0 1",
              "r5k1/5ppp/8/8/8/8/5PPP/1Q4K1 w - - 0 1", "7k/8/8/8/8/8/8/RR4K1 w - - 0 1"]
    out = []
    while len(out) < count:
        b = chess.Board(rng.choice(starts))
        for _ in range(rng.randrange(0, 30)):
            if b.is_game_over():
                break
            b.push(rng.choice(list(b.legal_moves)))
        if not b.is_game_over():
            out.append(b)
    return out


def test_root_mate_check_equals_the_hosts():
    """``root_mate_slots`` (a mate in one, else a check forcing a mate in two) against the
    host's python-chess ``root_mate_slot`` on random and mating-endgame positions."""
    from zerochess.chess.backend import root_mate_slot

    walks = _mating_walks(2400, seed=5)
    found = [root_mate_slot(b) for b in walks]  # keep the mating ones and 150 others
    walks = [b for k, (b, s) in enumerate(zip(walks, found, strict=True)) if s >= 0 or k < 150]
    boards = _random_positions(120, seed=21) + walks
    expected = np.array([root_mate_slot(b) for b in boards])
    pos = state.stack([state.from_board(b) for b in boards])
    ask = np.arange(len(boards)) % 7 != 3  # some rows are not asked

    @jax.jit
    def slots(pos, ask):
        legal, num = jax.vmap(device.legal_moves)(pos)
        return device.root_mate_slots(pos, legal.astype(jnp.int16), num, ask)

    got = np.asarray(slots(pos, ask))
    np.testing.assert_array_equal(got, np.where(ask, expected, -1))
    in_one = np.array([b.is_checkmate() for b in (
        _pushed(b, root_mate_slot(b)) for b in boards)])
    asked = ask & (expected >= 0)
    assert (asked & in_one).sum() >= 20 and (asked & ~in_one).sum() >= 20, \
        ((asked & in_one).sum(), (asked & ~in_one).sum())
    assert (ask & (expected < 0)).sum() >= 100


def _pushed(board: chess.Board, slot: int) -> chess.Board:
    """``board`` after its legal move of slot ``slot`` (ascending index); itself if -1."""
    from zerochess.chess.backend import sorted_moves

    b = board.copy(stack=False)
    if slot >= 0:
        b.push(sorted_moves(board)[slot])
    return b
