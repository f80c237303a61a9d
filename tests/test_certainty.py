"""Certainty propagation (lc0's bounds): the device search against the plain-Python
reference with bounds (``gather_reference``), node by node; proven results and mate
scores against python-chess brute force; lc0's best-move order for proven moves.

Puzzle positions: Lichess puzzle database (CC0), the position after the first move of
each puzzle's ``Moves``."""

from __future__ import annotations

import functools

import chess
import numpy as np
import pytest

from zerochess.search.api import Searcher, tree_key
from zerochess.search.config import SearchConfig

import searchers
from gather_reference import ReferenceSearch, walk
from tree_walk import contempt_uniform, network_evaluate, tree_arrays, walk_paths

MATE_IN_1 = [  # Lichess puzzles 000rZ, 001KR, 002Q2, 002vV
    "2kr1b1r/p1p2pp1/2pqN3/7p/6n1/2NPB3/PPP2PPP/R2Q1RK1 b - - 0 13",
    "6k1/p1p3pp/4N3/1p6/2q1r1n1/2B5/PP4PP/3R1R1K w - - 0 29",
    "7k/p4R1p/3p3B/2pN1n2/2PbB1b1/3P2P1/P3r3/5R1K b - - 0 28",
    "8/6k1/1R5p/5p1P/5P1K/6P1/8/r7 b - - 3 58",
]
MATE_IN_2 = [  # Lichess puzzles 008aL, 00Cfq, 00EXM, 00EXP
    "7k/6p1/1r5p/P4p2/3Rp3/4P3/5PPP/6K1 b - - 0 39",
    "6k1/ppR2pp1/4p1p1/4P1N1/3r2P1/1P4K1/P3r3/8 w - - 6 31",
    "r1n3k1/3R1ppp/2p5/5P2/8/1P2r3/P7/5RK1 w - - 0 34",
    "2n3k1/p4ppp/2p1p3/P1NrP3/1N1r4/8/5PPP/1R1R2K1 b - - 0 29",
]
SMALL = [  # few legal moves: the toy network's searches prove results here
    "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1",
    "8/8/8/8/8/5k2/7q/5K2 w - - 0 1",
    "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1",
    "k7/8/1K6/8/8/8/8/7R w - - 0 1",
    "6k1/5ppp/8/8/8/8/q4PPP/1r2R1K1 b - - 0 1",
]
MODEL = searchers.TOY_MODEL
# the toy searches of this file and test_mate_check: one batch shape (one compile)
TOY_BOARDS = SMALL + MATE_IN_1[:2] + MATE_IN_2[:2]


# --- python-chess brute force -----------------------------------------------------------


def forces_mate(board: chess.Board, moves: int) -> bool:
    """The side to move mates within ``moves`` of its moves against any defence."""
    if moves <= 0:
        return False
    for move in list(board.legal_moves):
        board.push(move)
        try:
            if board.is_checkmate() or (moves > 1 and is_mated_within(board, moves - 1)):
                return True
        finally:
            board.pop()
    return False


def is_mated_within(board: chess.Board, moves: int) -> bool:
    """Every move of the side to move lets the opponent mate within ``moves``."""
    if board.is_checkmate():
        return True
    if board.is_game_over(claim_draw=False):
        return False
    for move in list(board.legal_moves):
        board.push(move)
        try:
            if not forces_mate(board, moves):
                return False
        finally:
            board.pop()
    return True


# --- device tree by move path -----------------------------------------------------------


def _device_nodes(state, b: int, board: chess.Board) -> dict[tuple[str, ...], tuple]:
    """(visits, lower, upper, plies) of tree ``b``'s evaluated nodes by move path."""
    t = tree_arrays(state, "lower", "upper", "plies")
    out = {}
    for path, node in walk_paths(t, b, board):
        if t["visits"][b, node] > 0:
            lo, hi = int(t["lower"][b, node]), int(t["upper"][b, node])
            out[path] = (int(t["visits"][b, node]), lo, hi,
                         int(t["plies"][b, node]) if lo == hi else None)
    return out


def _reference(board, cfg, leaves, seed, index) -> ReferenceSearch:
    key = tree_key(seed, index)
    return ReferenceSearch(board, cfg, functools.partial(network_evaluate, MODEL),
                           lambda draw, depth: contempt_uniform(key, draw, depth),
                           leaves)


