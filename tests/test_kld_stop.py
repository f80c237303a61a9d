"""lc0's KLD-gain stopper (MinimumKLDGainPerNode, KLDGainAverageInterval) as per-tree data:
the KL gain against a float64 plain-Python computation, and where a search stops against
lc0's stopper (written out in Python from stoppers.cc) replayed on the visit distributions
recorded from the same search without the stopper."""

from __future__ import annotations

import functools
import math

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zerochess.chess.expander import Expander
from zerochess.errors import ConfigError
from zerochess.neural.toy import linear_model
from zerochess.search.api import Searcher
from zerochess.search.config import SearchConfig
from zerochess.search.loop import kld_gain
from zerochess.search.tree import node_edges

import searchers

MODEL = linear_model(seed=3)
SIMS = 120
INTERVAL = 10
POSITIONS = [
    chess.Board(),
    chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"),
    chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"),
    chess.Board("r3k2r/pp3ppp/2n1bn2/2bp4/8/2NB1N2/PPP2PPP/R1B2RK1 b kq - 3 10"),
]


def reference_gain(prev: list[int], prev_nodes: float, new: list[int], nodes: float) -> float:
    """stoppers.cc KldGainStopper::ShouldStop's kldgain, in float64."""
    gain = 0.0
    for o_v, n_v in zip(prev, new, strict=True):
        if o_v != 0:
            o_p, n_p = o_v / prev_nodes, n_v / nodes
            gain += o_p * math.log(o_p / n_p)
    return gain


class ReferenceKldStopper:
    """lc0's KldGainStopper, checked with (total nodes, edge visits)."""

    def __init__(self, min_gain: float, interval: int):
        self.min_gain, self.interval = min_gain, interval
        self.prev: list[int] | None = None
        self.prev_nodes = 0.0
        self.gains: list[float] = []  # gain per node at every check that had a previous

    def should_stop(self, total_nodes: int, edge_n: list[int]) -> bool:
        nodes = total_nodes - 1.0
        if nodes < self.prev_nodes + self.interval:
            return False
        if self.prev is not None:
            per_node = reference_gain(self.prev, self.prev_nodes, edge_n, nodes) / (
                nodes - self.prev_nodes)
            self.gains.append(per_node)
            if per_node < self.min_gain:
                return True
        self.prev, self.prev_nodes = list(edge_n), nodes
        return False


def test_kld_gain_equals_float64_reference():
    rng = np.random.default_rng(0)
    for _ in range(200):
        k = int(rng.integers(1, 40))
        prev = rng.integers(0, 50, k) * (rng.random(k) < 0.7)
        new = prev + rng.integers(0, 30, k)
        prev_nodes, nodes = int(prev.sum()) or 1, int(new.sum()) or 1
        pad = np.zeros(218 - k, np.int64)
        got = float(kld_gain(jnp.asarray(np.concatenate([prev, pad]), jnp.int32),
                             jnp.int32(prev_nodes),
                             jnp.asarray(np.concatenate([new, pad]), jnp.int32),
                             jnp.int32(nodes)))
        want = reference_gain(list(prev), prev_nodes, list(new), nodes)
        assert got == pytest.approx(want, rel=1e-4, abs=1e-7)


@functools.cache
def _searcher() -> Searcher:
    return Searcher(MODEL, max_nodes=searchers.NODES, expander=Expander(0), groups=1, shards=1)


@jax.jit
def _root_visits(tree):
    def one(t):
        edges = node_edges(t, jnp.int32(0))
        return jnp.where(edges.child >= 0, t.visits[jnp.maximum(edges.child, 0)], 0)

    return jax.vmap(one)(tree), tree.visits[:, 0]


@pytest.fixture(scope="module")
def recorded():
    """Root visit distributions after every simulation of the searches without a stopper:
    ``[tree][sims] -> (root visits, edge visits)``."""
    searcher = _searcher()
    batch = searcher.init(POSITIONS, SearchConfig(), seed=2)
    out: list[list[tuple[int, list[int]]]] = [[] for _ in POSITIONS]
    for sims in range(SIMS + 1):
        if sims:
            batch = searcher.run(batch, 1)
        edge_n, root_n = jax.device_get(_root_visits(batch.state.tree))
        for i, board in enumerate(POSITIONS):
            legal = board.legal_moves.count()
            out[i].append((int(root_n[i]), [int(x) for x in edge_n[i, :legal]]))
    return out


def _stop_point(records: list[tuple[int, list[int]]], min_gain: float, interval: int
                ) -> tuple[int, list[float]]:
    """Simulations a tree does under lc0's stopper, checked before each simulation."""
    stopper = ReferenceKldStopper(min_gain, interval)
    for sims in range(SIMS):
        total, edge_n = records[sims]
        assert total == sims + 1
        if stopper.should_stop(total, edge_n):
            return sims, stopper.gains
    return SIMS, stopper.gains


def test_stops_where_lc0s_stopper_stops(recorded):
    """Per tree, a minimum between its observed gains: the search stops exactly where the
    reference stopper, replayed on the recorded distributions, stops; min 0 never stops."""
    mins, want = [], []
    for records in recorded:
        _, gains = _stop_point(records, 1e-30, INTERVAL)
        assert len(gains) >= 4
        ranked = sorted(gains)
        j = len(ranked) // 2
        threshold = math.sqrt(ranked[j - 1] * ranked[j]) if ranked[j - 1] > 0 else ranked[j] / 2
        mins.append(threshold)
        stop, _ = _stop_point(records, threshold, INTERVAL)
        assert INTERVAL < stop < SIMS
        want.append(stop)
    searcher = _searcher()
    configs = [SearchConfig(minimum_kld_gain_per_node=t, kld_gain_average_interval=INTERVAL)
               for t in mins]
    batch = searcher.run(searcher.init(POSITIONS, configs, seed=2), SIMS)
    sims = list(np.asarray(batch.state.tree.simulations))
    assert sims == want
    assert list(batch.finished) == [True] * len(POSITIONS)
    assert list(np.asarray(batch.state.stopped)) == [s < SIMS for s in want]


def test_high_minimum_stops_early_zero_never_in_one_batch():
    """Per-tree data: in one batch, minimum 1 (lc0's maximum) stops at the second check
    (2 x interval child nodes), 0 runs the full budget; a stopped tree stays stopped (no
    more network rows) when the run goes on."""
    searcher = _searcher()
    high = SearchConfig(minimum_kld_gain_per_node=1.0, kld_gain_average_interval=INTERVAL)
    configs = [high, SearchConfig(), high, SearchConfig(kld_gain_average_interval=1)]
    batch = searcher.run(searcher.init(POSITIONS, configs, seed=4), SIMS // 2)
    batch = searcher.run(batch, SIMS - SIMS // 2)
    sims = list(np.asarray(batch.state.tree.simulations))
    assert sims == [2 * INTERVAL, SIMS, 2 * INTERVAL, SIMS]
    evals = np.asarray(batch.state.tree.stats.nn_evals)
    assert evals[0] <= 2 * INTERVAL + 1 and evals[1] > 2 * INTERVAL + 1
    assert list(batch.finished) == [True] * 4


def test_config_ranges():
    with pytest.raises(ConfigError, match="minimum_kld_gain_per_node"):
        SearchConfig(minimum_kld_gain_per_node=-0.1)
    with pytest.raises(ConfigError, match="kld_gain_average_interval"):
        SearchConfig(kld_gain_average_interval=0)
