"""lc0's moves-left utility (MovesLeft*; search.cc ``MEvaluator``): the device search with
a synthetic network that has a moves-left head against the plain-Python reference
(``gather_reference``, which writes lc0's formula out on its own), node by node; and
without a head (or with the utility unreachable) the search is exactly the plain PUCT.
"""

from __future__ import annotations

import functools
import math

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zerochess.chess.expander import Expander
from zerochess.neural.toy import linear_model
from zerochess.search.api import Searcher, tree_key
from zerochess.search.config import SearchConfig
from zerochess.search.params import stack_configs
from zerochess.search.selection import moves_left_utility

from gather_reference import ReferenceSearch, m_utility, walk
from tree_walk import contempt_uniform, network_evaluate, tree_arrays, walk_paths

WITH_HEAD = linear_model(seed=3, moves_left=True)
NO_HEAD = linear_model(seed=3)  # the same policy and value weights, no head
SIMS = 60
POSITIONS = [
    "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1",  # mate in 1 (proofs: plies known exactly)
    "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1",  # queen up
    "8/8/8/8/8/5k2/7q/5K2 w - - 0 1",  # lost
    "k7/8/1K6/8/8/8/8/7R w - - 0 1",
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
]
# strong enough that the utility changes visits with the toy network's values
STRONG = SearchConfig(moves_left_threshold=0.0, moves_left_slope=0.01,
                      moves_left_max_effect=0.3, moves_left_constant_factor=0.5)
MID = SearchConfig(moves_left_threshold=0.3, moves_left_slope=0.02, moves_left_max_effect=0.2)


def _device_nodes(state, b: int, board: chess.Board) -> dict[tuple[str, ...], tuple]:
    """(visits, mean moves left) of tree ``b``'s visited nodes by move path."""
    t = tree_arrays(state, "m_sum")
    return {path: (int(t["visits"][b, node]), float(t["m_sum"][b, node]) / t["visits"][b, node])
            for path, node in walk_paths(t, b, board) if t["visits"][b, node] > 0}


@functools.cache
def _searcher(model_name: str, leaves: int) -> Searcher:
    model = WITH_HEAD if model_name == "head" else NO_HEAD
    return Searcher(model, max_nodes=SIMS + 8, leaves_per_step=leaves, expander=Expander(0),
                    groups=1, shards=1)


def _reference(board, cfg, leaves, seed, index, model, moves_left) -> ReferenceSearch:
    key = tree_key(seed, index)
    return ReferenceSearch(board, cfg, functools.partial(network_evaluate, model, moves_left=True),
                           lambda draw, depth: contempt_uniform(key, draw, depth),
                           leaves, moves_left=moves_left)


@pytest.mark.parametrize("leaves,cfg,active", [
    (1, STRONG, True), (1, MID, True),
    pytest.param(4, STRONG, True, marks=pytest.mark.slow), (1, SearchConfig(), False)],
    ids=["L1-strong", "L1-mid", "L4-strong", "L1-lc0-defaults"])
def test_moves_left_search_equals_reference(leaves, cfg, active):
    """Visits and M of every node equal the reference with lc0's moves-left utility."""
    boards = [chess.Board(f) for f in POSITIONS]
    searcher = _searcher("head", leaves)
    batch = searcher.run(searcher.init(boards, cfg, seed=5), SIMS)
    results = searcher.results(batch)
    changed = 0
    for i, board in enumerate(boards):
        ref = _reference(board, cfg, leaves, 5, i, WITH_HEAD, True)
        ref.run(SIMS)
        want = {p: (n.n, n.msum / n.n) for p, n in walk(ref.root).items() if n.n > 0}
        got = _device_nodes(batch.state, i, board)
        assert {p: v[0] for p, v in got.items()} == {p: v[0] for p, v in want.items()}, (
            i, board.fen())
        for path, (_, m) in want.items():
            assert got[path][1] == pytest.approx(m, rel=1e-4, abs=1e-3), (i, path)
        assert results[i].root_moves_left == pytest.approx(ref.root.msum / ref.root.n,
                                                           rel=1e-4)
        visited = results[i].visits > 0
        assert np.all(np.isnan(results[i].m[~visited]))
        assert np.all(np.isfinite(results[i].m[visited]))
        plain = _reference(board, cfg, leaves, 5, i, WITH_HEAD, False)
        plain.run(SIMS)
        changed += plain.root_visits() != ref.root_visits()
    if active:
        assert changed > 0, "the utility changed no root's visits: the test is idle"


