"""Multi-leaf steps, the evaluation cache, the edge pool, tree slots (reset), time limits and
search statistics. The gathering itself is checked against lc0's rules in
``test_gather_reference.py``."""

from __future__ import annotations

import random
import time

import chess
import numpy as np
import pytest

from zerochess.chess.expander import Expander
from zerochess.neural.toy import linear_model
from zerochess.search.api import Searcher
from zerochess.search.config import SearchConfig

MODEL = linear_model(seed=2)
SIMS = 32


def _random_board(seed: int, plies: int) -> chess.Board:
    rng = random.Random(seed)
    board = chess.Board()
    for _ in range(plies):
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(rng.choice(moves))
    while board.is_game_over():
        board.pop()
    return board


BOARDS = [_random_board(s, 6 + 3 * s) for s in range(8)]
# Every search here is of these 8 trees of SIMS + 1 nodes (one shard) unless a test needs
# another shape (a cache, a small edge pool, a long search): each distinct shape is a set of
# programs to compile, most of this file's time.


def _searcher(leaves: int = 1, **kwargs) -> Searcher:
    kwargs.setdefault("max_nodes", SIMS + 1)
    return Searcher(MODEL, leaves_per_step=leaves, expander=Expander(0), **kwargs)


def _tree_arrays(batch) -> dict[str, np.ndarray]:
    tree = batch.state.tree
    return {"visits": np.asarray(tree.visits), "wl_sum": np.asarray(tree.wl_sum),
            "frozen": np.asarray(tree.frozen), "edge_child": np.asarray(tree.edge_child)}


@pytest.mark.parametrize("leaves,groups", [(1, 1), (4, 1), (4, 2), (8, 2)])
def test_infinite_nscl_is_puct_at_every_width(leaves, groups):
    s = _searcher(leaves, groups=groups)
    a = s.run(s.init(BOARDS, SearchConfig(), seed=5), SIMS)
    b = s.run(s.init(BOARDS, SearchConfig(n_scl=10 * SIMS), seed=9), SIMS)
    x, y = _tree_arrays(a), _tree_arrays(b)
    for name in x:
        np.testing.assert_array_equal(x[name], y[name], err_msg=name)
    assert not x["frozen"].any()
    c = s.run(s.init(BOARDS, SearchConfig(n_scl=2), seed=9), SIMS)  # the test can fail
    assert _tree_arrays(c)["frozen"].any()


@pytest.mark.parametrize("leaves,groups", [(4, 1), (8, 2)])
def test_multi_leaf_invariants(leaves, groups):
    s = _searcher(leaves, groups=groups, max_nodes=SIMS + 1)
    cfg = SearchConfig(n_scl=3, dirichlet_epsilon=0.25)
    batch = s.run(s.init(BOARDS, cfg, seed=1), SIMS)
    assert batch.finished.all()
    tree = batch.state.tree
    assert not np.asarray(tree.in_flight).any()
    results = s.results(batch)
    for res in results:
        assert res.root_visits == res.playouts == SIMS + 1 - res.dropped_simulations
        assert res.visits.sum() == res.root_visits - 1
        assert 1 <= res.nn_evals <= res.playouts
        assert 1.0 <= res.depth <= res.seldepth
        assert res.pv[0] == res.best_move
    again = s.results(s.run(s.init(BOARDS, cfg, seed=1), SIMS))
    for x, y in zip(results, again, strict=True):  # determinism under a seed
        assert list(x.visits) == list(y.visits) and x.collisions == y.collisions
    stats = s.last_run
    assert 0 < stats.rows_used <= stats.rows_available <= stats.rows_capacity


@pytest.mark.parametrize("leaves,groups", [(1, 1), (4, 2)])
def test_cache_gives_equal_results_and_hits(leaves, groups):
    """The default key covers the whole network input: searches with the cache equal those
    without, and a second search of the same positions takes every evaluation but the
    roots' from the cache."""
    cfg = SearchConfig(n_scl=4)
    plain = _searcher(leaves, groups=groups)
    cached = _searcher(leaves, groups=groups, cache_size=4096)
    want = plain.results(plain.run(plain.init(BOARDS, cfg, seed=3), SIMS))
    cold = cached.results(cached.run(cached.init(BOARDS, cfg, seed=3), SIMS))
    warm = cached.results(cached.run(cached.init(BOARDS, cfg, seed=3), SIMS))
    for x, y, z in zip(want, cold, warm, strict=True):
        assert list(x.visits) == list(y.visits) == list(z.visits)
        np.testing.assert_array_equal(x.q, y.q)
        np.testing.assert_array_equal(x.q, z.q)
        assert x.cache_hits == 0
        assert z.nn_evals == 1 and z.cache_hits == y.nn_evals - 1 + y.cache_hits
    cached.clear_cache()
    cleared = cached.results(cached.run(cached.init(BOARDS, cfg, seed=3), SIMS))
    assert [r.nn_evals for r in cleared] == [r.nn_evals for r in cold]


