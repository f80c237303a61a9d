"""``zerochess bench``: simulations/s of zerochess against mctx + pgx chess, as a curve."""

from __future__ import annotations

import dataclasses
import resource
import sys
import time
from collections.abc import Sequence
from typing import Any

import chess
import jax
import numpy as np
from rich.console import Console
from rich.table import Table

from zerochess.bench import host_boundary, peer_mctx_pgx, record
from zerochess.bench.fixtures import (  # noqa: F401 (bench_positions: its former home)
    NUM_POSITIONS,
    bench_positions,
    fill,
)
from zerochess.chess.expander import Expander
from zerochess.neural import load_model
from zerochess.search import Searcher, bytes_per_node

DEFAULT_BATCHES = (1, 64, 256, 1024)
DEFAULT_SIMS = (64, 256, 800)
CURVE_BATCH = 256
CURVE_SIMS = (16, 32, 64, 128, 256)
QUICK_CURVE_SIMS = (16, 64)
RATIO_SIMS = 64
FULL_NET = (6, 64)
QUICK_NET = (2, 32)
RATIO_PREFIX = "ratio_vs_mctx_pgx: "
MIN_RATIO_PREFIX = "min_ratio_vs_mctx_pgx: "
PEER_MEMORY_SHARE = 0.7  # skip a peer point whose dense tree needs more of the free memory


# --- memory -----------------------------------------------------------------------------


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MB (``getrusage``; KB on Linux)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 1024 if sys.platform != "darwin" else rss / 2**20


def _proc_hwm_mb(pid: int) -> float | None:
    """Peak RSS (``VmHWM``) of another live process in MB, if /proc has it."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def worker_peak_rss_mb(expander: Any) -> list[float]:
    """Peak RSS of each worker process of a zerochess ``Expander`` (MB)."""
    out = []
    for proc in getattr(expander, "_procs", []):
        hwm = _proc_hwm_mb(proc.pid) if proc.pid is not None else None
        if hwm is not None:
            out.append(hwm)
    return out


# --- ours -------------------------------------------------------------------------------


@dataclasses.dataclass
class OursPoint:
    """One grid point of zerochess's search."""

    model: str
    batch: int
    sims: int
    compile_s: float
    init_s: float
    run_s: float
    dropped: int

    @property
    def sims_per_s(self) -> float:
        """Simulations/s including init (root preparation + root evaluation)."""
        return self.batch * self.sims / (self.init_s + self.run_s)

    @property
    def sims_per_s_run(self) -> float:
        """Simulations/s of ``run`` alone (init excluded)."""
        return self.batch * self.sims / self.run_s

    def as_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "sims_per_s": self.sims_per_s,
                "sims_per_s_excl_init": self.sims_per_s_run}


def _block(batch: Any) -> None:
    jax.block_until_ready(batch.state)


def run_ours(model: Any, boards: Sequence[chess.Board], batch: int, sims: int,
             expander: Any = None, seed: int = 0, shards: int | None = None) -> OursPoint:
    """Time ``Searcher(model, max_nodes=sims + 1, shards=shards)`` on ``boards`` cycled to
    ``batch`` rows (``shards`` None: the Searcher's default).

    A first ``init`` + ``run(sims)`` (another seed) compiles every program the search
    uses, each network batch size included (as the peer's first call compiles its whole
    search); then one ``init`` and one ``run(sims)`` are timed separately, blocking on the
    device each time. ``compile_s`` is the first search's time less the timed one's.
    """
    if batch < 1 or sims < 1:
        raise ValueError(f"batch and sims must be >= 1, got {batch}, {sims}")
    rows = fill(boards, batch)
    searcher = Searcher(model, max_nodes=sims + 1, expander=expander, shards=shards)
    t0 = time.perf_counter()
    warm = searcher.init(rows, seed=seed)
    warm = searcher.run(warm, sims)
    _block(warm)
    first_s = time.perf_counter() - t0
    del warm

    t0 = time.perf_counter()
    state = searcher.init(rows, seed=seed + 1)
    _block(state)
    t1 = time.perf_counter()
    state = searcher.run(state, sims)
    _block(state)
    t2 = time.perf_counter()
    dropped = int(np.asarray(state.state.tree.dropped).sum())
    compile_s = max(first_s - (t2 - t0), 0.0)
    return OursPoint(model.name, batch, sims, compile_s, t1 - t0, t2 - t1, dropped)


# --- the peer curve -----------------------------------------------------------------------


