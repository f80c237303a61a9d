"""The mate check (``SearchConfig.mate_check``): the host finds mates in one at expansion
(against python-chess brute force), the device search with it equals the plain-Python
reference node by node, mate-in-1/2 puzzles are proven with few visits, and it follows
``Model.mate_check`` by default (on for the built-in evaluator, off for other networks).

Puzzle positions: Lichess puzzle database (CC0), as in ``test_certainty``."""

from __future__ import annotations

import functools
import random

import chess
import numpy as np
import pytest
from test_certainty import MATE_IN_1, MATE_IN_2, SMALL, TOY_BOARDS, _device_nodes

from zerochess.bench.puzzles import forces_mate, load_puzzles
from zerochess.chess import state as chess_state
from zerochess.chess.expander import Expander
from zerochess.chess.policy_map import index_to_move
from zerochess.chess.rules import expand_batch
from zerochess.neural import load_model
from zerochess.search.api import Searcher, tree_key
from zerochess.search.config import SearchConfig
from zerochess.search.params import stack_configs

import searchers
from gather_reference import ReferenceSearch, walk
from tree_walk import contempt_uniform, network_evaluate

MODEL = searchers.TOY_MODEL


def _random_positions(count: int, seed: int = 5) -> list[chess.Board]:
    rng = random.Random(seed)
    out = [chess.Board(f) for f in MATE_IN_1 + MATE_IN_2 + SMALL]
    out += [p.board for p in load_puzzles()[::5]]  # mates in 1 and 2 from the bench set
    while len(out) < count:
        board = chess.Board()
        for _ in range(rng.randrange(10, 120)):
            moves = list(board.legal_moves)
            if not moves:
                break
            # prefer checks and captures: positions near mates
            sharp = [m for m in moves if board.gives_check(m) or board.is_capture(m)]
            board.push(rng.choice(sharp if sharp and rng.random() < 0.6 else moves))
        if not board.is_game_over():
            out.append(board)
    return out


def test_mate_slot_equals_python_chess():
    boards = _random_positions(300)
    positions = chess_state.stack([chess_state.from_board(b) for b in boards])
    n = len(boards)
    check = np.arange(n) % 7 != 3  # some rows not asked: -1 whatever the position
    exp = expand_batch(positions, np.full(n, -1, np.int16), check)
    found = 0
    for i, board in enumerate(boards):
        mating = []
        for move in board.legal_moves:
            board.push(move)
            if board.is_checkmate():
                mating.append(move)
            board.pop()
        slot = int(exp.mate_slot[i])
        if not check[i] or not mating:
            assert slot == -1, (i, board.fen())
            continue
        found += 1
        assert 0 <= slot < int(exp.num_legal[i])
        move = index_to_move(board, int(exp.legal[i, slot]))
        assert move in mating, (board.fen(), move, mating)
    assert found >= 10, "too few mates in one among the positions: the test is idle"
    plain = expand_batch(positions, np.full(n, -1, np.int16))
    assert np.all(plain.mate_slot == -1)
    # the worker processes give the same answer
    with Expander(2) as workers:
        np.testing.assert_array_equal(workers(positions, np.full(n, -1, np.int16),
                                              check).mate_slot, exp.mate_slot)


def _toy_searcher(leaves: int) -> Searcher:
    return searchers.toy_searcher(leaves)  # test_certainty's too, on TOY_BOARDS' 9 trees


