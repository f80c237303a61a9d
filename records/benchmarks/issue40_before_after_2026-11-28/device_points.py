"""Device-search sims/s at B = 256 (L = 1, S = 64) and B = 1 (L = 256, S = 768), built-in
evaluator, device rules, for the zerochess on PYTHONPATH (``bench.leaves.run_point``: the
timed call includes ``Searcher.init``'s root preparation, as ``bench --device-search``).

    PYTHONPATH=<src> python device_points.py OUT.json [repeats]
"""

import json
import sys

from zerochess.bench.fixtures import bench_positions
from zerochess.bench.leaves import run_point
from zerochess.bench.record import header
from zerochess.neural import load_model

POINTS = ((256, 1, 64), (1, 256, 768))


def main(out: str, repeats: int) -> None:
    model = load_model("builtin")
    boards = bench_positions()
    rows = []
    for batch, leaves, sims in POINTS:
        for r in range(repeats):
            p = run_point(model, boards, batch, leaves, sims, rules="device")
            rows.append({"repeat": r, **p})
            print(f"B={batch} L={leaves} S={sims}: {p['sims_per_s']:,.0f} sims/s", flush=True)
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(
            {"record": header("device_points", ("builtin",), None), "points": rows},
            fh,
            indent=1,
            default=str,
        )


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3)