def test_without_a_head_the_search_is_plain_puct():
    """No head: the MovesLeft* values change nothing (trees bit-identical), the tree equals
    the head-less reference, and M reads NaN. With the head but the utility unreachable
    (threshold 1: no |Q| exceeds it) the tree equals the head-less one too."""
    boards = [chess.Board(f) for f in POSITIONS]
    plain = _searcher("plain", 1)
    a = plain.run(plain.init(boards, SearchConfig(), seed=5), SIMS)
    b = plain.run(plain.init(boards, STRONG, seed=5), SIMS)
    for name in ("visits", "wl_sum", "d_sum", "edge_child"):
        np.testing.assert_array_equal(np.asarray(getattr(a.state.tree, name)),
                                      np.asarray(getattr(b.state.tree, name)))
    for i, res in enumerate(plain.results(a)):
        ref = _reference(boards[i], SearchConfig(), 1, 5, i, NO_HEAD, False)
        ref.run(SIMS)
        assert list(res.visits) == ref.root_visits()
        assert np.all(np.isnan(res.m)) and math.isnan(res.root_moves_left)
    head = _searcher("head", 1)
    c = head.run(head.init(boards, STRONG.replace(moves_left_threshold=1.0), seed=5), SIMS)
    for name in ("visits", "wl_sum", "d_sum", "edge_child"):
        np.testing.assert_array_equal(np.asarray(getattr(a.state.tree, name)),
                                      np.asarray(getattr(c.state.tree, name)))


class _Node:
    def __init__(self, n: int, wl: float, msum: float):
        self.n, self.wl, self.msum = n, wl, msum


def test_utility_formula_equals_lc0():
    """``moves_left_utility`` against the reference's lc0 formula on random values,
    lc0's defaults and the edge thresholds 0 and 1, both signs of Q."""
    rng = np.random.default_rng(0)
    configs = [SearchConfig(), STRONG, MID, SearchConfig(moves_left_threshold=1.0),
               SearchConfig(moves_left_threshold=0.9, moves_left_constant_factor=-0.3,
                            moves_left_quadratic_factor=0.7, moves_left_max_effect=1.0)]
    for cfg in configs:
        params = _first(stack_configs([cfg], moves_left=True))
        for _ in range(40):
            parent = _Node(int(rng.integers(1, 50)), 0.0, 0.0)
            parent.wl = parent.n * float(rng.uniform(-1, 1))
            parent.msum = parent.n * float(rng.uniform(0, 80))
            child_m = rng.uniform(0, 80, 8)
            q = rng.uniform(-1, 1, 8)
            got = np.asarray(moves_left_utility(
                params, jnp.float32(parent.wl / parent.n), jnp.float32(parent.msum / parent.n),
                jnp.asarray(child_m, jnp.float32), jnp.asarray(q, jnp.float32)))
            want = [m_utility(cfg, parent, _Node(1, 0.0, float(cm)), float(qq))
                    for cm, qq in zip(child_m, q, strict=True)]
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
        off = _first(stack_configs([cfg], moves_left=False))
        assert float(jnp.max(jnp.abs(moves_left_utility(
            off, jnp.float32(1.0), jnp.float32(10.0), jnp.full(4, 50.0), jnp.full(4, 0.9))))) == 0


def _first(params):
    """Tree 0's hyperparameters as scalars."""
    return jax.tree.map(lambda x: x[0], params)
