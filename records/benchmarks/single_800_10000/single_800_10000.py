"""Issue 10's single-position comparison at 800 and 10,000 visits, on a grid cut to fit a
session: ``zerochess bench --vs-lc0 --single`` (``zerochess.bench.single.run_single``)
with the full run's visit counts and positions (32 at 800 visits, 8 at 10,000), but

- zerochess L in {8, 16, 32} (the full grid adds 64, 128 and 256; every ``--quick``
  record on this CPU has nodes/s falling from L = 16 to 32 to 64);
- lc0 with all cores only (``Threads`` = cores; Threads = 1 was slower in every
  ``--quick`` record here) and ``MinibatchSize`` in {default, 16, 32} (the full grid
  adds 64, 128 and 256, left out for time; 32 was the best of {default, 32} in every
  ``--quick`` record).

    python records/benchmarks/single_800_10000/single_800_10000.py OUT.json
"""

from __future__ import annotations

import os
import sys

from zerochess.bench import lc0_peer, record
from zerochess.bench.single import RATIO_PREFIX, run_single
from zerochess.neural import load_model

GRID = {"visits": (800, 10_000), "positions": {800: 32, 10_000: 8},
        "leaves": (8, 16, 32), "minibatch": (0, 16, 32),
        "threads": (len(os.sched_getaffinity(0)),)}


def main(path: str) -> None:
    lc0_path, maia = lc0_peer.find_lc0(), lc0_peer.find_maia()
    head = record.header("vs_lc0_single", [maia],
                         argv=["(records/benchmarks/single_800_10000/single_800_10000.py)", path])
    res = run_single(load_model(maia), lc0_path, maia, GRID,
                     log=lambda line: print(line, flush=True))
    res["quick"] = False
    record.write(path, head, res)
    print(RATIO_PREFIX + f"{res['ratio']:.2f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
