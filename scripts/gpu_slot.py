#!/usr/bin/env python3
"""The GPU slot of issue 40: every figure a GPU user looks for, in one run of <= 9 minutes.

Stages, most important first, each in its own process under its own time cap (and the
run's deadline), each writing its JSON record under OUT after every point (a stage cut
short keeps what it measured); OUT/slot.json says how each stage ended:

  grid_main  the device search at 6x64 and 15x768, B=1,024 L=1 S=800, each beside the
             network alone on the same B x L rows
  peer       mctx + pgx (the peer's dense tree; skipped where it does not fit in 70% of
             the device's memory) against ours at B=1,024, 6x64, S in 16, 64, 200, 800
  selfplay   device self-play (``games.device_loop``) at 800 nodes, 6x64 (256 games x 8 plies)
  b1         one position: B=1 at L=256 and L=64, 6x64, S=800
  profile    ``bench.profile`` at the best 6x64 point measured so far, S=32 (trace kept)
  grid_big   6x64 at B=4,096 (S=800) and B=16,384 (S=200), L=1
  grid_rest  the rest of the grid: B in 1,024..16,384 x L in 1, 4, 16, 6x64 and 15x768

GPU (through the device tool, from the repository root; .whl holds the wheels of chess,
mctx, pgx and svgwrite, made with ``pip download``/``pip wheel --no-deps``):
  run(command="bash scripts/gpu_slot.sh", carry=[".whl"], timeout_s=590)
CPU dry run (the same stages at tiny sizes):
  python scripts/gpu_slot.py --cpu --out DIR [--budget S]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

# stage -> time cap (s), most important first
# (2026-11-28, H200: grid_main took 176 s and peer 111 s; profile at B=4,096 S=100, self-play
# of 1,024 games x 32 plies and two B=1 points each ran past a 120 s cap: sizes cut below)
STAGES = {"grid_main": 200, "peer": 150, "selfplay": 100, "b1": 110, "profile": 120,
          "grid_big": 170, "grid_rest": 400}
MIN_STAGE_S = 20  # a stage with less time left than this is not started

GPU = {
    # 6x64 at B=1,024 first: the peer stage's own search has its shapes (compiled once)
    "grid_main": (("resnet:6x64", 1024, 1, 800), ("resnet:15x768", 1024, 1, 800)),
    "grid_big": (("resnet:6x64", 4096, 1, 800), ("resnet:6x64", 16384, 1, 200)),
    "grid_rest": tuple(
        (m, b, l, 800 if b * l <= 4096 else 200)
        for m, b, l in (("resnet:6x64", 4096, 4), ("resnet:6x64", 1024, 16),
                        ("resnet:15x768", 4096, 1), ("resnet:6x64", 4096, 16),
                        ("resnet:6x64", 16384, 4), ("resnet:6x64", 1024, 4),
                        ("resnet:15x768", 1024, 4), ("resnet:15x768", 16384, 1),
                        ("resnet:15x768", 1024, 16), ("resnet:15x768", 4096, 4),
                        ("resnet:6x64", 16384, 16), ("resnet:15x768", 4096, 16),
                        ("resnet:15x768", 16384, 4), ("resnet:15x768", 16384, 16))),
    "peer": {"model": "resnet:6x64", "net": (6, 64), "batch": 1024,
             "sims": (16, 64, 200, 800)},
    "profile": {"model": "resnet:6x64", "batch": 1024, "leaves": 1, "sims": 32},
    "b1": (("resnet:6x64", 1, 256, 800), ("resnet:6x64", 1, 64, 800)),
    "selfplay": {"model": "resnet:6x64", "games": 256, "nodes": 800, "plies": 8},
}
CPU = {
    "grid_main": (("resnet:1x8", 4, 1, 16),),
    "grid_big": (("resnet:1x8", 8, 1, 16),),
    "grid_rest": (("resnet:1x8", 4, 4, 16),),
    "peer": {"model": "resnet:1x8", "net": (1, 8), "batch": 4, "sims": (4, 8)},
    "profile": {"model": "resnet:1x8", "batch": 4, "leaves": 1, "sims": 16},
    "b1": (("resnet:1x8", 1, 4, 16),),
    "selfplay": {"model": "resnet:1x8", "games": 4, "nodes": 8, "plies": 32},
}


def _device_memory_gb() -> float | None:
    import jax

    try:
        stats = jax.devices()[0].memory_stats() or {}
    except Exception:  # noqa: BLE001 - a backend without memory stats (CPU)
        return None
    limit = stats.get("bytes_limit")
    return None if limit is None else (limit - stats.get("bytes_in_use", 0)) / 2**30


class Stage:
    """One stage's JSON record, rewritten after every point."""

    def __init__(self, out: Path, name: str, note: str):
        from zerochess.bench import record

        self.record = record
        self.path = out / f"{name}.json"
        self.head = record.header(f"gpu_slot/{name}", (), note)
        self.figures: dict[str, Any] = {"points": []}

    def add(self, point: dict[str, Any]) -> None:
        self.figures["points"].append(point)
        self.save()

    def save(self) -> None:
        self.record.write(self.path, self.head, self.figures)


