"""``zerochess bench --vs-lc0 --single``: one position at a time, as an engine analyses."""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

import chess

from zerochess.bench import lc0_peer, record
from zerochess.bench.record import machine_info
from zerochess.errors import UserError
from zerochess.neural import load_model
from zerochess.search import SearchConfig, Searcher

QUICK = {"visits": (800,), "positions": {800: 8}, "leaves": (16, 32, 64),
         "minibatch": (0, 32)}
FULL = {"visits": (800, 10_000), "positions": {800: 32, 10_000: 8},
        "leaves": (8, 16, 32, 64, 128, 256), "minibatch": (0, 16, 32, 64, 128, 256)}
TINY = {"visits": (16,), "positions": {16: 2}, "leaves": (4,), "minibatch": (0,)}
CACHE_SIZE = 1 << 16
RATIO_PREFIX = "ratio_vs_lc0_single: "


@dataclasses.dataclass
class Config:
    """One engine configuration's searches of all positions."""

    engine: str
    setting: dict[str, Any]
    nodes: int
    seconds: float
    best_moves: list[str]
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def nodes_per_s(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else math.nan

    def as_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "nodes_per_s": self.nodes_per_s}


def run_zerochess(model: Any, boards: Sequence[chess.Board], visits: int, leaves: int,
                  cache_size: int = CACHE_SIZE) -> Config:
    """One position at a time, fresh tree and empty cache each time."""
    searcher = Searcher(model, max_nodes=visits + 1, leaves_per_step=leaves,
                        cache_size=cache_size)
    start = time.perf_counter()
    searcher.search([boards[0]], SearchConfig(), min(visits, 4 * leaves))  # compiles
    compile_s = time.perf_counter() - start
    nodes, seconds, best, hits, evals, rows_used, rows_available = 0, 0.0, [], 0, 0, 0, 0
    for board in boards:
        searcher.clear_cache()
        start = time.perf_counter()
        (res,) = searcher.search([board], SearchConfig(), visits)
        seconds += time.perf_counter() - start
        nodes += res.root_visits
        best.append(res.best_move.uci())
        hits += res.cache_hits
        evals += res.nn_evals
        rows_used += searcher.last_run.rows_used
        rows_available += searcher.last_run.rows_available
    return Config("zerochess", {"leaves_per_step": leaves, "groups": searcher.groups,
                                "cache_size": cache_size}, nodes, seconds, best,
                  {"compile_s": compile_s, "cache_hits": hits, "nn_evals": evals,
                   "network_rows_used": rows_used, "network_rows_available": rows_available})


def run_lc0(lc0_path: str, weights: str, boards: Sequence[chess.Board], visits: int,
            threads: int, minibatch: int) -> Config:
    with lc0_peer.Lc0Engine(lc0_path, weights, threads) as engine:
        if minibatch:
            engine.engine.configure({"MinibatchSize": minibatch})
        searches = lc0_peer.run_lc0(engine, boards, visits)
        info = engine.info
    return Config("lc0", {"threads": threads, "minibatch_size": minibatch},
                  sum(s.nodes for s in searches), sum(s.time_s for s in searches),
                  [s.best_move.uci() for s in searches],
                  {"wall_s": sum(s.wall_s for s in searches), "backend": info.backend,
                   "search_threads": info.search_threads, "name": info.name})


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def agreement(a: Sequence[str], b: Sequence[str]) -> float:
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a) if a else math.nan


def run_single(model: Any, lc0_path: str, weights: str, grid: dict[str, Any],
               log: Any = print) -> dict[str, Any]:
    """Every configuration of ``grid`` at every visit count; see docs/DESIGN.md."""
    out: dict[str, Any] = {"machine": machine_info(), "grid": {k: v for k, v in grid.items()},
                           "rows": []}
    count = max(grid["positions"].values())
    boards = lc0_peer.peer_positions(model, count)
    for visits in grid["visits"]:
        part = boards[:grid["positions"][visits]]
        ours = []
        for leaves in grid["leaves"]:
            cfg = run_zerochess(model, part, visits, leaves)
            ours.append(cfg)
            log(f"zerochess L={leaves:<4} {visits} visits x {len(part)} positions: "
                f"{cfg.nodes_per_s:7.0f} nodes/s (cache hits {cfg.extra['cache_hits']}, "
                f"network rows used {cfg.extra['network_rows_used']}/"
                f"{cfg.extra['network_rows_available']})")
        theirs = []
        for threads in grid.get("threads") or range(1, _cores() + 1):
            for minibatch in grid["minibatch"]:
                cfg = run_lc0(lc0_path, weights, part, visits, threads, minibatch)
                theirs.append(cfg)
                log(f"lc0 Threads={threads} MinibatchSize={minibatch or 'default'} {visits} "
                    f"visits: {cfg.nodes_per_s:7.0f} nodes/s")
        best_ours = max(ours, key=lambda c: c.nodes_per_s)
        best_lc0 = max(theirs, key=lambda c: c.nodes_per_s)
        row = {"visits": visits, "positions": len(part),
               "fens": [b.fen() for b in part],
               "zerochess": [c.as_dict() for c in ours], "lc0": [c.as_dict() for c in theirs],
               "best_zerochess": best_ours.setting, "best_lc0": best_lc0.setting,
               "ratio": best_ours.nodes_per_s / best_lc0.nodes_per_s,
               "agreement": agreement(best_ours.best_moves, best_lc0.best_moves)}
        out["rows"].append(row)
        log(f"{visits} visits: zerochess {best_ours.nodes_per_s:.0f} nodes/s "
            f"(L={best_ours.setting['leaves_per_step']}) vs lc0 {best_lc0.nodes_per_s:.0f} "
            f"nodes/s (Threads={best_lc0.setting['threads']}, MinibatchSize="
            f"{best_lc0.setting['minibatch_size'] or 'default'}): ratio {row['ratio']:.2f}, "
            f"same best move {100 * row['agreement']:.0f}%")
    out["ratio"] = min(r["ratio"] for r in out["rows"])
    return out


def main(args: Any) -> int:
    """``zerochess bench --vs-lc0 --single [--quick | --tiny] [--json FILE]``."""
    lc0_path, maia = lc0_peer.find_lc0(), lc0_peer.find_maia()
    if lc0_path is None or maia is None:
        raise UserError(f"bench --vs-lc0 --single needs the lc0 program and Maia-1900; "
                        f"install them with: {lc0_peer.INSTALL_HINT}")
    grid = (TINY if getattr(args, "tiny", False) else QUICK if getattr(args, "quick", False)
            else FULL)
    head = record.header("vs_lc0_single", [maia], getattr(args, "note", None))
    record.print_header(head)
    print(f"zerochess vs lc0, one position at a time, Maia-1900 ({maia})", flush=True)
    start = time.perf_counter()
    res = run_single(load_model(maia), lc0_path, maia, grid,
                     log=lambda line: print(line, flush=True))
    res["total_s"] = time.perf_counter() - start
    res["quick"] = bool(getattr(args, "quick", False))
    if getattr(args, "json", None):
        record.write(args.json, head, res)  # machine, versions, commit, model hashes
    print(f"total time {res['total_s']:.0f}s", file=sys.stderr)
    print(RATIO_PREFIX + f"{res['ratio']:.2f}", flush=True)
    return 0


__all__ = ["CACHE_SIZE", "Config", "FULL", "QUICK", "RATIO_PREFIX", "TINY", "agreement",
           "main", "run_lc0", "run_single", "run_zerochess"]