def peer_layouts() -> list[int]:
    """Shard counts the peer is tried with: 1, and on a multi-core CPU the same
    ``min(cores, 4)`` threads zerochess uses for networks."""
    cores = record.usable_cores()
    if jax.default_backend() == "cpu" and cores > 1:
        return [1, min(cores, 4)]
    return [1]


def peer_point(boards: Sequence[chess.Board], batch: int, sims: int, net: tuple[int, int],
               log: Any = print) -> dict[str, Any]:
    """The peer at (batch, sims) in every layout of :func:`peer_layouts`; ``best`` is the
    fastest. A layout whose dense tree would not fit in memory is skipped with a reason."""
    per_node = peer_mctx_pgx.tree_bytes_per_node()["total"]
    need_gb = per_node * batch * (sims + 1) / 2**30
    tried: list[dict[str, Any]] = []
    for shards in peer_layouts():
        if batch % shards:
            continue
        avail = _available_gb()
        if avail is not None and need_gb > PEER_MEMORY_SHARE * avail:
            tried.append({"shards": shards, "skipped": f"its dense tree needs {need_gb:.1f} "
                          f"GiB, {avail:.1f} GiB available"})
            log(f"peer mctx+pgx B={batch} S={sims} shards={shards}: skipped "
                f"({tried[-1]['skipped']})")
            continue
        res = peer_mctx_pgx.run_peer(boards, batch, sims, *net, shards=shards)
        tried.append(res)
        log(f"peer mctx+pgx B={batch} S={sims} shards={shards} {res['net']}: compile "
            f"{res['compile_s']:.1f}s search {res['search_s']:.2f}s "
            f"{res['sims_per_s']:.0f} sims/s, CPU utilisation {res['cpu_utilisation']:.2f} "
            f"cores")
    measured = [t for t in tried if "sims_per_s" in t]
    best = max(measured, key=lambda t: t["sims_per_s"]) if measured else None
    return {"batch": batch, "sims": sims, "layouts": tried, "best": best}


def _available_gb() -> float | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        return None
    return None


# --- the run ------------------------------------------------------------------------------


def ratio_line(ratio: float | None, prefix: str = RATIO_PREFIX) -> str:
    """``ratio_vs_mctx_pgx: X`` (2 decimals, ``n/a`` if not measured)."""
    return prefix + ("n/a" if ratio is None else f"{ratio:.2f}")


def run_bench(batches: Sequence[int], sims: Sequence[int], net: tuple[int, int],
              curve_batch: int, curve_sims: Sequence[int], builtin: bool = True,
              peer: bool = True, num_positions: int = NUM_POSITIONS, host_leaves: int = 1024,
              expander: Any = None, log: Any = print) -> dict[str, Any]:
    """Everything ``zerochess bench`` measures, as a JSON-able dict.

    Args:
      batches, sims: the grid for our search.
      net: (blocks, filters) of the SE-ResNet used on both sides.
      curve_batch, curve_sims: the batch size and simulation counts of the curve against
        mctx + pgx (ours is measured there too where it is not on the grid).
      builtin: also run the grid with the built-in evaluator.
      peer: run the mctx + pgx peer (else the ratios are None).
      num_positions: distinct positions (cycled to fill each batch).
      host_leaves: leaves in the host boundary measurement (0 = skip).
      expander: a shared ``Expander`` (default: one ``Expander()`` for the whole run).
      log: progress printer.
    """
    boards = bench_positions(num_positions)
    own_expander = expander is None
    expander = Expander() if own_expander else expander
    blocks, filters = net
    net_spec = f"resnet:{blocks}x{filters}"
    specs = (["builtin"] if builtin else []) + [net_spec]
    label = record.backend_label()
    out: dict[str, Any] = {
        "backend": label,
        "positions": {"count": len(boards), "fens": [b.fen() for b in boards]},
        "net": {"blocks": blocks, "filters": filters, "spec": net_spec},
        "expander_workers": expander.num_workers,
        "ours": [],
    }
    curve_points = [(curve_batch, s) for s in curve_sims]
    try:
        for spec in specs:
            model = load_model(spec)
            points = [(b, s) for b in batches for s in sims]
            if spec == net_spec:
                points += [p for p in curve_points if p not in points]
            for b, s in points:
                point = run_ours(model, boards, b, s, expander)
                out["ours"].append({**point.as_dict(), "spec": spec, "backend": label})
                log(f"ours {spec:>12} B={b:<5} S={s:<4} compile {point.compile_s:6.1f}s  "
                    f"init {point.init_s:6.2f}s  run {point.run_s:7.2f}s  "
                    f"{point.sims_per_s:9.0f} sims/s ({point.sims_per_s_run:.0f} excl. init)")
        out["peak_rss_mb_ours"] = peak_rss_mb()
        out["expander_worker_peak_rss_mb"] = worker_peak_rss_mb(expander)
    finally:
        if own_expander:
            expander.close()

    ours_node = bytes_per_node()
    mctx_node = peer_mctx_pgx.tree_bytes_per_node()
    out["bytes_per_node"] = {
        "ours": ours_node, "mctx_dense_4672": mctx_node["tree"],
        "pgx_state_embedding": mctx_node["embedding"],
        "mctx_plus_embedding": mctx_node["total"],
    }
    log(f"tree bytes per node: ours {ours_node} B, mctx dense at 4672 actions "
        f"{mctx_node['tree']} B (+ {mctx_node['embedding']} B pgx state embedding)")

    if host_leaves:
        hb = host_boundary.measure(boards, host_leaves)
        out["host_boundary"] = hb
        log(host_boundary.describe(hb))

    out["curve"] = []
    if peer:
        for b, s in curve_points:
            ours = next(p for p in out["ours"] if p["spec"] == net_spec
                        and (p["batch"], p["sims"]) == (b, s))
            theirs = peer_point(boards, b, s, net, log)
            best = theirs["best"]
            out["curve"].append({
                "batch": b, "sims": s, "backend": label, "ours": ours, "peer": theirs,
                "ratio": ours["sims_per_s"] / best["sims_per_s"] if best else None,
                "ratio_excl_init": (ours["sims_per_s_excl_init"] / best["sims_per_s"]
                                    if best else None)})
    ratios = [c["ratio"] for c in out["curve"] if c["ratio"] is not None]
    ratio_sims = RATIO_SIMS if RATIO_SIMS in curve_sims else max(curve_sims)
    at = next((c for c in out["curve"] if c["sims"] == ratio_sims), None)
    out["ratio_point"] = {"batch": curve_batch, "sims": ratio_sims}
    out["ratio_vs_mctx_pgx"] = at["ratio"] if at else None
    out["min_ratio_vs_mctx_pgx"] = min(ratios) if ratios else None
    out["peak_rss_mb"] = peak_rss_mb()
    return out


