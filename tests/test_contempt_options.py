"""lc0's newer search-contempt options (``ScTemperature``, lc0 PR #2242;
``HybridSamplingRatio`` and ``HybridRatioMode``, PR #2371) against plain-Python
references, and their defaults against today's search-contempt, bit for bit.

- the ratio schedules against ``gather_reference.lc0_hybrid_ratio``, a transcription of
  lc0's ``GetDynamicHybridRatio`` (float64; thermal annealing's draw averaged numerically);
- the frozen-node draw (``selection.frozen_slot``) on a grid of uniforms against the
  closed-form distribution: a share ``ratio`` of the visits sample, with probabilities
  N^(1/T) / sum N^(1/T);
- whole searches against ``gather_reference.ReferenceSearch`` (every node's visits by
  move path, collisions, playouts), in the Searcher shapes ``test_gather_reference`` uses;
- the defaults: selection on real frozen trees equals a copy of today's
  ``select_child``; (slow) whole trees equal, array for array, those of a search run with
  that copy in place of the new one.
"""

from __future__ import annotations

import functools
import math

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zerochess import compile_cache
from zerochess.chess.expander import Expander
from zerochess.errors import ConfigError
from zerochess.neural.toy import linear_model
from zerochess.search import gather
from zerochess.search.api import Searcher, tree_key
from zerochess.search.config import SearchConfig
from zerochess.search.contempt import HYBRID_RATIO_MODES, hybrid_ratio, parse_schedule
from zerochess.search.move_filter import excluded_edges
from zerochess.search.params import stack_configs
from zerochess.search.selection import (
    _NEG_INF,
    _RULES,
    child_stats,
    frozen_slot,
    sample_frozen,
    select_child,
)
from zerochess.search.tree import node_edges
from zerochess.uci.options import OptionError, OptionValues

from gather_reference import ReferenceSearch, lc0_hybrid_ratio, walk
from strategies import seeded_positions
from tree_walk import contempt_uniform, network_evaluate, tree_arrays, walk_paths

SIMS = 48
MODEL = linear_model(seed=3)


POSITIONS = seeded_positions(16, seed=17)


@functools.cache
def _searcher(leaves: int) -> Searcher:
    # test_gather_reference's searchers (the same shapes: compiled programs are shared)
    return Searcher(MODEL, max_nodes=SIMS + 1 + 4 * 8, leaves_per_step=leaves,
                    expander=Expander(0), groups=1, shards=1)


@pytest.fixture(autouse=True, scope="module")
def _drop_searchers():
    yield
    _searcher.cache_clear()


# --- the ratio schedules ------------------------------------------------------------------

WAVES = ("sawtooth_wave", "oscillating", "heartbeat", "multi_timescale")


def _shortest_period(cfg: SearchConfig) -> float:
    periods = [cfg.hybrid_shape_param1]
    if cfg.hybrid_ratio_mode in ("heartbeat", "multi_timescale"):
        periods.append(cfg.hybrid_shape_param2)
    return min([p for p in periods if p > 0], default=math.inf)


def _shape1(mode: str) -> float:
    """A shape parameter 1 that means something in ``mode``: a step count, a period in
    nodes for the waves, else a centre / level in [0, 1]."""
    if mode in ("steps", "step_decay", "power"):
        return 3.0
    if mode in WAVES:
        return 211.0
    return 0.6


def _mode_configs() -> list[SearchConfig]:
    """Every mode with lc0's defaults and with other shapes (steps, periods, peaks)."""
    out = []
    for mode in HYBRID_RATIO_MODES:
        out.append(SearchConfig(n_scl=5, hybrid_ratio_mode=mode, hybrid_sampling_ratio=0.35))
        out.append(SearchConfig(n_scl=20, hybrid_ratio_mode=mode, hybrid_min_ratio=0.05,
                                hybrid_max_ratio=0.95, hybrid_scaling_factor=900,
                                hybrid_shape_param1=_shape1(mode),
                                hybrid_shape_param2=0.25,
                                hybrid_ratio_schedule="30:0.9 100:0.2 400:0.7"))
        if mode in WAVES:
            out.append(SearchConfig(n_scl=2, hybrid_ratio_mode=mode, hybrid_shape_param1=97.0,
                                    hybrid_shape_param2=13.0))
        if mode in ("step_decay", "steps", "heartbeat", "power"):  # lc0's p1 <= 0 branch
            out.append(SearchConfig(n_scl=2, hybrid_ratio_mode=mode, hybrid_shape_param1=-1.0))
    return out


