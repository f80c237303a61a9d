"""rules.expand_batch / Expander against python-chess as the independent reference."""

from __future__ import annotations

import os
import random
import sys
from collections import Counter

import chess
import numpy as np
import pytest

from zerochess.chess import policy_map, state
from zerochess.chess.expander import Expander
from zerochess.chess.rules import Expansion, expand_batch

# (parent FEN, move in UCI) pairs for cases random play rarely reaches.
SPECIAL_CASES = [
    ("rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2", "d8h4"),  # mate
    ("k7/2Q5/8/8/8/8/8/7K w - - 0 1", "c7b6"),  # stalemate
    ("k7/2K5/8/8/3B4/8/8/8 w - - 0 1", "d4b6"),  # stalemate + insufficient material
    ("8/8/8/8/8/8/3n4/3K2k1 w - - 0 1", "d1d2"),  # K vs K
    ("8/8/8/4k3/8/8/R7/4K3 w - - 99 80", "a2a3"),  # halfmove clock reaches 100
    ("8/8/8/4k3/8/8/R7/4K3 w - - 120 80", "a2a3"),  # beyond 100
    ("8/8/8/4k3/8/8/P7/4K3 w - - 99 80", "a2a3"),  # pawn move resets the clock
    ("6k1/5ppp/8/8/8/8/8/R5K1 w - - 99 60", "a1a8"),  # mate on the 100th halfmove
    ("rnbqkbnr/ppp1pppp/8/3P4/8/8/PPP1PPPP/RNBQKBNR b KQkq - 0 2", "e7e5"),  # legal ep
    ("rnbqkbnr/pppp1ppp/8/3Pp3/8/8/PPP1PPPP/RNBQKBNR w KQkq e6 0 3", "d5e6"),  # ep capture
    ("8/2p5/8/KP5r/8/8/8/7k b - - 0 1", "c7c5"),  # ep capture would expose the king
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "e2e4"),  # no ep capturer
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1g1"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1c1"),
    ("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "e8g8"),
    ("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "e8c8"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "a1a8"),  # rook capture drops both a-side rights
    ("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "h8h1"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1f1"),  # king move drops both rights
    *[("1r5k/P7/8/8/8/8/8/6K1 w - - 0 1", f"a7{t}8{p}") for t in "ab" for p in "qrbn"],
    *[("6k1/8/8/8/8/8/p7/1R5K b - - 0 1", f"a2{t}1{p}") for t in "ab" for p in "qrbn"],
    ("3Q4/1Q4Q1/4Q3/2Q4R/Q4Q2/3Q4/1Q4Rp/1K1BBNNk w - - 0 1", "b1c1"),
]
MAX_MOVES_FEN = "3Q4/1Q4Q1/4Q3/2Q4R/Q4Q2/3Q4/1Q4Rp/1K1BBNNk w - - 0 1"  # 218 legal moves


def _expected_status(board: chess.Board) -> int:
    if board.is_checkmate():
        return 1
    if board.is_stalemate():
        return 2
    if board.is_insufficient_material():
        return 3
    if board.halfmove_clock >= 100:
        return 4
    return 0


def _ends_game(board: chess.Board, move: chess.Move) -> bool:
    board.push(move)
    try:
        return not any(board.generate_legal_moves())
    finally:
        board.pop()


def _pick_move(board: chess.Board, rng: random.Random) -> chess.Move:
    """A random legal move, biased towards game ends and special moves so they are covered."""
    moves = list(board.legal_moves)
    ep = [m for m in moves if board.is_en_passant(m)]
    promo = [m for m in moves if m.promotion]
    castle = [m for m in moves if board.is_castling(m)]
    double = [m for m in moves if abs(m.to_square - m.from_square) == 16
              and board.piece_type_at(m.from_square) == chess.PAWN]
    capture = [m for m in moves if board.is_capture(m)]
    pawn = [m for m in moves if board.piece_type_at(m.from_square) == chess.PAWN]
    lone_king = chess.popcount(board.occupied_co[not board.turn]) <= 2  # stalemates happen
    ending = [m for m in moves if (lone_king or board.gives_check(m)) and _ends_game(board, m)]
    for group, prob in ((ending, 0.9), (ep, 0.8), (promo, 0.9), (castle, 0.7), (double, 0.3),
                        (capture, 0.3), (pawn, 0.3)):
        if group and rng.random() < prob:
            return rng.choice(group)
    return rng.choice(moves)


def _random_pairs(num: int, seed: int) -> list[tuple[chess.Board, chess.Move]]:
    """(parent board without history, move) pairs from seeded random games."""
    rng = random.Random(seed)
    pairs: list[tuple[chess.Board, chess.Move]] = []
    while len(pairs) < num:
        board = chess.Board()
        max_ply = rng.choice((60, 400))  # short games keep more castling rights and ep
        while board.outcome() is None and board.ply() < max_ply and len(pairs) < num:
            move = _pick_move(board, rng)
            pairs.append((board.copy(stack=False), move))
            board.push(move)
    return pairs


def _special_pairs() -> list[tuple[chess.Board, chess.Move]]:
    pairs = []
    for fen, uci in SPECIAL_CASES:
        board = chess.Board(fen)
        move = chess.Move.from_uci(uci)
        assert board.is_legal(move), (fen, uci)
        pairs.append((board, move))
    return pairs


def _row(exp: Expansion, i: int) -> state.PositionArrays:
    return state.PositionArrays(*(np.asarray(f)[i] for f in exp.child))


def _assert_position_equal(got: state.PositionArrays, want: state.PositionArrays, msg: str) -> None:
    for name, g, w in zip(state.PositionArrays._fields, got, want, strict=True):
        np.testing.assert_array_equal(g, w, err_msg=f"{name}: {msg}")


def _check_row(exp: Expansion, i: int, ref: chess.Board) -> None:
    """Row ``i`` of ``exp`` must describe python-chess board ``ref``."""
    fen = ref.fen()
    _assert_position_equal(_row(exp, i), state.from_board(ref), fen)
    n = int(exp.num_legal[i])
    legal = exp.legal[i]
    assert (legal[n:] == -1).all(), fen
    decoded = {policy_map.index_to_move(ref, int(x)) for x in legal[:n]}
    assert decoded == set(ref.legal_moves), fen
    # every backend's move order: ascending lc0 index (from python-chess's own moves)
    _, want_idx = policy_map.legal_move_indices(ref)
    np.testing.assert_array_equal(legal[:n], np.sort(want_idx), err_msg=fen)
    assert int(exp.status[i]) == _expected_status(ref), fen


def _check_pairs(pairs: list[tuple[chess.Board, chess.Move]]) -> Counter:
    parents = state.stack([state.from_board(b) for b, _ in pairs])
    idx = np.array([policy_map.move_to_index(b, m) for b, m in pairs], np.int16)
    exp = expand_batch(parents, idx)
    n = len(pairs)
    assert exp.legal.shape == (n, policy_map.MAX_LEGAL_MOVES)
    assert exp.legal.dtype == np.int16 and exp.num_legal.dtype == np.int16
    assert exp.status.dtype == np.int8 and exp.num_legal.shape == exp.status.shape == (n,)
    for field, dtype in zip(exp.child, (np.int8, np.int8, np.int32, np.int8, np.int32, np.int32),
                            strict=True):
        assert field.dtype == dtype and field.shape[0] == n
    seen: Counter = Counter()
    for i, (board, move) in enumerate(pairs):
        ref = board.copy(stack=False)
        seen["castling_move"] += board.is_castling(move)
        seen["ep_move"] += board.is_en_passant(move)
        seen[f"promotion_{move.promotion}"] += move.promotion is not None
        seen["black_moves"] += board.turn == chess.BLACK
        ref.push(move)
        _check_row(exp, i, ref)
        seen[f"status_{int(exp.status[i])}"] += 1
        seen["check"] += ref.is_check()
        seen["legal_ep"] += int(exp.child.ep[i]) >= 0
        seen["pseudo_ep_only"] += ref.ep_square is not None and int(exp.child.ep[i]) < 0
        seen["castling_rights"] += int(exp.child.castling[i]) != 0
    return seen


def test_expand_matches_python_chess_random_games() -> None:
    pairs = _random_pairs(10_000, seed=1234) + _special_pairs()
    seen = _check_pairs(pairs)
    # The reference comparison must actually have exercised the interesting cases.
    for key, minimum in [("castling_move", 20), ("ep_move", 20), ("promotion_2", 20),
                         ("promotion_3", 20), ("promotion_4", 20), ("promotion_5", 20),
                         ("black_moves", 4000), ("status_1", 20), ("status_2", 5),
                         ("status_3", 10), ("status_4", 5), ("check", 200), ("legal_ep", 50),
                         ("pseudo_ep_only", 100), ("castling_rights", 1000)]:
        assert seen[key] >= minimum, (key, sorted(seen.items()))


def test_special_cases_explicitly() -> None:
    pairs = _special_pairs()
    parents = state.stack([state.from_board(b) for b, _ in pairs])
    idx = np.array([policy_map.move_to_index(b, m) for b, m in pairs], np.int16)
    exp = expand_batch(parents, idx)
    by_case = {(b.fen(), m.uci()): i for i, (b, m) in enumerate(pairs)}

    def row(fen: str, uci: str) -> int:
        return by_case[(chess.Board(fen).fen(), uci)]

    assert exp.status[row(*SPECIAL_CASES[0])] == 1
    assert exp.status[row(*SPECIAL_CASES[1])] == 2
    assert exp.status[row(*SPECIAL_CASES[2])] == 2  # stalemate wins over insufficient material
    assert exp.status[row(*SPECIAL_CASES[3])] == 3
    assert exp.status[row(*SPECIAL_CASES[4])] == 4
    assert exp.status[row(*SPECIAL_CASES[6])] == 0
    assert exp.status[row(*SPECIAL_CASES[7])] == 1  # mate wins over the 50-move rule
    assert exp.child.ep[row(*SPECIAL_CASES[8])] == chess.E6
    assert exp.child.ep[row(*SPECIAL_CASES[10])] == -1  # pinned: no legal ep capture
    assert exp.child.ep[row(*SPECIAL_CASES[11])] == -1
    knight = row("1r5k/P7/8/8/8/8/8/6K1 w - - 0 1", "a7a8n")
    queen = row("1r5k/P7/8/8/8/8/8/6K1 w - - 0 1", "a7a8q")
    assert idx[knight] == policy_map.MOVES.index("a7a8")  # knight shares the plain index
    assert exp.child.board[knight, chess.A8] == chess.KNIGHT
    assert exp.child.board[queen, chess.A8] == chess.QUEEN
    black_knight = row("6k1/8/8/8/8/8/p7/1R5K b - - 0 1", "a2b1n")
    assert idx[black_knight] == policy_map.MOVES.index("a7b8")  # mirrored
    assert exp.child.board[black_knight, chess.B1] == chess.KNIGHT + 6
    castle = row("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1g1")
    assert idx[castle] == policy_map.MOVES.index("e1h1")
    assert exp.child.board[castle, chess.G1] == chess.KING
    assert exp.child.board[castle, chess.F1] == chess.ROOK
    assert exp.child.castling[castle] == state.CASTLE_BK | state.CASTLE_BQ


def test_describe_parent_with_minus_one() -> None:
    pairs = _random_pairs(600, seed=99) + _special_pairs()
    boards = [b for b, _ in pairs] + [chess.Board(MAX_MOVES_FEN)]
    parents = state.stack([state.from_board(b) for b in boards])
    exp = expand_batch(parents, np.full(len(boards), -1, np.int16))
    for i, board in enumerate(boards):
        _check_row(exp, i, board)
    assert exp.num_legal[-1] == policy_map.MAX_LEGAL_MOVES
    assert (exp.legal[-1] >= 0).all()


def test_minus_one_mixed_with_moves_and_empty_batch() -> None:
    start = chess.Board()
    parents = state.stack([state.from_board(start)] * 3)
    e2e4 = policy_map.move_to_index(start, chess.Move.from_uci("e2e4"))
    exp = expand_batch(parents, np.array([-1, e2e4, -1]))
    assert list(exp.child.turn) == [1, 0, 1]
    assert list(exp.num_legal) == [20, 20, 20]
    empty = expand_batch(state.PositionArrays(*(f[:0] for f in parents)), np.zeros(0, np.int16))
    assert empty.legal.shape == (0, policy_map.MAX_LEGAL_MOVES)
    assert empty.child.board.shape == (0, 64)


def test_bogus_castling_rights_are_cleaned_for_minus_one() -> None:
    board = chess.Board("4k3/8/8/8/8/8/8/4K3 w KQkq - 0 1")  # no rooks: no real rights
    exp = expand_batch(state.stack([state.from_board(board)]), np.array([-1]))
    assert int(exp.child.castling[0]) == 0
    _check_row(exp, 0, chess.Board(board.fen()))


@pytest.mark.parametrize(
    ("fen", "index"),
    [
        (chess.STARTING_FEN, policy_map.MOVES.index("a1b1")),  # blocked by own piece
        (chess.STARTING_FEN, policy_map.MOVES.index("e7e5")),  # no own piece there
        (chess.STARTING_FEN, policy_map.MOVES.index("a7a8q")),
        ("r3k2r/8/8/8/8/8/8/R3K2R w - - 0 1", policy_map.MOVES.index("e1h1")),  # no rights
        ("r3k2r/8/8/8/8/8/5r2/R3K2R w KQkq - 0 1", policy_map.MOVES.index("e1h1")),  # via f1
        ("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
         policy_map.MOVES.index("e2e4")),  # checkmated: nothing is legal
    ],
)
def test_illegal_index_raises(fen: str, index: int) -> None:
    board = chess.Board(fen)
    good = policy_map.move_to_index(board, next(iter(board.legal_moves))) if any(
        board.legal_moves) else -1
    parents = state.stack([state.from_board(board)] * 2)
    with pytest.raises(ValueError, match=str(index)) as err:
        expand_batch(parents, np.array([good, index]))
    assert board.board_fen() in str(err.value)


@pytest.mark.parametrize("index", [-2, policy_map.NUM_MOVES, 30000])
def test_out_of_range_index_raises(index: int) -> None:
    parents = state.stack([state.from_board(chess.Board())])
    with pytest.raises(ValueError, match=str(index)):
        expand_batch(parents, np.array([index]))


# --- Expander ---------------------------------------------------------------------------


def _mixed_batch(n: int, seed: int) -> tuple[state.PositionArrays, np.ndarray, list[chess.Board]]:
    pairs = _random_pairs(n, seed)
    parents = state.stack([state.from_board(b) for b, _ in pairs])
    idx = np.array([policy_map.move_to_index(b, m) for b, m in pairs], np.int16)
    idx[::7] = -1
    return parents, idx, [b for b, _ in pairs]


def _assert_expansion_equal(a: Expansion, b: Expansion) -> None:
    for x, y in zip(a.child, b.child, strict=True):
        assert x.dtype == y.dtype
        np.testing.assert_array_equal(x, y)
    for x, y in zip(a[1:], b[1:], strict=True):
        assert x.dtype == y.dtype
        np.testing.assert_array_equal(x, y)


def test_expander_workers_match_inline() -> None:
    parents, idx, boards = _mixed_batch(501, seed=7)
    inline = Expander(0)(parents, idx)
    _assert_expansion_equal(inline, expand_batch(parents, idx))
    with Expander(2) as ex:
        _assert_expansion_equal(ex(parents, idx), inline)
        small = ex(state.PositionArrays(*(f[:5] for f in parents)), idx[:5])  # runs inline
        _assert_expansion_equal(small, expand_batch(state.PositionArrays(*(f[:5] for f in parents)),
                                                    idx[:5]))
        # A worker's ValueError reaches the caller and the pool stays usable.
        bad = idx.copy()
        bad[400] = next(i for i in range(policy_map.NUM_MOVES)
                        if not _is_legal_index(boards[400], i))
        with pytest.raises(ValueError, match=str(bad[400])):
            ex(parents, bad)
        _assert_expansion_equal(ex(parents, idx), inline)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/maps")
def test_expander_workers_do_not_load_jax() -> None:
    parents, idx, _ = _mixed_batch(64, seed=2)
    with Expander(2) as ex:
        ex(parents, idx)  # the workers are up and have imported everything they need
        for proc in ex._procs:
            with open(f"/proc/{proc.pid}/maps") as f:
                loaded = f.read()
            assert "jaxlib" not in loaded, (
                "expander workers loaded jax: importing zerochess.chess.rules runs "
                "zerochess/__init__.py, which must not import jax eagerly (make it lazy)"
            )


def _is_legal_index(board: chess.Board, index: int) -> bool:
    try:
        policy_map.index_to_move(board, index)
    except ValueError:
        return False
    return True


def test_expander_worker_death_raises_and_close_is_idempotent() -> None:
    parents, idx, _ = _mixed_batch(128, seed=3)
    ex = Expander(2)
    ex(parents, idx)
    ex._procs[1].kill()  # simulate a crashed worker (a process this test started)
    ex._procs[1].join(5)
    with pytest.raises(RuntimeError, match="died"):
        ex(parents, idx)
    with pytest.raises(RuntimeError, match="closed"):
        ex(parents, idx)
    ex.close()
    ex.close()
    assert not any(p.is_alive() for p in ex._procs)


def test_expander_default_workers() -> None:
    ex = Expander(None)
    try:
        cpus = os.cpu_count() or 1
        assert ex.num_workers == (cpus if cpus > 1 else 0)
    finally:
        ex.close()
