"""The search driver seam (``zerochess.search.drivers``) and ``SearcherSettings``: the rules
choose the driver once; both drivers stop at a passed deadline and report progress that
only grows, to the total, through the one shared plumbing; bad settings are refused with
errors that quote them."""

from __future__ import annotations

import dataclasses
import inspect
import threading
import time

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zerochess.errors import ConfigError
from zerochess.search import SearcherSettings, loop
from zerochess.search.api import Searcher
from zerochess.search.compiled import StepCounts
from zerochess.search.config import SearchConfig
from zerochess.search.drivers import CompiledSteps, HostPipeline
from zerochess.search.params import stack_configs

from searchers import NODES, TOY_MODEL

BOARDS = [chess.Board(), chess.Board(
    "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3")]


def _toy(**kwargs) -> Searcher:
    # test_reuse's shapes (two trees of NODES nodes, one shard): no program of its own
    return Searcher(TOY_MODEL, max_nodes=NODES, shards=1, **kwargs)


def _monotone_to(seen: list[tuple[int, int]], total: int, reached: bool) -> None:
    assert seen, "progress was never called"
    done = [d for d, _ in seen]
    assert all(t == total for _, t in seen)
    assert done == sorted(done) and 0 <= done[0], done
    assert (done[-1] == total) if reached else (done[-1] < total), (done[-1], total)


class _NoSwitch:
    """The searcher's rules, except that reading ``on_device`` fails the test."""

    def __init__(self, rules):
        self._rules = rules

    def __getattr__(self, name):
        assert name != "on_device", "the driver is chosen at construction, not per call"
        return getattr(self._rules, name)


def test_the_rules_choose_the_driver_once():
    host = _toy()
    assert isinstance(host.driver, HostPipeline) and host.groups == 1
    device = Searcher(TOY_MODEL, max_nodes=NODES, rules="device")
    assert isinstance(device.driver, CompiledSteps) and device.groups == 1
    assert isinstance(_toy(leaves_per_step=2).driver, HostPipeline)
    assert _toy(leaves_per_step=2).groups == 2  # the host pipeline's default for L > 1
    host.rules = _NoSwitch(host.rules)
    seen: list[tuple[int, int]] = []
    batch = host.run(host.init(BOARDS, seed=1), [20, 7], progress=lambda d, t: seen.append((d, t)))
    assert [r.root_visits for r in host.results(batch)] == [21, 8]
    _monotone_to(seen, 27, reached=True)
    assert host.last_run.rows_used == 27


def test_the_host_pipeline_stops_at_the_deadline():
    """A slow host expansion (the driver's own unit of work) and a short time limit: the run
    returns near the limit with part of the simulations, progress grown but short."""
    searcher = _toy()
    expand = searcher.host_expand

    def slow(request):
        time.sleep(0.05)
        return expand(request)

    searcher.host_expand = slow
    seen: list[tuple[int, int]] = []
    batch = searcher.init(BOARDS, seed=2)
    t0 = time.perf_counter()
    batch = searcher.run(batch, 150, time_limit_s=0.4, progress=lambda d, t: seen.append((d, t)))
    assert time.perf_counter() - t0 < 2.0  # unbounded: 150 slow steps, 7.5 s
    sims = jax.device_get(batch.shards[0].tree.simulations)
    assert 0 < sims.max() < 150
    _monotone_to(seen, 300, reached=False)


def _states(shards: int, trees: int) -> list:
    params = stack_configs([SearchConfig()] * trees, False, False)
    return [loop.empty_state(params, 4, 4) for _ in range(shards)]


def _fake_run_steps(threads: set[int], step_s: float, meet: threading.Barrier | None = None):
    """``compiled.run_steps``' contract on ``simulations`` alone: each step starts one
    simulation of every tree below its limit (``step_s`` each). ``meet``: a thread's first
    call waits there for the other shard's (they run side by side)."""

    def run_steps(state, cache, limit, max_steps, net_params, buckets):
        if meet is not None and threading.get_ident() not in threads:
            meet.wait(timeout=30)
        sims = np.asarray(state.tree.simulations)
        left = np.maximum(np.asarray(limit) - sims, 0)
        steps = int(min(int(max_steps), left.max(initial=0)))
        threads.add(threading.get_ident())
        time.sleep(step_s * steps)
        sims = sims + np.minimum(left, steps)
        tree = state.tree.replace(simulations=jnp.asarray(sims, jnp.int32))
        counts = StepCounts(steps=steps, rows_used=int(np.minimum(left, steps).sum()),
                            rows_available=0, left=int((np.asarray(limit) - sims).sum()),
                            nonfinite=np.zeros(len(sims), bool))
        return state.replace(tree=tree), cache, counts

    return run_steps


@pytest.mark.parametrize("observer", [False, True])
def test_compiled_steps_report_progress_to_the_total_from_threads_or_one(observer):
    """Two shards: a thread each, or one thread in turn with an observer. Progress only
    grows and ends at the total (a shard not yet run counts what it has left), and the
    statistics hold both shards' steps."""
    threads: set[int] = set()
    driver = CompiledSteps(_fake_run_steps(threads, 0.0, None if observer else
                                           threading.Barrier(2)), 1)
    seen: list[tuple[int, int]] = []
    budget = np.array([30, 5, 12, 0, 7, 30, 1, 2])
    looks: list[int] = []
    observe = (lambda shards: looks.append(1) and False) if observer else None
    states, stats = driver.run(_states(2, 4), budget, 10**6, None,
                               progress=lambda d, t: seen.append((d, t)), observe=observe)
    sims = np.concatenate(jax.device_get([s.tree.simulations for s in states]))
    np.testing.assert_array_equal(sims, budget)
    _monotone_to(seen, int(budget.sum()), reached=True)
    assert len(threads) == (1 if observer else 2)
    assert stats.steps == 30 + 30 and stats.rows_used == budget.sum()
    assert not observer or looks