def test_hybrid_ratio_follows_lc0_formulas():
    """Every mode, at node counts from the freeze on, equals lc0's formula (float32 here,
    float64 there; counts chosen off the step functions' jumps)."""
    counts = [1, 2, 3, 17, 40, 101, 333, 1001, 2999, 8_000, 123_457]
    # (the waves only within 50 periods: further out a float32 phase, lc0's too, is noise)
    cases = [(c, c.n_scl + k) for c in _mode_configs() for k in counts
             if c.hybrid_ratio_mode not in WAVES or k / _shortest_period(c) < 50]
    params = stack_configs([c for c, _ in cases])
    visits = jnp.asarray([n for _, n in cases], jnp.int32)
    got = np.asarray(jax.jit(jax.vmap(hybrid_ratio))(params, visits))
    want = np.array([lc0_hybrid_ratio(c, n, c.n_scl) for c, n in cases])
    assert np.all((got >= 0) & (got <= 1))
    bad = np.flatnonzero(np.abs(got - want) > 2e-4)
    assert not bad.size, [(cases[i][0].hybrid_ratio_mode, cases[i][1], got[i], want[i])
                          for i in bad[:5]]
    # the modes are not all the same function: the comparison can fail
    assert len({round(float(x), 4) for x in got}) > 40


# --- the frozen-node draw -----------------------------------------------------------------

FROZEN = np.array([5, 0, 3, 1, 0, 7, 7, 2], np.int32)


def _draw_frequencies(cfg: SearchConfig, grid: int = 1 << 14) -> tuple[float, np.ndarray]:
    """(share of sampled visits, frequency of each sampled slot) over u on a fine grid."""
    params = jax.tree.map(lambda x: x[0], stack_configs([cfg]))
    u = (np.arange(grid, dtype=np.float64) + 0.5) / grid
    sampled, slots = jax.jit(jax.vmap(frozen_slot, in_axes=(None, None, None, 0)))(
        params, jnp.asarray(FROZEN), jnp.int32(cfg.n_scl + 1), jnp.asarray(u, jnp.float32))
    sampled, slots = np.asarray(sampled), np.asarray(slots)
    counts = np.bincount(slots[sampled], minlength=len(FROZEN))
    return sampled.mean(), counts / max(counts.sum(), 1)


@pytest.mark.parametrize("temperature", [1.0, 0.5, 0.2, 0.0])
@pytest.mark.parametrize("ratio", [1.0, 0.6])
def test_frozen_draw_distribution(temperature, ratio):
    """A share ``ratio`` of the visits sample; those pick a child with probability
    N^(1/T) / sum N^(1/T) (T = 0: the most visited, evenly); the rest go to PUCT."""
    share, freq = _draw_frequencies(SearchConfig(n_scl=3, sc_temperature=temperature,
                                                 hybrid_sampling_ratio=ratio))
    if temperature == 0.0:
        want = (FROZEN == FROZEN.max()).astype(float)
    else:
        want = np.where(FROZEN > 0, FROZEN.astype(float) ** (1.0 / temperature), 0.0)
    want /= want.sum()
    assert abs(share - ratio) < 1e-3
    np.testing.assert_allclose(freq, want, atol=2e-3)