def _toy_searcher(leaves: int) -> Searcher:
    return searchers.toy_searcher(leaves)


@pytest.mark.parametrize("leaves,certainty", [(1, True), (4, True), (1, False)],
                         ids=["L1", "L4", "L1-off"])
def test_bounds_equal_reference(leaves, certainty):
    """Visits, bounds and M of every node equal the plain-Python reference with bounds."""
    sims = 160
    boards = [chess.Board(f) for f in TOY_BOARDS]
    cfg = SearchConfig(certainty_propagation=certainty)
    searcher = _toy_searcher(leaves)
    batch = searcher.run(searcher.init(boards, cfg, seed=3), sims)
    proven_inner = 0
    for i, board in enumerate(boards):
        ref = _reference(board, cfg, leaves, 3, i)
        ref.run(sims)
        want = {path: (n.n, n.lower, n.upper, n.m if n.proven() else None)
                for path, n in walk(ref.root).items() if n.n > 0}
        got = _device_nodes(batch.state, i, board)
        assert got == want, (i, board.fen(), sorted(set(got.items()) ^ set(want.items()))[:6])
        proven_inner += sum(1 for n in walk(ref.root).values()
                            if n.n > 0 and n.proven() and n.terminal is None)
    if certainty:
        assert proven_inner > 0, "no position proved a non-terminal node: the test is idle"
    else:
        assert proven_inner == 0


