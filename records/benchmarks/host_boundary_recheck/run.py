"""Re-measure the host boundary of `zerochess bench --quick` (the same positions and
function, `bench.host_boundary.measure`) with more repeats, and time the lc0-order sort of
`expand_batch` on its own. Writes the JSON given as argv[1]."""
import json
import sys
import time

import numpy as np

from zerochess.bench import host_boundary
from zerochess.bench.throughput import NUM_POSITIONS, bench_positions

boards = bench_positions(NUM_POSITIONS)
runs = [host_boundary.measure(boards, 1024, repeats=7, workers=False) for _ in range(3)]
for r in runs:
    print(host_boundary.describe(r), flush=True)
legal = np.full((1024, 218), -1, np.int16)
legal[:, :40] = np.random.default_rng(0).integers(0, 1858, (1024, 40))
t0 = time.perf_counter()
for _ in range(50):
    np.sort(legal.view(np.uint16), axis=1)
sort_us = (time.perf_counter() - t0) / 50 / 1024 * 1e6
print(f"np.sort of a [1024, 218] legal-move block: {sort_us:.2f} us per leaf")
json.dump({"runs": runs, "sort_us_per_leaf": sort_us}, open(sys.argv[1], "w"), indent=1)