@pytest.mark.parametrize("leaves,certainty", [(1, True), (1, False)], ids=["L1", "L1-off"])
def test_mate_check_search_equals_reference(leaves, certainty):
    """Visits, bounds and M of every node equal the reference with the mate check."""
    sims = 120
    boards = [chess.Board(f) for f in TOY_BOARDS]
    cfg = SearchConfig(certainty_propagation=certainty, mate_check=True)
    searcher = _toy_searcher(leaves)
    batch = searcher.run(searcher.init(boards, cfg, seed=3), sims)
    checked = 0
    for i, board in enumerate(boards):
        key = tree_key(3, i)
        ref = ReferenceSearch(board, cfg, functools.partial(network_evaluate, MODEL),
                              lambda draw, depth, key=key: float(contempt_uniform(key, draw,
                                                                                   depth)),
                              leaves)
        ref.run(sims)
        want = {path: (n.n, n.lower, n.upper, n.m if n.proven() else None)
                for path, n in walk(ref.root).items() if n.n > 0}
        got = _device_nodes(batch.state, i, board)
        assert got == want, (i, board.fen(), sorted(set(got.items()) ^ set(want.items()))[:6])
        checked += sum(1 for n in walk(ref.root).values()
                       if n.n > 0 and n.parent is not None and n.terminal is None
                       and n.proven() and n.m == 1)
    assert checked > 0, "no node was proven by the mate check: the test is idle"


def test_toy_network_finds_mate_in_one_only_with_the_check():
    boards = [chess.Board(f) for f in MATE_IN_1]
    searcher = _toy_searcher(1)
    padding = [chess.Board(f) for f in SMALL]  # 9 trees: the searcher's one batch shape
    on = searcher.search(boards + padding, SearchConfig(mate_check=True), num_simulations=4,
                         seed=1)[:len(boards)]
    off = searcher.search(boards + padding, SearchConfig(), num_simulations=4,
                          seed=1)[:len(boards)]
    for board, res in zip(boards, on, strict=True):
        after = board.copy()
        after.push(res.best_move)
        assert after.is_checkmate() and res.mate() == 1
    assert sum(r.mate() == 1 for r in off) < len(boards)


def test_builtin_proves_mate_in_two():
    """The built-in evaluator (mate check on by default) proves the mate-in-2 puzzles;
    its best move forces mate in 2 (python-chess brute force)."""
    boards = [chess.Board(f) for f in MATE_IN_1 + MATE_IN_2]  # test_certainty's batch
    results = searchers.builtin_searcher().search(boards, SearchConfig(), num_simulations=600,
                                                  seed=0)
    for board, res in list(zip(boards, results, strict=True))[len(MATE_IN_1):]:
        assert res.mate() == 2, (board.fen(), res.best_move)
        after = board.copy()
        after.push(res.best_move)
        assert forces_mate(board, 2)
        replies = list(after.legal_moves)
        for reply in replies:
            after.push(reply)
            assert forces_mate(after, 1), (board.fen(), res.best_move, reply)
            after.pop()


def test_default_follows_the_model():
    cfgs = [SearchConfig(), SearchConfig(mate_check=False), SearchConfig(mate_check=True)]
    assert list(np.asarray(stack_configs(cfgs, mate_check=True).mate_check)) == [
        True, False, True]
    assert list(np.asarray(stack_configs(cfgs).mate_check)) == [False, False, True]
    assert load_model("builtin").mate_check and not MODEL.mate_check


def test_mate_check_after_tree_reuse():
    """A root reached by ``advance`` (the kept subtree) gets the mate check too: after the
    key move of a mate in two and a reply, the new root's mate in one is searched first."""
    searcher = searchers.builtin_searcher()
    board = chess.Board(MATE_IN_2[0])
    batch = searcher.run(searcher.init([board], SearchConfig(), seed=0), 64)
    res = searcher.results(batch)[0]
    key = res.best_move
    after = board.copy()
    after.push(key)
    tree = batch.state.tree
    kept = None
    for reply in after.legal_moves:  # a reply the search expanded, so the tree is kept
        batch2 = searcher.advance(batch, [[key, reply]])
        if int(np.asarray(batch2.state.tree.stats.reused_visits)[0]) > 0:
            kept = (reply, batch2)
            break
    assert kept is not None and tree is not None
    reply, batch2 = kept
    root = after.copy()
    root.push(reply)
    prior = np.asarray(batch2.state.tree.root_prior)[0]
    assert prior.max() == 1.0 and prior.sum() == 1.0
    out = searcher.results(searcher.run(batch2, 8))[0]
    root.push(out.best_move)
    assert root.is_checkmate() and out.mate() == 1