def _check_proofs(board: chess.Board, nodes: dict) -> int:
    """Every proven win/loss in the tree is one by python-chess brute force (within its
    M); returns how many non-terminal nodes were checked."""
    checked = 0
    for path, (_, lo, hi, plies) in nodes.items():
        if lo != hi or lo == 0 or not path or plies == 0 or plies > 3:
            continue
        pos = board.copy(stack=False)
        for uci in path:
            pos.push_uci(uci)
        if lo == 1:  # the mover into the node wins: the side to move is mated
            assert is_mated_within(pos, (plies + 1) // 2), (board.fen(), path, plies)
        else:
            assert forces_mate(pos, (plies + 1) // 2), (board.fen(), path, plies)
        checked += 1
    return checked


def _builtin_searcher() -> Searcher:
    return searchers.builtin_searcher()  # searches of MATE_IN_1 + MATE_IN_2, or of one


def test_mates_are_proven_and_scored_as_python_chess():
    """Mate-in-1 and mate-in-2 puzzles with the built-in evaluator: the best move is a
    proven win whose ``mate N`` is the shortest forced mate by brute force, and every
    proof in the tree holds."""
    boards = [chess.Board(f) for f in MATE_IN_1 + MATE_IN_2]
    searcher = _builtin_searcher()
    batch = searcher.run(searcher.init(boards, SearchConfig(), seed=0), 800)
    results = searcher.results(batch)
    proven_mates, checked = 0, 0
    for i, (board, res) in enumerate(zip(boards, results, strict=True)):
        checked += _check_proofs(board, _device_nodes(batch.state, i, board))
        mate = res.mate()
        if mate is None:
            continue
        proven_mates += 1
        assert mate > 0 and res.score().mate == mate and res.score().cp is None
        assert res.wdl_permille() == (1000, 0, 0)
        shortest = next(k for k in range(1, 4) if forces_mate(board.copy(), k))
        assert mate == shortest, (board.fen(), res.best_move, mate, shortest)
        after = board.copy()
        after.push(res.best_move)
        assert after.is_checkmate() or is_mated_within(after, mate - 1)
    assert proven_mates >= 6, f"only {proven_mates} of {len(boards)} mates proven"
    assert checked > 0


def test_lost_position_scores_negative_mate():
    """After a mate-in-2 key move the defender loses to mate in 1 whatever it plays:
    every move is a proven loss, the score is ``mate -1``."""
    board = chess.Board(MATE_IN_2[0])
    board.push_uci("b6b1")  # the puzzle's solution: Rb1+, Rd1 Rxd1#
    assert is_mated_within(board.copy(), 1)
    res = _builtin_searcher().search([board], SearchConfig(), num_simulations=200)[0]
    assert all(res.proven(i) == -1 for i in range(len(res.moves)))
    assert res.mate() == -1 and res.score().as_dict() == {"mate": -1}
    assert list(res.bound) == [-1] * len(res.moves) and set(res.mate_plies) == {1}
    assert res.wdl_permille() == (0, 0, 1000)
    assert res.root_bounds == (-1, -1)


def test_certainty_off_proves_nothing_but_game_ends():
    board = chess.Board(MATE_IN_2[1])
    res = _builtin_searcher().search(
        [board], SearchConfig(certainty_propagation=False), num_simulations=400)[0]
    assert res.root_bounds == (-1, 1)
    for i in range(len(res.moves)):
        after = board.copy()
        after.push(res.moves[i])
        if res.proven(i) is not None:
            assert after.is_game_over(claim_draw=False)


def test_best_move_prefers_shortest_proven_win_over_visits():
    """lc0's GetBestChildNoTemperature: a proven win beats any unproven move however
    many visits it has; among wins the shortest; losses last."""
    from zerochess.search.results import SearchResult

    board = chess.Board()
    moves = list(board.legal_moves)[:4]
    res = SearchResult(
        board=board, moves=moves, visits=np.array([500, 20, 30, 100]),
        q=np.array([0.1, 1.0, 1.0, -1.0], np.float32),
        wl=np.array([0.1, 1.0, 1.0, -1.0], np.float32), d=np.zeros(4, np.float32),
        prior=np.full(4, 0.25, np.float32), policy=np.full(4, 0.25, np.float32),
        pvs=[[] for _ in moves], best_index=0, root_visits=651, root_q=0.0,
        root_wdl=np.array([0.4, 0.3, 0.3]), raw_wdl=np.array([0.4, 0.3, 0.3]), nodes_used=0,
        dropped_simulations=0, mates=np.zeros(4, bool),
        bounds=np.array([[-1, 1], [1, 1], [1, 1], [-1, -1]], np.int8),
        plies=np.array([0, 4, 2, 6]))
    assert list(res.order()) == [2, 1, 0, 3]
    assert list(res.bound) == [2, 1, 1, -1] and list(res.mate_plies) == [0, 4, 2, 6]
    assert res.mate(2) == 2 and res.mate(1) == 3 and res.mate(3) == -4


@pytest.mark.parametrize("mate_check", [False, True], ids=["propagated", "mate-check"])
def test_move_proven_lost_has_no_prior(mate_check):
    """lc0's MakeTerminal clears the prior of a move proven to lose (its VerboseMoveStats
    shows ``P: 0.00%``), so no U term draws visits to it; the network's policy stays."""
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 b - - 0 1")  # ...Kh8?? Ra8#
    losing = board.parse_uci("g8h8")
    after = board.copy()
    after.push(losing)
    assert forces_mate(after, 1)
    searcher = _builtin_searcher()
    on, off = (searcher.search([board], SearchConfig(certainty_propagation=c,
                                                     mate_check=mate_check),
                               num_simulations=300)[0] for c in (True, False))
    i = on.moves.index(losing)
    assert on.bound[i] == -1 and on.prior[i] == 0.0 and on.policy[i] > 0
    others = np.arange(len(on.moves)) != i
    assert np.all(on.prior[others] > 0)
    if not mate_check:
        assert off.bound[i] == 2 and off.prior[i] > 0
        np.testing.assert_allclose(on.prior[others], off.prior[others], rtol=1e-6)


def test_when_every_move_loses_visits_go_to_the_highest_prior():
    """Every move is a proven loss (P cleared, Q = -1: equal scores): lc0 keeps each node's
    edges sorted by P and takes the first best edge, so the visits left go to the move
    with the highest network prior (bench --vs-lc0 position 167 disagreed on this)."""
    board = chess.Board("8/6k1/2R5/8/1R6/1P6/P1P5/1K6 b - - 2 47")  # K vs two rooks
    res = _builtin_searcher().search([board], SearchConfig(), num_simulations=400)[0]
    assert all(res.proven(i) == -1 for i in range(len(res.moves)))
    assert np.all(res.prior == 0)
    top = int(np.argmax(res.policy))
    assert top != 0, "the highest prior is in slot 0: the test cannot tell the tie rule"
    assert int(np.argmax(res.visits)) == top
    assert res.visits[top] > res.visits.sum() / 2