def _search_points(stage: Stage, points: tuple) -> None:
    """Device-search points, each beside the network alone (``bench.leaves``); a point that
    fails (out of memory) is recorded with its error and the next one runs."""
    from zerochess.bench.leaves import network_only, run_point, tree_memory_gb
    from zerochess.bench.throughput import bench_positions
    from zerochess.neural import load_model

    boards = bench_positions()
    models: dict[str, Any] = {}
    free = _device_memory_gb()
    for spec, batch, leaves, sims in points:
        row: dict[str, Any] = {"spec": spec, "batch": batch, "leaves": leaves, "sims": sims}
        need = tree_memory_gb(batch, sims + 1)
        if free is not None and need > 0.5 * free:
            stage.add({**row, "skipped": f"trees need {need:.1f} GiB, {free:.1f} GiB free"})
            continue
        try:
            model = models.setdefault(spec, load_model(spec))
            p = {"spec": spec, **run_point(model, boards, batch, leaves, sims, rules="device")}
            net = network_only(model, boards, batch * leaves)
            p["network_only"] = net
            p["ratio_search_to_network"] = p["sims_per_s"] / net["evals_per_s"]
            print(f"{spec:>14} B={batch:<6} L={leaves:<4} S={sims:<4}: "
                  f"{p['sims_per_s']:11,.0f} sims/s (compile {p['compile_s']:.0f} s); network "
                  f"alone {net['evals_per_s']:11,.0f} evals/s; ratio "
                  f"{p['ratio_search_to_network']:.2f}", flush=True)
            stage.add(p)
        except Exception as exc:  # noqa: BLE001 - e.g. out of device memory: go on
            stage.add({**row, "error": f"{type(exc).__name__}: {exc}"[:2000]})
            print(f"{spec} B={batch} L={leaves}: {type(exc).__name__}: {exc}"[:500], flush=True)


def _peer(stage: Stage, cfg: dict[str, Any]) -> None:
    """The mctx + pgx curve over S at one B and network, ours beside it (one searcher of
    max(S) + 1 nodes, run to each S: one compile). Like the peer's (whose python-chess to
    pgx conversion is outside its timing), ours is timed from prepared roots: the roots'
    host preparation (``init``) is recorded apart, as ``ours_roots_s``."""
    import jax

    from zerochess.bench import peer_mctx_pgx
    from zerochess.bench.throughput import bench_positions, fill
    from zerochess.neural import load_model
    from zerochess.search import SearchConfig, Searcher

    boards = bench_positions()
    batch, sims_list = cfg["batch"], cfg["sims"]
    model = load_model(cfg["model"])
    searcher = Searcher(model, max_nodes=max(sims_list) + 1, rules="device")
    rows = fill(boards, batch)
    jax.block_until_ready(searcher.run(searcher.init(rows, SearchConfig(), 1),
                                       min(sims_list)).shards)
    per_node = peer_mctx_pgx.tree_bytes_per_node()["total"]
    for sims in sims_list:
        t0 = time.perf_counter()
        roots = searcher.init(rows, SearchConfig(), 0)
        jax.block_until_ready(roots.shards)
        t1 = time.perf_counter()
        jax.block_until_ready(searcher.run(roots, sims).shards)
        ours = batch * sims / (time.perf_counter() - t1)
        row: dict[str, Any] = {"batch": batch, "sims": sims, "model": cfg["model"],
                               "ours_sims_per_s": ours, "ours_roots_s": t1 - t0,
                               "ours_with_roots_sims_per_s":
                                   batch * sims / (time.perf_counter() - t0)}
        need = per_node * batch * (sims + 1) / 2**30
        free = _device_memory_gb()
        row["peer_tree_gib"] = need
        if free is not None and need > 0.7 * free:
            row["peer"] = {"skipped": f"dense tree needs {need:.1f} GiB, {free:.1f} GiB free"}
        else:
            try:
                row["peer"] = peer_mctx_pgx.run_peer(boards, batch, sims, *cfg["net"])
                row["ratio_vs_mctx_pgx"] = ours / row["peer"]["sims_per_s"]
            except Exception as exc:  # noqa: BLE001 - out of memory: the largest S found
                row["peer"] = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
        print(f"B={batch} S={sims}: ours {ours:,.0f} sims/s; peer "
              f"{row['peer'].get('sims_per_s', row['peer'])}; ratio "
              f"{row.get('ratio_vs_mctx_pgx')}", flush=True)
        stage.add(row)