def test_frozen_draw_default_is_plain_sampling():
    """The defaults sample every visit with exactly today's ``sample_frozen(frozen, u)``."""
    params = jax.tree.map(lambda x: x[0], stack_configs([SearchConfig(n_scl=3)]))
    u = jnp.asarray(np.random.default_rng(0).random(4096), jnp.float32)
    sampled, slots = jax.vmap(frozen_slot, in_axes=(None, None, None, 0))(
        params, jnp.asarray(FROZEN), jnp.int32(9), u)
    assert bool(np.all(np.asarray(sampled)))
    np.testing.assert_array_equal(np.asarray(slots),
                                  np.asarray(jax.vmap(sample_frozen, (None, 0))(FROZEN, u)))
    # the edges: u next to 1 and 0, totals at and around powers of two, beyond 2^24
    rng = np.random.default_rng(2)
    frozen = rng.integers(0, 4, (64, len(FROZEN))).astype(np.int32)
    frozen[:, -1] = np.maximum(frozen[:, -1], 1)
    for i, total in enumerate([1, 2, 3, 4, 5, 7, 8, 1024, 1025, 2**24 - 1, 2**24, 2**24 + 3,
                               2**30 + 5]):
        frozen[i] = 0
        frozen[i, (i * 3) % len(FROZEN)] = total
    edges = jnp.asarray([1 - 2**-24, 1 - 2**-23, 0.0, 2**-24, 0.5, 0.999], jnp.float32)
    one = jax.vmap(frozen_slot, in_axes=(None, None, None, 0))
    new = jax.vmap(lambda f: one(params, f, jnp.int32(9), edges)[1])(jnp.asarray(frozen))
    old = jax.vmap(lambda f: jax.vmap(lambda x: sample_frozen(f, x))(edges))(
        jnp.asarray(frozen))
    np.testing.assert_array_equal(np.asarray(new), np.asarray(old))


# --- whole searches against the reference -------------------------------------------------

def _reference(board: chess.Board, cfg: SearchConfig, leaves: int, seed: int,
               index: int) -> ReferenceSearch:
    key = tree_key(seed, index)
    return ReferenceSearch(board, cfg, functools.partial(network_evaluate, MODEL),
                           lambda draw, depth: contempt_uniform(key, draw, depth), leaves)


def _tree_visits(arrays: dict, i: int, board: chess.Board) -> dict:
    return {path: int(arrays["visits"][i, node]) for path, node in walk_paths(arrays, i, board)
            if arrays["visits"][i, node] > 0}


