"""Wall and CPU time of ``zerochess analyse FEN --visits 800`` run twice in fresh processes
with an empty persistent compilation cache: the first run compiles and fills the cache,
the second loads the compiled programs from it (the figure of issue 10, target <= 3 s).

    python benchmarks/analyse_second_run.py benchmarks/results/analyse_second_run.json
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time

FEN = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"
COMMAND = ["zerochess", "analyse", FEN, "--visits", "800", "--json"]


def _git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(out_path: str) -> None:
    runs = []
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "ZEROCHESS_JAX_CACHE": cache}
        for label in ("first (compiles, fills the cache)", "second (cache warm)"):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            proc = subprocess.run(COMMAND, env=env, capture_output=True, text=True, check=True)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            result = json.loads(proc.stdout.strip().splitlines()[-1])
            runs.append({"run": label, "wall_s": wall,
                         "cpu_user_s": after.ru_utime - before.ru_utime,
                         "cpu_sys_s": after.ru_stime - before.ru_stime,
                         "cache_files": len(os.listdir(cache)), "stats": result.get("stats")})
            print(f"{label}: {wall:.1f} s wall, "
                  f"{runs[-1]['cpu_user_s'] + runs[-1]['cpu_sys_s']:.1f} s CPU", flush=True)
    record = {"command": " ".join(COMMAND), "git_commit": _git_commit(),
              "load_average_at_end": os.getloadavg(), "cpu_count": os.cpu_count(),
              "python": sys.version.split()[0], "runs": runs}
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump(record, fh, indent=2)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "analyse_second_run.json")
