"""Wall and CPU time of ``zerochess uci`` answering ``uci`` and ``isready`` (its warm-up
compiles or loads every search program), then ``quit``, twice in fresh processes with an
empty persistent cache: the first run compiles and stores, the later ones load (the
warm start is repeated ``--warm-runs`` times, default 5; the record keeps each and their
median).

    python benchmarks/uci_second_start.py benchmarks/results/uci_second_start.json [--warm-runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def main(out_path: str, warm_runs: int = 5) -> None:
    runs = []
    labels = ["first (compiles, fills the cache)"] + [
        f"warm {i + 1} (cache warm)" for i in range(warm_runs)]
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "ZEROCHESS_JAX_CACHE": cache}
        for label in labels:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            proc = subprocess.run(["zerochess", "uci"], input="uci\nisready\nquit\n", env=env,
                                  capture_output=True, text=True, check=True)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if "readyok" not in proc.stdout:
                raise SystemExit(f"no readyok:\n{proc.stdout}\n{proc.stderr}")
            runs.append({"run": label, "wall_s": wall,
                         "cpu_user_s": after.ru_utime - before.ru_utime,
                         "cpu_sys_s": after.ru_stime - before.ru_stime})
            print(f"{label}: {wall:.1f} s wall, "
                  f"{runs[-1]['cpu_user_s'] + runs[-1]['cpu_sys_s']:.1f} s CPU", flush=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True)
    record = {"command": "zerochess uci  (stdin: uci, isready, quit)",
              "git_commit": commit.stdout.strip() or "unknown",
              "load_average_at_end": os.getloadavg(), "cpu_count": os.cpu_count(),
              "python": sys.version.split()[0], "runs": runs,
              "warm_wall_s_median": statistics.median(r["wall_s"] for r in runs[1:])}
    print(f"warm starts: median {record['warm_wall_s_median']:.2f} s wall", flush=True)
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump(record, fh, indent=2)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="uci_second_start.json")
    parser.add_argument("--warm-runs", type=int, default=5)
    args = parser.parse_args()
    main(args.out, max(1, args.warm_runs))
