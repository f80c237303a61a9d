"""``zerochess bench --leaves``: simulations/s over batch size B x leaves per step L."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import chess
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.bench import record
from zerochess.bench.fixtures import bench_positions, fill
from zerochess.bench.record import machine_info
from zerochess.chess import encoding
from zerochess.neural import load_model
from zerochess.search import SearchConfig, Searcher
from zerochess.search.loop import empty_state
from zerochess.search.params import stack_configs

GRID = {"models": ("builtin", "resnet:6x64"), "batches": (1, 16, 64, 256),
        "leaves": (1, 4, 16, 64, 256), "sims": 800}
QUICK = {"models": ("builtin", "resnet:6x64"), "batches": (1, 64), "leaves": (1, 16, 64),
         "sims": 256}
# the two tiny grids share their search shapes (B=2 trees of 17 nodes, L=1 and L=4), so a
# smoke run of both modes compiles each program once (the second takes it from the cache)
TINY = {"models": ("resnet:1x8",), "batches": (2,), "leaves": (1, 4), "sims": 16}
GPU_POINTS = ((1, 256), (1024, 1), (1024, 8))
GPU = {"models": ("resnet:6x64", "resnet:15x768"), "points": GPU_POINTS, "sims": 800}
GPU_TINY = {"models": ("resnet:1x8",), "points": ((2, 1), (2, 4)), "sims": 16}


def run_point(model: Any, boards: Sequence[chess.Board], batch: int, leaves: int,
              sims: int, rules: str | None = None) -> dict[str, Any]:
    """One timed search of ``batch`` positions (see docs/DESIGN.md); ``rules``: the
    rules backend (default: ``Searcher``'s for this machine)."""
    rows = fill(boards, batch)
    searcher = Searcher(model, max_nodes=sims + 1, leaves_per_step=leaves, rules=rules)
    start = time.perf_counter()
    searcher.results(searcher.run(searcher.init(rows, SearchConfig(), 1), min(sims, 4 * leaves)))
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    done = searcher.run(searcher.init(rows, SearchConfig(), 0), sims)
    jax.block_until_ready(done.shards)
    seconds = time.perf_counter() - start
    stats = searcher.last_run
    res = searcher.results(done)
    return {"model": model.name, "batch": batch, "leaves": leaves, "sims": sims,
            "rules": searcher.rules.name, "groups": searcher.groups,
            "shards": len(done.shards), "compile_s": compile_s,
            "seconds": seconds, "sims_per_s": batch * sims / seconds,
            "collisions": sum(r.collisions for r in res),
            "dropped": sum(r.dropped_simulations for r in res),
            "rows_used": stats.rows_used, "rows_available": stats.rows_available,
            "rows_capacity": stats.rows_capacity, "host_s": stats.host_s,
            "wait_s": stats.wait_s}


def network_only(model: Any, boards: Sequence[chess.Board], rows: int,
                 repeats: int = 3) -> dict[str, Any]:
    """Evaluations/s of the network alone on batches of ``rows`` encoded positions."""
    planes = jnp.asarray(np.stack([encoding.encode_board(b) for b in fill(boards, rows)]))
    apply = jax.jit(model.apply)
    jax.block_until_ready(apply(model.params, planes))
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(apply(model.params, planes))
        best = min(best, time.perf_counter() - start)
    return {"rows": rows, "seconds": best, "evals_per_s": rows / best}


def tree_memory_gb(batch: int, num_nodes: int, edges_per_node: int | None = None) -> float:
    """Device memory of the trees of a batch (GiB), from the shapes alone."""
    from zerochess.search.tree import DEFAULT_EDGES_PER_NODE

    params = stack_configs([SearchConfig()])
    params = jax.tree.map(lambda a: jnp.repeat(a, batch, axis=0), params)
    shapes = jax.eval_shape(lambda p: empty_state(p, num_nodes,
                                                  edges_per_node or DEFAULT_EDGES_PER_NODE),
                            params)
    return sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(shapes)) / 2**30


def run_grid(grid: dict[str, Any], log: Any = print) -> dict[str, Any]:
    boards = bench_positions()
    out: dict[str, Any] = {"machine": machine_info(), "grid": grid, "points": []}
    for spec in grid["models"]:
        model = load_model(spec)
        for batch in grid["batches"]:
            for leaves in grid["leaves"]:
                p = run_point(model, boards, batch, leaves, grid["sims"])
                out["points"].append(p)
                log(f"{spec:>13} B={batch:<5} L={leaves:<4} S={grid['sims']}: "
                    f"{p['sims_per_s']:8.0f} sims/s  rows used {p['rows_used']}/"
                    f"{p['rows_available']}  host {p['host_s']:.1f}s of {p['seconds']:.1f}s")
    return out


def run_gpu_grid(grid: dict[str, Any], log: Any = print) -> dict[str, Any]:
    boards = bench_positions()
    out: dict[str, Any] = {"machine": machine_info(), "grid": grid, "points": []}
    for spec in grid["models"]:
        model = load_model(spec)
        for batch, leaves in grid["points"]:
            p = run_point(model, boards, batch, leaves, grid["sims"])
            net = network_only(model, boards, batch * leaves)
            p["network_only"] = net
            p["ratio_search_to_network"] = p["sims_per_s"] / net["evals_per_s"]
            out["points"].append(p)
            log(f"{spec:>14} B={batch:<5} L={leaves:<4} S={grid['sims']}: {p['sims_per_s']:9.0f}"
                f" sims/s; network alone on {batch * leaves} rows {net['evals_per_s']:9.0f} "
                f"evals/s; ratio {p['ratio_search_to_network']:.2f}")
    return out


def main(args: Any) -> int:
    """``zerochess bench --leaves`` / ``--gpu-grid`` [``--quick``] [``--tiny``] [``--json``]."""
    tiny = bool(getattr(args, "tiny", False))
    head = record.header("gpu_grid" if getattr(args, "gpu_grid", False) else "leaves", (),
                         getattr(args, "note", None))
    record.print_header(head)
    if getattr(args, "gpu_grid", False):
        grid = GPU_TINY if tiny else GPU
        if getattr(args, "models", None):
            grid = {**grid, "models": tuple(args.models)}
        res = run_gpu_grid(grid, log=lambda s: print(s, flush=True))
    else:
        grid = TINY if tiny else QUICK if getattr(args, "quick", False) else GRID
        res = run_grid(grid, log=lambda s: print(s, flush=True))
    res["tree_memory_gib_b1024_n10001"] = tree_memory_gb(1024, 10_001)
    print(f"tree memory at B=1024, N=10,001: {res['tree_memory_gib_b1024_n10001']:.2f} GiB")
    if getattr(args, "json", None):
        record.write(args.json, head, res)  # machine, versions, commit, model hashes
    return 0


__all__ = ["GPU", "GPU_POINTS", "GPU_TINY", "GRID", "QUICK", "TINY", "main", "network_only",
           "run_gpu_grid", "run_grid", "run_point", "tree_memory_gb"]