def print_report(res: dict[str, Any], net_note: str) -> None:
    """The grid, the curve against mctx + pgx, the summary figures (with ``--quick``,
    ``ratio_device_vs_host_search: X`` too); the last two lines are
    ``min_ratio_vs_mctx_pgx: X`` and ``ratio_vs_mctx_pgx: X``."""
    console = Console(highlight=False, width=max(Console().width, 110))
    table = Table(title=f"zerochess search throughput (simulations/s), {res['backend']}")
    for col in ("model", "B", "S", "compile s", "init s", "run s", "sims/s", "sims/s excl init",
                "dropped"):
        table.add_column(col, justify="left" if col == "model" else "right")
    for p in res["ours"]:
        table.add_row(p["model"], str(p["batch"]), str(p["sims"]), f"{p['compile_s']:.1f}",
                      f"{p['init_s']:.2f}", f"{p['run_s']:.2f}", f"{p['sims_per_s']:.0f}",
                      f"{p['sims_per_s_excl_init']:.0f}", str(p["dropped"]))
    console.print(table)
    bpn = res["bytes_per_node"]
    print(f"tree bytes per node: ours {bpn['ours']} (target <= 1024); mctx dense 4672 actions "
          f"{bpn['mctx_dense_4672']} (+{bpn['pgx_state_embedding']} pgx state)")
    print(f"bytes_per_node: {bpn['ours']}")
    print(f"peak RSS: {res['peak_rss_mb']:.0f} MB this process (after ours: "
          f"{res['peak_rss_mb_ours']:.0f} MB); expander workers: "
          + (", ".join(f"{x:.0f} MB" for x in res["expander_worker_peak_rss_mb"]) or "none"))
    hb = res.get("host_boundary")
    if hb:
        print(host_boundary.describe(hb) + " (target <= 1.5x)")
    print(net_note)
    if res["curve"]:
        curve = Table(title=f"zerochess vs mctx+pgx, {res['backend']}, B={res['curve'][0]['batch']}"
                      " (simulations/s; peer per layout: shards x CPU utilisation)")
        for col in ("S", "ours", "ours excl init", "peer layouts", "peer best", "ratio",
                    "ratio excl init"):
            curve.add_column(col, justify="right")
        for c in res["curve"]:
            layouts = "; ".join(
                f"{t['shards']}x: {t['sims_per_s']:.0f} ({t['cpu_utilisation']:.1f} cores)"
                if "sims_per_s" in t else f"{t['shards']}x: skipped"
                for t in c["peer"]["layouts"])
            best = c["peer"]["best"]
            curve.add_row(str(c["sims"]), f"{c['ours']['sims_per_s']:.0f}",
                          f"{c['ours']['sims_per_s_excl_init']:.0f}", layouts,
                          f"{best['sims_per_s']:.0f} ({best['shards']}x)" if best else "-",
                          f"{c['ratio']:.2f}" if c["ratio"] else "n/a",
                          f"{c['ratio_excl_init']:.2f}" if c["ratio_excl_init"] else "n/a")
        console.print(curve)
        for c in res["curve"]:
            if c["ratio"] is not None and c["sims"] != res["ratio_point"]["sims"]:
                print(f"ratio_vs_mctx_pgx_at_S{c['sims']}: {c['ratio']:.2f}")
    if res.get("ratio_device_vs_host_search") is not None:
        print(f"ratio_device_vs_host_search: {res['ratio_device_vs_host_search']:.2f}")
    print(ratio_line(res["min_ratio_vs_mctx_pgx"], MIN_RATIO_PREFIX))
    print(ratio_line(res["ratio_vs_mctx_pgx"]))


