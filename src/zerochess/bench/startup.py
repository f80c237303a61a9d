"""``zerochess bench --startup``: how long a new process takes to answer, cold and warm."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from typing import Any

from zerochess.bench import record

FEN = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"
ZEROCHESS = [sys.executable, "-m", "zerochess.cli"]


# The README's pure search, verbatim (tests/test_bench.py holds the two equal), then a ready
# line: what ``zerochess warmup search`` runs and ``--startup`` times.
README_SEARCH = """
import jax
import zerochess
from zerochess import SearchConfig, load_model
from zerochess.chess.actions import actions_to_uci
from zerochess.env import Env
from zerochess.search import stack_configs
from zerochess.search.compiled import roots_from_env, search
from zerochess.search.per_player import for_player, stack_players

zerochess.enable_compile_cache()   # a second process compiles nothing it compiled before
model, env, B = load_model("builtin"), Env(), 8
# per-tree settings, one SearchParams [B] per player; the model's defaults (moves-left
# utility, the built-in evaluator's mate check) are passed on, as Searcher does
sc = stack_configs([SearchConfig(n_scl=5)] * B, model.has_moves_left, model.mate_check)
puct = stack_configs([SearchConfig()] * B, model.has_moves_left, model.mate_check)
settings = stack_players(sc, puct)        # [2, B, ...]: player 0 SC, player 1 PUCT

@jax.jit
def act(model_params, settings, states, key):
    search_params = for_player(settings, states.current_player)  # [B, ...]: the mover's
    out = search(model_params, roots_from_env(states, key), search_params, 64,
                 apply_fn=model.apply)
    return out.action, out.action_weights  # lc0 indices [B]; visit distribution [B, 1858]

states = jax.vmap(env.init)(jax.random.split(jax.random.key(1), B))  # who is white: drawn
actions, targets = act(model.params, settings, states, jax.random.key(0))  # or PRNGKey(0)
print(actions_to_uci(states, actions))    # decode before stepping: ['b1c3', 'g1f3', ...]
states = jax.vmap(env.step)(states, actions)  # in a loop: jax.jit(jax.vmap(env.step)) once
"""
SEARCH_SCRIPT = README_SEARCH + 'print("actions ready", flush=True)\n'


@dataclasses.dataclass(frozen=True)
class Command:
    """One start-up to measure: ``argv`` fed ``stdin``; ``ready`` must be in its output
    (its first line holding it is the ready time); ``marks``: further lines to time."""

    name: str
    argv: tuple[str, ...]
    stdin: str = ""
    ready: str = ""
    marks: tuple[str, ...] = ()


def commands(visits: int = 800) -> tuple[Command, ...]:
    """The measured start-ups (``analyse`` at ``visits``, the UCI engine, the JSON
    analysis engine to its answer of one default query, the pure search)."""
    return (Command("analyse", (*ZEROCHESS, "analyse", FEN, "--visits", str(visits), "--json"),
                    ready='"moveInfos"'),
            Command("uci", (*ZEROCHESS, "uci"), stdin="uci\nisready\nquit\n", ready="readyok",
                    marks=("uciok",)),
            Command("analysis", (*ZEROCHESS, "analysis"), stdin='{"id":"q","moves":[]}\n',
                    ready='"moveInfos"'),
            Command("search", (sys.executable, "-c", SEARCH_SCRIPT), ready="actions"))


def run_once(command: Command, env: dict[str, str], timeout_s: float = 1800.0) -> dict[str, Any]:
    """One fresh process of ``command``: wall time to its ready line and to its exit, the
    times of its ``marks``, its CPU time (user, system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(command.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, text=True)
    timer = threading.Timer(timeout_s, proc.kill)
    timer.start()
    errors: list[str] = []
    reader = threading.Thread(target=lambda: errors.append(proc.stderr.read()), daemon=True)
    reader.start()
    lines: list[str] = []
    seen: dict[str, float] = {}
    try:
        if command.stdin:
            proc.stdin.write(command.stdin)
        proc.stdin.close()
        for line in proc.stdout:
            now = time.perf_counter() - start
            lines.append(line)
            for mark in (command.ready, *command.marks):
                if mark and mark in line and mark not in seen:
                    seen[mark] = now
        proc.wait()
    finally:
        timer.cancel()
    wall = time.perf_counter() - start
    reader.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = "".join(lines)
    if proc.returncode != 0 or command.ready not in seen:
        tail = (out[-800:] + "".join(errors)[-800:]).strip()
        raise RuntimeError(f"{command.name}: exit status {proc.returncode}, no "
                           f"{command.ready!r} in its output: {tail}")
    return {"wall_s": wall, "ready_s": seen[command.ready],
            **{f"{mark}_s": seen.get(mark) for mark in command.marks},
            "cpu_user_s": after.ru_utime - before.ru_utime,
            "cpu_sys_s": after.ru_stime - before.ru_stime}


def _summary(command: Command, runs: list[dict[str, Any]]) -> dict[str, Any]:
    warm = runs[1:]
    return {"command": " ".join(command.argv[2:]) + (
                f"  (stdin: {', '.join(command.stdin.split())})" if command.stdin else ""),
            "runs": runs, "cold_wall_s": runs[0]["wall_s"], "cold_ready_s": runs[0]["ready_s"],
            "warm_wall_s_median": statistics.median(r["wall_s"] for r in warm),
            "warm_ready_s_median": statistics.median(r["ready_s"] for r in warm),
            "warm_cpu_s_median": statistics.median(r["cpu_user_s"] + r["cpu_sys_s"]
                                                   for r in warm)}


def measure(command: Command, warm_runs: int, log: Any = print,
            sources: dict[str, str | None] | None = None) -> dict[str, dict[str, Any]]:
    """The cold run and ``warm_runs`` warm runs of ``command`` for each of ``sources``
    (name -> a directory of zerochess sources, None: this one; default ``{"current":
    None}``), each on a new empty cache, the sources' runs interleaved."""
    sources = sources or {"current": None}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in sources}
    with contextlib.ExitStack() as stack:
        envs = {}
        for name, src in sources.items():
            cache = stack.enter_context(tempfile.TemporaryDirectory(prefix="zerochess-startup-"))
            envs[name] = {**(record.source_env(src) or os.environ), "ZEROCHESS_JAX_CACHE": cache}
        for i in range(1 + warm_runs):
            for name in sources:
                run = run_once(command, envs[name]) | {"run": "cold" if i == 0 else f"warm {i}"}
                runs[name].append(run)
                label = "" if len(sources) == 1 else f"[{name}] "
                log(f"{label}{command.name} {run['run']}: ready {run['ready_s']:.2f} s, exit "
                    f"{run['wall_s']:.2f} s wall, {run['cpu_user_s'] + run['cpu_sys_s']:.2f} s CPU")
    return {name: _summary(command, r) for name, r in runs.items()}