CASES = {
    "L8-temperature-hybrid": (8, [SearchConfig(n_scl=2, sc_temperature=0.4,
                                               hybrid_sampling_ratio=0.6, cpuct=2.5)]),
    "L8-linear-T0": (8, [SearchConfig(n_scl=1, hybrid_ratio_mode="linear",
                                      hybrid_scaling_factor=30, hybrid_min_ratio=0.1,
                                      hybrid_max_ratio=1.0, sc_temperature=0.0)]),
    "L3-schedule": (3, [SearchConfig(n_scl=3, hybrid_ratio_mode="manual_schedule",
                                     hybrid_ratio_schedule="6:0.2 30:0.9", fpu_absolute=True,
                                     fpu_value=-1.0, max_collision_visits_scaling_start=1,
                                     max_collision_visits_scaling_end=40,
                                     max_collision_visits=4)]),
    # per-tree data: several modes and temperatures in one batch
    "L8-mixed": (8, [SearchConfig(n_scl=2, hybrid_ratio_mode="thermal_annealing",
                                  hybrid_scaling_factor=20),
                     SearchConfig(n_scl=1, hybrid_ratio_mode="oscillating",
                                  hybrid_shape_param1=7.0, sc_temperature=0.7),
                     SearchConfig(n_scl=2),
                     SearchConfig(n_scl=1, hybrid_ratio_mode="sigmoid",
                                  hybrid_scaling_factor=25, hybrid_min_ratio=0.0,
                                  hybrid_max_ratio=1.0)]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_search_equals_reference(case):
    leaves, pool = CASES[case]
    configs = [pool[i % len(pool)] for i in range(len(POSITIONS))]
    searcher = _searcher(leaves)
    batch = searcher.run(searcher.init(POSITIONS, configs, seed=5), SIMS)
    arrays = tree_arrays(batch.state)
    results = searcher.results(batch)
    mismatches, differs = [], 0
    for i, (board, res) in enumerate(zip(POSITIONS, results, strict=True)):
        ref = _reference(board, configs[i], leaves, 5, i)
        ref.run(SIMS)
        want = {path: node.n for path, node in walk(ref.root).items() if node.n > 0}
        got = _tree_visits(arrays, i, board)
        if (got, res.collisions, res.playouts) != (want, ref.collisions, ref.root.n):
            mismatches.append((i, board.fen()))
        plain = _reference(board, SearchConfig(**{
            k: getattr(configs[i], k) for k in ("n_scl", "cpuct", "fpu_absolute", "fpu_value",
                                                 "max_collision_visits_scaling_start",
                                                 "max_collision_visits_scaling_end",
                                                 "max_collision_visits")}), leaves, 5, i)
        plain.run(SIMS)
        differs += {p: n.n for p, n in walk(plain.root).items() if n.n > 0} != want
    assert not mismatches, mismatches[:3]
    # the options changed the search (this comparison can fail)
    assert differs >= 3, differs


def test_ratio_zero_is_puct():
    """HybridSamplingRatio 0: frozen nodes never sample, so the tree is PUCT's, exactly."""
    searcher = _searcher(8)
    a = searcher.run(searcher.init(POSITIONS, SearchConfig(), seed=4), SIMS)
    b = searcher.run(searcher.init(POSITIONS, SearchConfig(n_scl=1, hybrid_sampling_ratio=0.0),
                                   seed=4), SIMS)
    assert np.asarray(b.state.tree.edges.frozen).any()  # nodes froze, and were not sampled
    for name in ("visits", "wl_sum", "d_sum"):
        np.testing.assert_array_equal(np.asarray(getattr(a.state.tree, name)),
                                      np.asarray(getattr(b.state.tree, name)))
    np.testing.assert_array_equal(np.asarray(a.state.tree.edges.child),
                                  np.asarray(b.state.tree.edges.child))


# --- the defaults are today's search, bit for bit -----------------------------------------

def _select_child_today(tree, params, node, depth, u, edges=None, rule=None, shortcuts=None):
    """``selection.select_child`` as it was before these options (zerochess 6b8dfe0), which
    computed every feature for every tree (``shortcuts`` ignored)."""
    del shortcuts
    edges = node_edges(tree, node) if edges is None else edges
    excluded = excluded_edges(jnp, params.move_avoid, params.move_allowed,
                              params.move_allow_until, tree.position.board[node],
                              tree.position.turn[node], depth, edges.move, edges.valid)
    edges = edges._replace(valid=edges.valid & ~excluded)
    stats = child_stats(tree, node, edges)
    if rule is None:
        scores = jax.lax.switch(params.selection, _RULES, tree, params, node, depth, stats)
    else:
        scores = _RULES[rule](tree, params, node, depth, stats)
    scores = jnp.where(stats.valid, scores, _NEG_INF)
    tied = stats.valid & (scores == jnp.max(scores))
    puct_slot = jnp.argmax(jnp.where(tied, edges.prior, -1.0)).astype(jnp.int32)
    is_frozen = (depth % 2 == 1) & (jnp.sum(edges.frozen) > 0)
    return jnp.where(is_frozen, sample_frozen(edges.frozen, u), puct_slot)


def test_default_selection_is_todays():
    """On real trees (frozen nodes at odd depths, visits in flight after a gather), the
    default options select exactly as today's code, node by node, for many draws."""
    searcher = _searcher(8)
    cfg = SearchConfig(n_scl=2, max_collision_visits_scaling_start=1,
                       max_collision_visits_scaling_end=50, max_collision_visits=5)
    state = searcher.run(searcher.init(POSITIONS, cfg, seed=9), SIMS - 8).state
    state, _, _, _ = searcher._select(state, state.tree.simulations + 8)
    tree, params = state.tree, state.params
    nodes = int(tree.node_count.max())
    expanded = np.asarray((tree.num_legal > 0) & (tree.visits > 0))[:, :nodes]
    rng = np.random.default_rng(1)
    u = jnp.asarray(rng.random((len(POSITIONS), nodes, 4)), jnp.float32)
    index = jnp.arange(nodes)

    def per_tree(fn):
        def one(t, p, uu):
            depth = t.depth[index].astype(jnp.int32)
            return jax.vmap(lambda n, d, x: jax.vmap(lambda y: fn(t, p, n, d, y))(x))(
                index, depth, uu)
        return jax.jit(jax.vmap(one))

    new = np.asarray(per_tree(select_child)(tree, params, u))
    old = np.asarray(per_tree(_select_child_today)(tree, params, u))
    frozen = np.asarray(jax.vmap(lambda t: jax.vmap(
        lambda n: jnp.sum(node_edges(t, n).frozen) > 0)(index))(tree))
    assert (frozen & expanded).sum() >= 10  # frozen nodes were checked
    np.testing.assert_array_equal(new[expanded], old[expanded])


@pytest.mark.slow
def test_default_trees_are_todays_bit_for_bit(monkeypatch, tmp_path):
    """Whole trees (every array) of default-option searches, search-contempt and PUCT,
    single- and multi-leaf, equal those of the same searches with today's
    ``select_child`` patched in (compiled afresh: caches pointed at an empty folder).
    A batch of PUCT trees alone takes the shortcuts of a batch without frozen nodes
    (``selection.BatchShortcuts``: no random bits, no sampling); it is compared too."""
    mixed = [SearchConfig(n_scl=2) if i % 3 else (SearchConfig(n_scl=1) if i % 2
                                                    else SearchConfig())
             for i in range(len(POSITIONS))]
    runs = {(1, "mixed"): mixed, (8, "mixed"): mixed,
            (1, "puct"): [SearchConfig()] * len(POSITIONS)}

    def trees(leaves, cfgs):
        searcher = Searcher(MODEL, max_nodes=SIMS + 1 + 4 * 8, leaves_per_step=leaves,
                            expander=Expander(0), groups=1, shards=1)
        return jax.device_get(searcher.run(searcher.init(POSITIONS, cfgs, seed=13),
                                           SIMS).state.tree)

    now = {run: trees(run[0], cfgs) for run, cfgs in runs.items()}
    old_dir = jax.config.jax_compilation_cache_dir
    try:
        jax.clear_caches()
        compile_cache.enable(str(tmp_path), override=True)
        monkeypatch.setattr(gather, "select_child", _select_child_today)
        today = {run: trees(run[0], cfgs) for run, cfgs in runs.items()}
    finally:
        monkeypatch.undo()
        jax.clear_caches()
        if old_dir:
            compile_cache.enable(old_dir, override=True)
    for run in runs:
        flat_now, _ = jax.tree.flatten_with_path(now[run])
        flat_today = jax.tree.leaves(today[run])
        for (path, a), b in zip(flat_now, flat_today, strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b),
                                          err_msg=f"{run} {jax.tree_util.keystr(path)}")
        assert np.asarray(now[run].edges.frozen).any() == (run[1] == "mixed")


# --- settings -----------------------------------------------------------------------------

@pytest.mark.parametrize("field,value,phrase", [
    ("sc_temperature", 1.5, "sc_temperature"), ("sc_temperature", -0.1, "sc_temperature"),
    ("sc_temperature", float("nan"), "sc_temperature"),
    ("hybrid_sampling_ratio", 1.01, "hybrid_sampling_ratio"),
    ("hybrid_sampling_ratio", "0.5", "hybrid_sampling_ratio"),
    ("hybrid_ratio_mode", "chaotic", "not reproducible|no reproducible"),
    ("hybrid_ratio_mode", "Linear", "hybrid_ratio_mode"),
    ("hybrid_ratio_mode", ["static"], "hybrid_ratio_mode"),
    ("hybrid_ratio_schedule", "1000:0.5 8000", "'8000' is not a nodes:ratio pair"),
    ("hybrid_ratio_schedule", "1000:1.5", "outside \\[0, 1\\]"),
    ("hybrid_ratio_schedule", "x:0.5", "'x' is not an integer"),
    ("hybrid_ratio_schedule", "5:0.1 5:0.2", "appears twice"),
    ("hybrid_ratio_schedule", " ".join(f"{i}:0.5" for i in range(17)), "at most 16"),
    ("hybrid_ratio_schedule", 5, "nodes:ratio pairs"),
    ("hybrid_ratio_schedule", [(1, 0.5, 3)], "not a \\(nodes, ratio\\) pair"),
    ("hybrid_scaling_factor", 0, "hybrid_scaling_factor"),
    ("hybrid_scaling_factor", 2.5, "hybrid_scaling_factor"),
    ("hybrid_shape_param1", 1e5, "hybrid_shape_param1"),
])
def test_bad_settings_are_clear_errors(field, value, phrase):
    with pytest.raises(ConfigError, match=phrase):
        SearchConfig(**{field: value})


def test_schedule_forms():
    """lc0's string, a list of pairs and YAML-style lists give the same sorted points."""
    want = ((5, 0.25), (1000, 0.5), (8000, 0.9))
    assert parse_schedule("1000:0.5 8000:0.9 5:0.25", "s") == want
    assert parse_schedule([[8000, 0.9], (5, 0.25), (1000, "0.5")], "s") == want
    cfg = SearchConfig.from_dict({"hybrid_ratio_schedule": [[8000, 0.9], [5, 0.25],
                                                            [1000, 0.5]]})
    assert cfg == SearchConfig(hybrid_ratio_schedule="1000:0.5 8000:0.9 5:0.25")
    assert parse_schedule("", "s") == ()
    assert SearchConfig().hybrid_ratio_schedule == ((1000, 0.5), (8000, 0.9))  # lc0's


def test_uci_options_map_to_the_config():
    values = OptionValues()
    assert values.search_config() == SearchConfig()  # the defaults are today's search
    for name, text in [("ScLimit", "5"), ("ScTemperature", "0.5"),
                       ("HybridSamplingRatio", "0.8"), ("hybridratiomode", "Manual_Schedule"),
                       ("HybridRatioSchedule", "100:0.3 10:0.1"), ("HybridMinRatio", "0.1"),
                       ("HybridMaxRatio", "0.7"), ("HybridScalingFactor", "500"),
                       ("HybridShapeParam1", "2"), ("HybridShapeParam2", "-3")]:
        values.set(name, text)
    assert values.search_config() == SearchConfig(
        n_scl=5, sc_temperature=0.5, hybrid_sampling_ratio=0.8,
        hybrid_ratio_mode="manual_schedule", hybrid_ratio_schedule=((10, 0.1), (100, 0.3)),
        hybrid_min_ratio=0.1, hybrid_max_ratio=0.7, hybrid_scaling_factor=500,
        hybrid_shape_param1=2.0, hybrid_shape_param2=-3.0)


@pytest.mark.parametrize("name,text,phrase", [
    ("ScTemperature", "2", "between 0 and 1"),
    ("HybridSamplingRatio", "-0.5", "between 0 and 1"),
    ("HybridRatioMode", "chaotic", "not supported"),
    ("HybridRatioMode", "zigzag", "must be one of"),
    ("HybridRatioSchedule", "100:0.3 junk", "'junk' is not a nodes:ratio pair"),
    ("HybridScalingFactor", "0", "between 1 and"),
])
def test_uci_bad_values_keep_the_old_one(name, text, phrase):
    values = OptionValues()
    with pytest.raises(OptionError, match=phrase):
        values.set(name, text)
    assert values.search_config() == SearchConfig()


def test_contempt_mode_tb_is_pending():
    """ContemptModeTB (lc0's asymmetric tablebase probing) is accepted and reported as not
    used: zerochess has no tablebases."""
    values = OptionValues()
    values.set("ContemptModeTB", "5")
    assert values.changed_pending() == ["ContemptModeTB"]
    assert values.search_config() == SearchConfig()
