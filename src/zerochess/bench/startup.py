"""``zerochess bench --startup``: how long a new process takes to answer, cold and warm.

Two commands, each run in fresh processes that share one empty persistent cache
(``ZEROCHESS_JAX_CACHE`` set to a new temporary directory, so the machine's own cache is
neither used nor touched):

- ``analyse``: ``zerochess analyse FEN --visits 800 --json`` (the whole command: imports,
  the network, compiling or loading the search programs, the search, the output);
- ``uci``: ``zerochess uci`` fed ``uci``, ``isready``, ``quit`` (``isready`` answers after
  the engine's warm-up, which compiles or loads every program a game uses).

The first run of each compiles and stores its programs (cold); the next ``--warm-runs``
(default 5; ``--quick``: 2) load them (warm). Each run's wall time and CPU time (user +
system, of the child process) are recorded; the figures are the cold run's and the warm
runs' median: ``startup_warm_s_analyse`` and ``startup_warm_s_uci``, the lines this mode
ends with. A run that fails (non-zero exit, no JSON result, no ``readyok``) is a
``RuntimeError`` quoting the end of its output.
"""

from __future__ import annotations

import dataclasses
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from zerochess.bench import record

FEN = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"
ZEROCHESS = [sys.executable, "-m", "zerochess.cli"]


@dataclasses.dataclass(frozen=True)
class Command:
    """One start-up to measure: ``argv`` fed ``stdin``; ``ready`` must be in its output."""

    name: str
    argv: tuple[str, ...]
    stdin: str = ""
    ready: str = ""


def commands(visits: int = 800) -> tuple[Command, ...]:
    """The two measured start-ups (``analyse`` at ``visits``, and the UCI engine)."""
    return (Command("analyse", (*ZEROCHESS, "analyse", FEN, "--visits", str(visits), "--json"),
                    ready='"moveInfos"'),
            Command("uci", (*ZEROCHESS, "uci"), stdin="uci\nisready\nquit\n", ready="readyok"))


def run_once(command: Command, env: dict[str, str], timeout_s: float = 1800.0) -> dict[str, Any]:
    """One fresh process of ``command``: wall time and its CPU time (user, system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(command.argv, input=command.stdin, env=env, capture_output=True,
                          text=True, timeout=timeout_s)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0 or command.ready not in proc.stdout:
        tail = (proc.stdout[-800:] + proc.stderr[-800:]).strip()
        raise RuntimeError(f"{command.name}: exit status {proc.returncode}, no "
                           f"{command.ready!r} in its output: {tail}")
    return {"wall_s": wall, "cpu_user_s": after.ru_utime - before.ru_utime,
            "cpu_sys_s": after.ru_stime - before.ru_stime}


def measure(command: Command, warm_runs: int, log: Any = print) -> dict[str, Any]:
    """The cold run and ``warm_runs`` warm runs of ``command`` on one new empty cache."""
    runs = []
    with tempfile.TemporaryDirectory(prefix="zerochess-startup-") as cache:
        env = {**os.environ, "ZEROCHESS_JAX_CACHE": cache}
        for i in range(1 + warm_runs):
            run = run_once(command, env) | {"run": "cold" if i == 0 else f"warm {i}"}
            runs.append(run)
            log(f"{command.name} {run['run']}: {run['wall_s']:.2f} s wall, "
                f"{run['cpu_user_s'] + run['cpu_sys_s']:.2f} s CPU")
    warm = runs[1:]
    return {"command": " ".join(command.argv[2:]) + (
                f"  (stdin: {', '.join(command.stdin.split())})" if command.stdin else ""),
            "runs": runs, "cold_wall_s": runs[0]["wall_s"],
            "warm_wall_s_median": statistics.median(r["wall_s"] for r in warm),
            "warm_cpu_s_median": statistics.median(r["cpu_user_s"] + r["cpu_sys_s"]
                                                   for r in warm)}


def run(selected: Sequence[Command], warm_runs: int, log: Any = print) -> dict[str, Any]:
    """Every command of ``selected`` measured; the figures by command name."""
    if warm_runs < 1:
        raise ValueError(f"warm_runs must be >= 1, got {warm_runs}")
    return {"warm_runs": warm_runs,
            "commands": {c.name: measure(c, warm_runs, log) for c in selected}}


def main(args: Any) -> int:
    """Run ``zerochess bench --startup``; ``args.quick`` (2 warm runs instead of 5),
    ``args.json``, ``args.note``."""
    warm_runs = 2 if getattr(args, "quick", False) else 5
    head = record.header("startup", (), getattr(args, "note", None))
    record.print_header(head)
    figures = run(commands(), warm_runs, log=lambda s: print(s, flush=True))
    if getattr(args, "json", None):
        record.write(args.json, head, figures)
    for name, fig in figures["commands"].items():
        print(f"startup_warm_s_{name}: {fig['warm_wall_s_median']:.2f}", flush=True)
    return 0


__all__ = ["FEN", "Command", "commands", "main", "measure", "run", "run_once"]
