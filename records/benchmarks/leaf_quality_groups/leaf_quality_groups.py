"""Does the second group in flight cause multi-leaf gathering's quality cost?

``zerochess bench --leaf-quality`` runs L > 1 with two groups in flight per shard (up to
2 L visits pending per tree). This runs the same 200 positions at 800 visits with L = 1
and with L = 8 in one group and in two, and reports the same best move share and the
mean KL(L=1 || variant) of the root visits (the bench's own functions).

    python records/benchmarks/leaf_quality_groups/leaf_quality_groups.py OUT.json [L]
"""

from __future__ import annotations

import sys
import time

from zerochess.bench import lc0_peer, record
from zerochess.bench.leaf_quality import BATCH, FULL, compare, root_visits
from zerochess.neural import load_model
from zerochess.search import SearchConfig, Searcher


def main(out: str, leaves: int = 8) -> None:
    maia = lc0_peer.find_maia()
    head = record.header("leaf_quality_groups", [maia], "one vs two groups in flight")
    record.print_header(head)
    model = load_model(maia)
    boards = lc0_peer.peer_positions(model, FULL["positions"])
    visits = FULL["visits"]
    runs = {}
    for name, width, groups in (("L1", 1, 1), (f"L{leaves}_groups1", leaves, 1),
                                (f"L{leaves}_groups2", leaves, 2)):
        start = time.perf_counter()
        searcher = Searcher(model, max_nodes=visits + 1, leaves_per_step=width, groups=groups)
        res = []
        for i in range(0, len(boards), BATCH):
            res += searcher.search(list(boards[i:i + BATCH]), SearchConfig(), visits)
        runs[name] = ([root_visits(r) for r in res], [r.best_move for r in res],
                      time.perf_counter() - start, sum(r.collisions for r in res))
        print(f"{name}: {runs[name][2]:.0f} s, collisions {runs[name][3]}", flush=True)
    base = runs["L1"]
    rows = []
    for name, run in runs.items():
        row = {"variant": name, "seconds": run[2], "collisions": run[3],
               "vs_one_leaf": compare(boards, base[0], base[1], run[0], run[1])}
        rows.append(row)
        print(f"{name}: same best move as L=1 {100 * row['vs_one_leaf']['same_best']:.1f}%, "
              f"KL {row['vs_one_leaf']['kl_mean']:.4f}", flush=True)
    record.write(out, head, {"positions": len(boards), "visits": visits, "rows": rows})


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 8)
