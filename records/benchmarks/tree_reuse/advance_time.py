"""The cost of tree reuse (``Searcher.advance``'s compiled program) against the tree's
capacity: it should follow the nodes and edges the tree uses, not its arrays.

    python records/benchmarks/tree_reuse/advance_time.py OUT.json [SRC ...]

For the sources in each SRC (a directory holding ``zerochess/``, e.g. ``git archive REV
src``; default: the installed package), in a fresh process each, interleaved point by
point so that a busy machine slows every source alike:

- ``Searcher(builtin, max_nodes=N, leaves_per_step=16)`` searches the start position for
  1,200 simulations (1,201 nodes, ~29,000 pool entries, at every N);
- then ``Searcher.advance(batch, [[]])`` runs 25 times with no move (the whole tree is
  kept, re-packed, and a new search starts on it); the first 5 are excluded (compile,
  warm-up), and the record keeps the median and the fastest of the other 20, in ms;
- N in {4,096, 65,536 (``zerochess uci``'s tree on a CPU), 262,144}.

The committed 2026-11-27 record timed the compiled advance program alone (the library's
private ``_advance``); the script now times the public call, which adds its host work
(the root's history, a read of the kept flags, the mate check), so its figures are a
little higher and not comparable point for point with that record.
"""

from __future__ import annotations

import json
import sys

NODES = (4096, 65536, 262144)
SIMS = 1200
CALLS, SKIP = 25, 5

WORKER = r"""
import json, statistics, sys, time
import chess, jax
from zerochess.neural import load_model
from zerochess.search import SearchConfig, Searcher

nodes, sims, calls, skip = json.loads(sys.argv[1])
s = Searcher(load_model("builtin"), max_nodes=nodes, leaves_per_step=16, shards=1)
batch = s.run(s.init([chess.Board()], SearchConfig(), seed=0), sims)
kept_nodes = int(batch.state.tree.node_count[0])
times = []
for _ in range(calls):
    start = time.perf_counter()
    batch = s.advance(batch, [[]])  # no move: keep the whole tree, start a new search
    jax.block_until_ready(batch.shards)
    times.append((time.perf_counter() - start) * 1000)
    assert int(batch.state.tree.node_count[0]) == kept_nodes  # the tree was kept
state = batch.state
kept = times[skip:]
print(json.dumps({"median_ms": statistics.median(kept), "min_ms": min(kept),
                  "node_count": int(state.tree.node_count[0]),
                  "edge_count": int(state.tree.edge_count[0]), "times_ms": times}))
"""


def main() -> int:
    from zerochess.bench import record

    path, sources = sys.argv[1], sys.argv[2:] or [None]
    head = record.header("advance_time", ["builtin"],
                         f"B = 1, start position, {SIMS} simulations, then advance with no "
                         "move; ms against max_nodes; sources: "
                         + ", ".join(s or "installed" for s in sources))
    head["command"] = "python " + " ".join(sys.argv)
    record.print_header(head)
    points = []
    for nodes in NODES:
        for src in sources:
            got = record.run_worker(WORKER, [nodes, SIMS, CALLS, SKIP], src)
            points.append({"max_nodes": nodes, "source": src or "installed", **got})
            shown = ("error " + str(got["error"]) if "error" in got else
                     f"median {got['median_ms']:.2f} ms, min {got['min_ms']:.2f} ms")
            print(f"max_nodes {nodes:>7,} {src or 'installed'}: {shown}", flush=True)
    with open(path, "w") as f:
        json.dump({"record": head, "points": points}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