def _grid_arg(values: Sequence[int] | None, default: Sequence[int]) -> list[int]:
    values = list(values) if values else list(default)
    if any(v < 1 for v in values):
        raise ValueError(f"batch sizes and simulation counts must be >= 1, got {values}")
    return values


def main(args: Any) -> int:
    """``zerochess bench`` against mctx + pgx (args: quick, batch, sims, json, note).

    Raises:
      UserError: pgx is not installed (one line saying how to install it).
    """
    peer_mctx_pgx.require_pgx()
    quick = bool(getattr(args, "quick", False))
    user_sims = getattr(args, "sims", None)
    if quick:
        batches = _grid_arg(getattr(args, "batch", None), [CURVE_BATCH])
        sims = _grid_arg(user_sims, QUICK_CURVE_SIMS)
        net = QUICK_NET
    else:
        batches = _grid_arg(getattr(args, "batch", None), DEFAULT_BATCHES)
        sims = _grid_arg(user_sims, DEFAULT_SIMS)
        net = FULL_NET
    curve_batch = CURVE_BATCH if CURVE_BATCH in batches else batches[0]
    curve_sims = sims if (quick or user_sims) else list(CURVE_SIMS)
    models = [f"resnet:{net[0]}x{net[1]}"] + ([] if quick else ["builtin"])
    head = record.header("mctx_pgx", models, getattr(args, "note", None))
    record.print_header(head)
    note = (f"net body: SE-ResNet {net[0]}x{net[1]} (SE ratio 4, ReLU) on both sides"
            f"{' (--quick: tiny net)' if quick else ''}; curve at B={curve_batch}, S in "
            f"{list(curve_sims)}; ours including init / mctx gumbel_muzero_policy + pgx "
            "including root evaluation, the peer in its fastest layout")
    print(f"grid: B in {batches} x S in {sims}; models: {', '.join(models)}"
          + (" (--quick skips the built-in evaluator)" if quick else ""), flush=True)
    res = run_bench(batches, sims, net, curve_batch, curve_sims, builtin=not quick)
    res["quick"] = quick
    if quick:  # the whole search on device rules against the host pipeline (issue 29)
        from zerochess.bench import device_search

        res["device_search"] = device_search.search_ratio(device_search.QUICK)
        res["ratio_device_vs_host_search"] = device_search.ratio_at(res["device_search"])
    if getattr(args, "json", None):
        record.write(args.json, head, {"bench": "mctx_pgx", **res})
    print(f"total time {record.finish(head)['wall_s']:.0f}s", file=sys.stderr)
    print_report(res, note)
    return 0


__all__ = ["CURVE_BATCH", "CURVE_SIMS", "DEFAULT_BATCHES", "DEFAULT_SIMS", "FULL_NET",
           "MIN_RATIO_PREFIX", "NUM_POSITIONS", "OursPoint", "PEER_MEMORY_SHARE",
           "QUICK_CURVE_SIMS", "QUICK_NET", "RATIO_PREFIX", "RATIO_SIMS", "bench_positions",
           "fill", "main", "peak_rss_mb", "peer_layouts", "peer_point", "print_report",
           "ratio_line", "run_bench", "run_ours", "worker_peak_rss_mb"]