def run(selected: Sequence[Command], warm_runs: int, log: Any = print,
        baseline_src: str | None = None) -> dict[str, Any]:
    """Every command of ``selected`` measured; the figures by command name (and, with
    ``baseline_src``, the baseline's under ``baseline``)."""
    if warm_runs < 1:
        raise ValueError(f"warm_runs must be >= 1, got {warm_runs}")
    sources: dict[str, str | None] = {"current": None}
    if baseline_src is not None:
        sources["baseline"] = baseline_src
    measured = {c.name: measure(c, warm_runs, log, sources) for c in selected}
    out: dict[str, Any] = {"warm_runs": warm_runs,
                           "commands": {n: m["current"] for n, m in measured.items()}}
    if baseline_src is not None:
        out["baseline"] = {"src": baseline_src,
                           "commands": {n: m["baseline"] for n, m in measured.items()}}
    return out


def main(args: Any) -> int:
    """Run ``zerochess bench --startup``; ``args.quick`` (2 warm runs instead of 5),
    ``args.json``, ``args.note``."""
    warm_runs = 2 if getattr(args, "quick", False) else 5
    head = record.header("startup", (), getattr(args, "note", None))
    record.print_header(head)
    baseline = getattr(args, "baseline_src", None)
    only = getattr(args, "startup_only", None)
    selected = [c for c in commands() if not only or c.name in only]
    figures = run(selected, warm_runs, log=lambda s: print(s, flush=True), baseline_src=baseline)
    if getattr(args, "json", None):
        record.write(args.json, head, figures)
    for name, fig in figures["commands"].items():
        base = figures.get("baseline", {}).get("commands", {}).get(name)
        extra = "" if base is None else (f" (baseline: cold {base['cold_ready_s']:.2f}, warm "
                                         f"{base['warm_ready_s_median']:.2f})")
        print(f"startup_cold_s_{name}: {fig['cold_ready_s']:.2f}{extra}", flush=True)
        print(f"startup_warm_s_{name}: {fig['warm_ready_s_median']:.2f}", flush=True)
    return 0


__all__ = ["FEN", "README_SEARCH", "SEARCH_SCRIPT", "Command", "commands", "main", "measure", "run",
           "run_once"]