def _best_point(out: Path, default: dict[str, Any]) -> dict[str, Any]:
    """The fastest 6x64 point of the grids measured so far (else ``default``)."""
    best = None
    for name in ("grid_main", "grid_big", "grid_rest"):
        path = out / f"{name}.json"
        if not path.exists():
            continue
        for p in json.loads(path.read_text()).get("points", []):
            if p.get("spec") == default["model"] and "sims_per_s" in p:
                if best is None or p["sims_per_s"] > best["sims_per_s"]:
                    best = p
    if best is None:
        return default
    return {**default, "batch": best["batch"], "leaves": best["leaves"]}


def _profile(stage: Stage, cfg: dict[str, Any], out: Path) -> None:
    from zerochess.bench import profile
    from zerochess.bench.throughput import bench_positions
    from zerochess.neural import load_model

    cfg = _best_point(out, cfg)
    table = profile.profile_point(load_model(cfg["model"]), bench_positions(), cfg["batch"],
                                  cfg["leaves"], cfg["sims"], out / "profile", repeats=2)
    print(profile.format_table(table), flush=True)
    stage.figures["profile"] = table
    stage.save()


def _selfplay(stage: Stage, cfg: dict[str, Any]) -> None:
    from zerochess.bench.device_search import SELFPLAY_WAYS, selfplay_point
    from zerochess.neural import load_model

    row = {"model": cfg["model"], **selfplay_point(
        load_model(cfg["model"]), cfg["games"], cfg["nodes"], cfg["plies"],
        ways=SELFPLAY_WAYS[2:])}
    print(f"self-play {cfg['model']} games={cfg['games']} nodes={cfg['nodes']}: "
          f"{row['device_loop']['positions_per_s']:,.1f} positions/s", flush=True)
    stage.add(row)


def run_stage(name: str, out: Path, sizes: dict[str, Any], note: str) -> None:
    stage = Stage(out, name, note)
    stage.save()
    cfg = sizes[name]
    if name in ("grid_main", "grid_big", "grid_rest", "b1"):
        _search_points(stage, cfg)
    elif name == "peer":
        _peer(stage, cfg)
    elif name == "profile":
        _profile(stage, cfg, out)
    elif name == "selfplay":
        _selfplay(stage, cfg)
    else:
        raise SystemExit(f"unknown stage {name!r}; stages: {', '.join(STAGES)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "results/gpu_slot"))
    parser.add_argument("--budget", type=float, default=520.0,
                        help="seconds for all stages (default 520: a 9-minute slot less "
                             "the install)")
    parser.add_argument("--cpu", action="store_true", help="the tiny CPU sizes (a dry run)")
    parser.add_argument("--only", default=None, help="comma-separated stages to run")
    parser.add_argument("--cap-scale", type=float, default=None,
                        help="multiply every stage's time cap (default 1; 10 with --cpu, "
                             "whose compiles take minutes)")
    parser.add_argument("--stage", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--note", default=None)
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sizes = CPU if args.cpu else GPU
    note = args.note or ("CPU dry run of scripts/gpu_slot.py" if args.cpu
                         else "GPU slot (scripts/gpu_slot.py)")
    if args.stage:
        run_stage(args.stage, out, sizes, note)
        return 0
    names = args.only.split(",") if args.only else list(STAGES)
    unknown = [n for n in names if n not in STAGES]
    if unknown:
        parser.error(f"unknown stage(s) {unknown}; stages: {', '.join(STAGES)}")
    scale = args.cap_scale if args.cap_scale is not None else (10.0 if args.cpu else 1.0)
    deadline = time.monotonic() + args.budget
    summary: dict[str, Any] = {"budget_s": args.budget, "cpu": args.cpu, "stages": {}}
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if args.cpu:
        env["JAX_PLATFORMS"] = "cpu"
    for name in names:
        left = deadline - time.monotonic()
        if left < MIN_STAGE_S:
            summary["stages"][name] = {"status": "not started", "left_s": left}
            continue
        cap = min(STAGES[name] * scale, left)
        cmd = [sys.executable, __file__, "--stage", name, "--out", str(out), "--note", note]
        if args.cpu:
            cmd.append("--cpu")
        print(f"== {name} (cap {cap:.0f} s) {time.strftime('%H:%M:%S')}", flush=True)
        t0 = time.monotonic()
        try:
            rc = subprocess.run(cmd, env=env, timeout=cap).returncode
            status = "done" if rc == 0 else f"failed (exit {rc})"
        except subprocess.TimeoutExpired:
            status = "timed out (partial results kept)"
        except Exception:  # noqa: BLE001 - keep the other stages
            status = "error: " + traceback.format_exc(limit=2)
        summary["stages"][name] = {"status": status, "seconds": time.monotonic() - t0,
                                   "cap_s": cap}
        (out / "slot.json").write_text(json.dumps(summary, indent=2) + "\n")
        print(f"== {name}: {status} in {time.monotonic() - t0:.0f} s", flush=True)
    (out / "slot.json").write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
