"""Wall and CPU time of ``zerochess uci`` answering ``uci`` and ``isready`` (its warm-up
compiles or loads every search program), then ``quit``, twice in fresh processes with an
empty persistent cache: the first run compiles and stores, the second loads.

    python benchmarks/uci_second_start.py benchmarks/results/uci_second_start.json
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def main(out_path: str) -> None:
    runs = []
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "ZEROCHESS_JAX_CACHE": cache}
        for label in ("first (compiles, fills the cache)", "second (cache warm)"):
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
              "python": sys.version.split()[0], "runs": runs}
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump(record, fh, indent=2)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "uci_second_start.json")