def test_compiled_steps_stop_at_the_deadline_and_at_the_observer():
    threads: set[int] = set()
    driver = CompiledSteps(_fake_run_steps(threads, 0.01), 1)
    budget = np.full(8, 1000)
    t0 = time.perf_counter()
    seen: list[tuple[int, int]] = []
    states, _ = driver.run(_states(2, 4), budget, 10**6, None,
                           deadline=t0 + 0.3, progress=lambda d, t: seen.append((d, t)))
    assert time.perf_counter() - t0 < 1.5  # unbounded: 1,000 steps of 10 ms per shard
    sims = np.concatenate(jax.device_get([s.tree.simulations for s in states]))
    assert 0 < sims.max() < 1000
    _monotone_to(seen, 8000, reached=False)
    calls: list[int] = []
    states, _ = driver.run(_states(2, 4), budget, 10**6, None,
                           observe=lambda shards: calls.append(1) or len(calls) >= 3)
    assert len(calls) == 3  # the third look stops the run (asked no more after that)
    sims = np.concatenate(jax.device_get([s.tree.simulations for s in states]))
    # the shards run in turn (an observer): the second makes one first call (2 steps)
    assert 0 < sims[:4].max() < 1000 and sims[4:].max() == 2


def test_an_interrupted_run_keeps_the_cache_the_last_call_returned():
    """``run_steps`` donates the cache it is given: after a call fails, the driver (the
    searcher's ``_cache``) holds the one the call before returned, not a deleted one."""
    calls = []
    fake = _fake_run_steps(set(), 0.0)

    def run_steps(state, cache, *args, **kwargs):
        calls.append(cache)
        if len(calls) == 3:
            raise KeyboardInterrupt
        state, _, counts = fake(state, None, *args, **kwargs)
        return state, cache + 1, counts

    driver = CompiledSteps(run_steps, 1)
    driver.cache = 0  # a stand-in: one shard in turn, as with a real cache
    with pytest.raises(KeyboardInterrupt):
        driver.run(_states(2, 4), np.full(8, 100), 10**6, None,
                   progress=lambda d, t: None)  # 2 steps a call at first
    assert calls == [0, 1, 2] and driver.cache == 2


@pytest.mark.parametrize("field, bad, needle", [
    ("max_nodes", 1, "max_nodes must be >= 2, got 1"),
    ("max_nodes", "64", "max_nodes must be an integer, got '64'"),
    ("leaves_per_step", 2.5, "leaves_per_step must be an integer, got 2.5"),
    ("cache_size", -1, "cache_size must be >= 0, got -1"),
    ("cache_history_length", 8, "cache_history_length must be <= 7, got 8"),
    ("edges_per_node", 0, "edges_per_node must be >= 1, got 0"),
    ("shards", 65, "shards must be <= 64, got 65"),
    ("groups", 3, "groups must be <= 2, got 3"),
    ("num_workers", True, "workers must be an integer, got True"),
    ("compilation_cache", 7, "compilation_cache must be a directory, False or None, got 7"),
    ("rules", "gpu", "rules must be one of host, device (or a Rules object), got 'gpu'"),
    ("expander", "fast", "expander must be a zerochess Expander or None, got 'fast'"),
])
def test_settings_refuse_bad_values_quoting_them(field, bad, needle):
    with pytest.raises(ConfigError) as err:
        SearcherSettings(**{field: bad})
    assert needle in str(err.value)
    with pytest.raises(ConfigError) as err:  # the same check through Searcher's keywords
        Searcher(TOY_MODEL, **{field: bad})
    assert needle in str(err.value)


def test_settings_are_plain_frozen_and_overridden_by_keywords():
    settings = SearcherSettings(max_nodes=np.int64(NODES), leaves_per_step=np.int32(1),
                                shards=1.0, compilation_cache=False)
    assert type(settings.max_nodes) is int and type(settings.shards) is int
    with pytest.raises(AttributeError):
        settings.max_nodes = 3  # type: ignore[misc]
    searcher = Searcher(TOY_MODEL, settings, cache_size=64)
    assert searcher.settings == SearcherSettings(max_nodes=NODES, shards=1, cache_size=64,
                                                 compilation_cache=False)
    assert searcher.max_nodes == NODES and searcher.cache_size == 64
    shown = inspect.signature(Searcher).parameters  # help() and the UCI options read it
    assert list(shown)[:2] == ["model", "settings"]
    assert {f.name for f in dataclasses.fields(SearcherSettings)} <= set(shown)
    assert shown["max_nodes"].default == 1024
    with pytest.raises(TypeError, match="max_node"):
        Searcher(TOY_MODEL, max_node=10)
    with pytest.raises(ConfigError, match="settings must be a SearcherSettings, got 64"):
        Searcher(TOY_MODEL, 64)
    with pytest.raises(ConfigError, match="groups=2 overlaps host work"):
        Searcher(TOY_MODEL, rules="device", groups=2)
