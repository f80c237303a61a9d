"""Multi-leaf gathering (L > 1) against a plain-Python reference of lc0's gathering
(``gather_reference``): root visits, collisions, and the visits in flight of every node
after a gather, on small trees."""

from __future__ import annotations

import functools

import chess
import numpy as np
import pytest

from zerochess.chess.expander import Expander
from zerochess.neural.toy import linear_model
from zerochess.search.api import Searcher, tree_key
from zerochess.search.config import SearchConfig

from gather_reference import ReferenceSearch, collision_limit, walk
from strategies import seeded_positions
from tree_walk import contempt_uniform, network_evaluate, tree_arrays, walk_paths

SIMS = 48
MODEL = linear_model(seed=3)


POSITIONS = seeded_positions(16, seed=17)


def _reference(board: chess.Board, cfg: SearchConfig, leaves: int, seed: int, index: int,
               max_nodes: int | None = None) -> ReferenceSearch:
    key = tree_key(seed, index)
    return ReferenceSearch(board, cfg, functools.partial(network_evaluate, MODEL),
                           lambda draw, depth: contempt_uniform(key, draw, depth),
                           leaves, max_nodes)


@functools.cache
def _searcher(leaves: int) -> Searcher:
    # one Searcher per width, shared by the tests, all with the node count the widest
    # (L=8) needs: the trees never fill (the reference has no node limit), so the size
    # changes nothing but the number of distinct programs to compile
    return Searcher(MODEL, max_nodes=SIMS + 1 + 4 * 8, leaves_per_step=leaves,
                    expander=Expander(0), groups=1, shards=1)


@pytest.fixture(autouse=True, scope="module")
def _drop_searchers():
    """Let conftest's end-of-module cleanup free their compiled programs."""
    yield
    _searcher.cache_clear()


def test_collision_limit_follows_lc0_scaling():
    """CalculateCollisionsLeft: 1 up to the scaling start, the maximum from its end, and
    lc0's rounded power-1.25 mix in between (numbers from lc0's formula by hand)."""
    cfg = SearchConfig()
    assert collision_limit(1, cfg) == collision_limit(28, cfg) == 1
    assert collision_limit(800, cfg) == round(1 + 79999 * ((800 - 28) / (145000 - 28)) ** 1.25)
    assert collision_limit(10_000, cfg) == 917  # MaxCollisionEvents caps it
    assert collision_limit(200_000, SearchConfig(max_collision_events=65536)) == 65536
    assert collision_limit(200_000, SearchConfig(max_collision_events=65536,
                                                 max_collision_visits=100)) == 100


@pytest.mark.parametrize("leaves,cfg", [
    pytest.param(4, SearchConfig(), marks=pytest.mark.slow),  # L8-collisions: PUCT at L > 1
    (8, SearchConfig(max_collision_visits_scaling_start=1, max_collision_visits_scaling_end=60,
                     max_collision_visits=6)),
    (8, SearchConfig(n_scl=3, cpuct=2.5, fpu_value=0.2, draw_score=0.3)),
    (3, SearchConfig(fpu_absolute=True, fpu_value=-1.0, n_scl=5,
                     max_collision_visits_scaling_start=1, max_collision_visits_scaling_end=40,
                     max_collision_visits=4)),
], ids=["L4-puct", "L8-collisions", "L8-contempt", "L3-contempt-absfpu"])
def test_multi_leaf_search_equals_reference(leaves, cfg):
    searcher = _searcher(leaves)
    batch = searcher.run(searcher.init(POSITIONS, cfg, seed=5), SIMS)
    results = searcher.results(batch)
    mismatches, collisions = [], 0
    for i, (board, res) in enumerate(zip(POSITIONS, results, strict=True)):
        ref = _reference(board, cfg, leaves, 5, i)
        ref.run(SIMS)
        collisions += ref.collisions
        got = (list(res.visits), res.collisions, res.playouts)
        want = (ref.root_visits(), ref.collisions, ref.root.n)
        if got != want:
            mismatches.append((i, board.fen(), got, want))
        assert res.root_visits == ref.root.n
        assert not np.any(res.in_flight)
    assert not mismatches, mismatches[:2]
    if leaves == 8 and cfg.n_scl is None:
        assert collisions > 0, "the settings meant to cause collisions caused none"


@pytest.mark.parametrize("leaves", [2, 8])
def test_in_flight_after_a_gather_equals_reference(leaves):
    """Visits in flight on every node and the collisions of one gather (the leaves'
    paths hold theirs; the collisions' are released when the gather ends)."""
    cfg = SearchConfig(max_collision_visits_scaling_start=1, max_collision_visits_scaling_end=50,
                       max_collision_visits=5)
    searcher = _searcher(leaves)
    batch = searcher.run(searcher.init(POSITIONS, cfg, seed=9), SIMS - 8)
    state = batch.state
    before = np.asarray(state.tree.stats.collisions)  # read first: select donates the state
    limit = state.tree.simulations + leaves
    state, _, _, _ = searcher._select(state, limit)
    tree = tree_arrays(state, "in_flight")
    collisions = np.asarray(state.tree.stats.collisions)
    checked = 0
    for i, board in enumerate(POSITIONS):
        ref = _reference(board, cfg, leaves, 9, i)
        ref.run(SIMS - 8)
        _, collided = ref.gather(leaves)
        ref.release(collided)
        assert collisions[i] - before[i] == len(collided)
        want = {path: node.in_flight for path, node in walk(ref.root).items()}
        got = {path: int(tree["in_flight"][i, node])
               for path, node in walk_paths(tree, i, board)}
        assert got == want, (i, board.fen())
        checked += sum(v > 0 for v in want.values())
    assert checked > 0


def test_full_tree_drops_like_the_reference():
    leaves = 4
    searcher = Searcher(MODEL, max_nodes=12, leaves_per_step=leaves, expander=Expander(0),
                        groups=1, shards=1)
    cfg = SearchConfig()
    results = searcher.results(searcher.run(searcher.init(POSITIONS[:6], cfg, seed=2), 30))
    for i, (board, res) in enumerate(zip(POSITIONS[:6], results, strict=True)):
        ref = _reference(board, cfg, leaves, 2, i, max_nodes=12)
        ref.run(30)
        assert list(res.visits) == ref.root_visits()
        assert res.nodes_used == 12 and res.dropped_simulations > 0