def test_position_only_cache_key_hits_transpositions():
    """lc0's CacheHistoryLength 0: a position reached by another move order is a hit."""
    a, b = chess.Board(), chess.Board()
    for m in ("g1f3", "g8f6", "b1c3"):
        a.push_uci(m)
    for m in ("b1c3", "g8f6", "g1f3"):
        b.push_uci(m)
    assert a.board_fen() == b.board_fen() and a.turn == b.turn
    full = _searcher(1, cache_size=1024, shards=1)
    lc0 = _searcher(1, cache_size=1024, shards=1, cache_history_length=0)
    for s in (full, lc0):
        s.results(s.run(s.init([a], SearchConfig(), seed=0), SIMS))
    hits_full = full.results(full.run(full.init([b], SearchConfig(), seed=0), SIMS))[0]
    hits_lc0 = lc0.results(lc0.run(lc0.init([b], SearchConfig(), seed=0), SIMS))[0]
    assert hits_lc0.cache_hits > hits_full.cache_hits


@pytest.mark.parametrize("leaves", [1, 4])
def test_full_edge_pool_stops_expanding_cleanly(leaves):
    s = _searcher(leaves, edges_per_node=3, groups=1, max_nodes=SIMS + 1)
    batch = s.run(s.init(BOARDS, SearchConfig(), seed=0), SIMS)
    tree = batch.state.tree
    capacity = tree.edge_capacity
    assert np.all(np.asarray(tree.edge_count) <= capacity)
    assert not np.asarray(tree.in_flight).any()
    results = s.results(batch)
    assert any(r.out_of_edges for r in results)
    for res in results:
        assert res.root_visits + res.dropped_simulations == SIMS + 1
        if res.out_of_edges:
            assert res.dropped_simulations > 0
        assert res.visits.sum() == res.root_visits - 1


def test_reset_replaces_only_its_slots():
    s = _searcher(1, shards=1)
    cfg = SearchConfig(n_scl=3, dirichlet_epsilon=0.25)
    new_board = _random_board(99, 21)
    batch = s.run(s.init(BOARDS, cfg, seed=7), SIMS // 2)
    batch = s.reset(batch, [1], [new_board], cfg, seeds=7)
    assert batch.finished.all()  # nothing asked of the new tree yet
    assert [r.root_visits for r in s.results(batch)] == [SIMS // 2 + 1, 1] + [SIMS // 2 + 1] * 6
    batch = s.run(batch, [SIMS // 2, SIMS] + [SIMS // 2] * 6)
    got = s.results(batch)
    whole = s.results(s.run(s.init(BOARDS, cfg, seed=7), SIMS))
    fresh = s.results(s.run(s.init([new_board] * len(BOARDS), cfg, seed=7), SIMS))
    assert got[1].board.fen() == new_board.fen()
    assert list(got[1].visits) == list(fresh[1].visits)  # slot 1 draws tree_key(7, 1)
    # the root was evaluated in a network batch of another size: equal up to float rounding
    np.testing.assert_allclose(got[1].prior, fresh[1].prior, rtol=1e-5)
    for i in (0, *range(2, len(BOARDS))):
        assert list(got[i].visits) == list(whole[i].visits)
    with pytest.raises(ValueError, match=r"slots\[0\] must be <= 7, got 8"):
        s.reset(batch, [8], [new_board])
    with pytest.raises(ValueError, match=r"slots\[0\] must be >= 0, got -1"):
        s.reset(batch, [-1], [new_board])


def test_time_limit_stops_the_run():
    s = _searcher(4, max_nodes=20_001)
    batch = s.init(BOARDS[:2], SearchConfig(), seed=0)
    s.run(batch, 8)  # compile first
    batch = s.init(BOARDS[:2], SearchConfig(), seed=0)
    start = time.perf_counter()
    batch = s.run(batch, 20_000, time_limit_s=0.3)
    assert time.perf_counter() - start < 30
    assert not batch.finished.any()
    assert not np.asarray(batch.state.tree.in_flight).any()
    res = s.results(batch)
    assert all(0 < r.playouts < 20_001 for r in res)
    batch = s.run(batch, 8)  # and it goes on from there
    assert all(x.playouts >= y.playouts + 8 for x, y in zip(s.results(batch), res,
                                                            strict=True))


def test_per_tree_widths_are_data():
    """SearchConfig.minibatch_size caps a tree's leaves per step without recompiling;
    with 1 the tree's search is the one-leaf search."""
    s = _searcher(8, groups=1)
    narrow = SearchConfig(minibatch_size=1)
    mixed = s.results(s.run(s.init(BOARDS, [narrow, SearchConfig()] * 4, seed=2), SIMS))
    one = _searcher(1, shards=1)
    single = one.results(one.run(one.init(BOARDS, SearchConfig(), seed=2), SIMS))
    for i in (0, 2, 4, 6):
        assert list(mixed[i].visits) == list(single[i].visits)
        assert mixed[i].collisions == 0
