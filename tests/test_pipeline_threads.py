"""The search pipeline with one host thread per shard (jax's CPU backend runs the
programs of one thread one after another, so zerochess drives each shard from its own
thread there): the shards' host expansions really come from two threads, and the trees
grow exactly as when one thread drives both shards (and as one shard)."""

from __future__ import annotations

import threading

import chess
import numpy as np

from zerochess import SearchConfig, Searcher, load_model

BOARDS = [chess.Board(),
          chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3"),
          chess.Board("r3k2r/ppp2ppp/2n5/3q4/3P4/2P5/P4PPP/R2QK2R w KQkq - 0 12")] * 6
COUNTS = [9, 30, 17] * 6


def _grow(shards: int, threads: bool | None, cache_size: int = 0, progress=None,
          networks: set[int] | None = None) -> tuple[list, set[int]]:
    """The trees, and the threads that expanded them (``networks``: add the threads that
    ran the networks)."""
    callers: set[int] = set()
    searcher = Searcher(load_model("resnet:1x8"), max_nodes=33, shards=shards,
                        cache_size=cache_size)
    expand, network = searcher.host_expand, searcher._net_outputs

    def recorded(request):
        callers.add(threading.get_ident())
        return expand(request)

    def recorded_network(*a, **k):
        if networks is not None:
            networks.add(threading.get_ident())
        return network(*a, **k)

    searcher.host_expand, searcher._net_outputs = recorded, recorded_network
    if threads is not None:
        searcher.driver.threads = threads
    batch = searcher.init(BOARDS, [SearchConfig()] * len(BOARDS), seed=5)
    batch = searcher.run(batch, COUNTS, progress=progress)
    stats = searcher.last_run
    assert stats.rows_used == sum(COUNTS)  # every shard's steps counted once
    return searcher.results(batch), callers


def _same(a, b) -> None:
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x.visits, y.visits)
        np.testing.assert_allclose(x.q, y.q, rtol=0, atol=1e-6)
        assert x.best_move == y.best_move


def test_threaded_shards_grow_the_same_trees_from_two_threads():
    threaded, callers = _grow(2, True)
    assert len(callers) == 2  # each shard expanded on its own thread
    one_thread, callers = _grow(2, False)
    assert len(callers) == 1
    one_shard, _ = _grow(1, True)
    _same(threaded, one_thread)
    _same(threaded, one_shard)
    for r, n in zip(threaded, COUNTS, strict=True):
        assert int(np.sum(r.visits)) == n


def test_progress_reports_the_whole_batch_from_threads():
    seen: list[tuple[int, int]] = []
    _grow(2, True, progress=lambda done, total: seen.append((done, total)))
    assert seen, "progress was never called"
    assert all(total == sum(COUNTS) for _, total in seen)
    done = [d for d, _ in seen]
    assert done == sorted(done)
    assert 0 <= done[0] and done[-1] <= sum(COUNTS)


def test_a_shared_cache_keeps_one_expanding_thread_and_runs_networks_beside_it():
    network_threads: set[int] = set()
    cached, callers = _grow(2, True, cache_size=1024, networks=network_threads)
    assert len(callers) == 1
    assert network_threads and not network_threads & callers  # networks on helper threads
    plain, _ = _grow(2, False, cache_size=1024)
    _same(cached, plain)


def test_the_default_on_cpu_is_the_threaded_driver():
    default, callers = _grow(2, None)
    assert len(callers) == 2  # the tests run on jax's CPU backend
    other, _ = _grow(2, False)
    _same(default, other)
