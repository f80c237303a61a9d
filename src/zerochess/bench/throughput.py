"""``zerochess bench``: simulations/s of zerochess vs mctx + pgx chess, tree size, host cost.

What it measures (all on one fixed, seeded set of middlegame positions from random
games, cycled to fill each batch):

- **ours**: ``zerochess.Searcher(model, max_nodes=S + 1)`` (default ``Expander``:
  worker processes when the machine has more than one core) for every batch size
  B and simulation count S of the grid, with the built-in evaluator and with an
  SE-ResNet. Per point: compile time (the first ``init`` + a 1-simulation ``run``,
  dominated by XLA compilation), then one timed ``init`` (host root preparation +
  root evaluation) and one timed ``run(S)``; simulations/s are reported including
  and excluding init.
- **peer**: ``mctx.gumbel_muzero_policy`` on pgx chess (dense 4672 actions) with
  an SE-ResNet of the same body (:mod:`zerochess.bench.peer_mctx_pgx`), on the same
  positions, at the ratio point (B=256, S=64 by default); the ratio is ours
  (SE-ResNet, init included) / peer (root evaluation included).
- tree bytes per node (ours vs mctx's dense tree at 4672 actions), peak RSS, and
  the host boundary cost per leaf: ``zerochess.chess.rules.expand_batch`` on a
  batch of leaves vs raw python-chess (``Board(fen)`` + ``push`` +
  ``list(legal_moves)`` + ``is_game_over()``) per leaf.

``--quick``: B=256, S=64 only, the SE-ResNet only (no built-in evaluator row), a
2x32 SE-ResNet on both sides; the last line printed is ``ratio_vs_mctx_pgx: X``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import random
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

from zerochess.bench import peer_mctx_pgx
from zerochess.chess import state as chess_state
from zerochess.chess.expander import Expander
from zerochess.chess.policy_map import move_to_index
from zerochess.chess.rules import expand_batch
from zerochess.neural import load_model
from zerochess.search import Searcher, bytes_per_node

DEFAULT_BATCHES = (1, 64, 256, 1024)
DEFAULT_SIMS = (64, 256, 800)
RATIO_POINT = (256, 64)
FULL_NET = (6, 64)
QUICK_NET = (2, 32)
NUM_POSITIONS = 32
RATIO_PREFIX = "ratio_vs_mctx_pgx: "


# --- machine and positions ----------------------------------------------------------------


def machine_info() -> dict[str, Any]:
    """CPU model, core counts, python / jax versions, jax backend and devices."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        usable = os.cpu_count() or 1
    return {
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "usable_cores": usable,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "jax": jax.__version__,
        "jax_backend": jax.default_backend(),
        "jax_devices": [f"{d.platform}:{d.device_kind}" for d in jax.devices()],
    }


def bench_positions(count: int = NUM_POSITIONS, seed: int = 0, min_plies: int = 20,
                    max_plies: int = 50) -> list[chess.Board]:
    """``count`` varied middlegame positions from seeded random games (with move stacks).

    Each game plays ``min_plies..max_plies`` uniformly random legal moves from the
    start; a position is kept if the game is not over, the side to move has at
    least 10 legal moves and both sides still have a piece besides king and pawns.
    """
    rng = random.Random(seed)
    boards: list[chess.Board] = []
    while len(boards) < count:
        board = chess.Board()
        for _ in range(rng.randint(min_plies, max_plies)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        pieces_ok = all(
            any(board.pieces_mask(pt, color) for pt in (chess.KNIGHT, chess.BISHOP,
                                                         chess.ROOK, chess.QUEEN))
            for color in chess.COLORS)
        if not board.is_game_over(claim_draw=False) and board.legal_moves.count() >= 10 \
                and pieces_ok:
            boards.append(board)
    return boards


def fill(boards: Sequence[chess.Board], batch: int) -> list[chess.Board]:
    """``boards`` cycled to ``batch`` rows."""
    return [boards[i % len(boards)] for i in range(batch)]


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
             expander: Any = None, seed: int = 0) -> OursPoint:
    """Time ``Searcher(model, max_nodes=sims + 1)`` on ``boards`` cycled to ``batch`` rows.

    A first ``init`` + 1-simulation ``run`` compiles (``compile_s``); then one ``init``
    and one ``run(sims)`` are timed separately, blocking on the device each time.
    """
    if batch < 1 or sims < 1:
        raise ValueError(f"batch and sims must be >= 1, got {batch}, {sims}")
    rows = fill(boards, batch)
    searcher = Searcher(model, max_nodes=sims + 1, expander=expander)
    t0 = time.perf_counter()
    warm = searcher.init(rows, seed=seed)
    warm = searcher.run(warm, 1)
    _block(warm)
    compile_s = time.perf_counter() - t0
    del warm

    t0 = time.perf_counter()
    state = searcher.init(rows, seed=seed + 1)
    _block(state)
    t1 = time.perf_counter()
    state = searcher.run(state, sims)
    _block(state)
    t2 = time.perf_counter()
    dropped = int(np.asarray(state.state.tree.dropped).sum())
    return OursPoint(model.name, batch, sims, compile_s, t1 - t0, t2 - t1, dropped)


# --- host boundary ----------------------------------------------------------------------


def host_boundary(boards: Sequence[chess.Board], leaves: int = 1024, seed: int = 0,
                  repeats: int = 3) -> dict[str, float]:
    """Per-leaf cost of ``rules.expand_batch`` vs raw python-chess (best of ``repeats``).

    Leaves are ``boards`` (cycled) each with a seeded random legal move. Raw
    python-chess per leaf: ``Board(fen)``, ``push``, ``list(legal_moves)``,
    ``is_game_over()``. Also times the default ``Expander`` (worker processes).
    """
    rng = random.Random(seed)
    rows = fill(boards, leaves)
    moves = [rng.choice(list(b.legal_moves)) for b in rows]
    fens = [b.fen() for b in rows]
    parent = chess_state.stack([chess_state.from_board(b) for b in rows])
    index = np.array([move_to_index(b, m) for b, m in zip(rows, moves, strict=True)],
                     np.int16)

    def best(fn: Any) -> float:
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return min(times) / leaves

    def raw() -> None:
        for fen, move in zip(fens, moves, strict=True):
            board = chess.Board(fen)
            board.push(move)
            list(board.legal_moves)
            board.is_game_over()

    ours = best(lambda: expand_batch(parent, index))
    python_chess = best(raw)
    with Expander() as pool:
        pool(parent, index)  # start-up / first exchange
        pooled = best(lambda: pool(parent, index))
        workers = pool.num_workers
    return {
        "leaves": leaves,
        "expand_batch_us_per_leaf": ours * 1e6,
        "python_chess_us_per_leaf": python_chess * 1e6,
        "ratio": ours / python_chess,
        "expander_workers": workers,
        "expander_wall_us_per_leaf": pooled * 1e6,
    }


# --- the run ----------------------------------------------------------------------------


def ratio_line(ratio: float | None) -> str:
    """The final line: ``ratio_vs_mctx_pgx: X`` (2 decimals, ``n/a`` if not measured)."""
    return RATIO_PREFIX + ("n/a" if ratio is None else f"{ratio:.2f}")


def _available_gb() -> float | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        return None
    return None


def run_bench(batches: Sequence[int], sims: Sequence[int], net: tuple[int, int],
              ratio_point: tuple[int, int], builtin: bool = True, peer: bool = True,
              num_positions: int = NUM_POSITIONS, host_leaves: int = 1024,
              expander: Any = None, log: Any = print) -> dict[str, Any]:
    """Everything ``zerochess bench`` measures, as a JSON-able dict.

    Args:
      batches, sims: the grid for our search.
      net: (blocks, filters) of the SE-ResNet used on both sides.
      ratio_point: (B, S) of the comparison with mctx + pgx (measured for ours too,
        if it is not on the grid).
      builtin: also run the grid with the built-in evaluator.
      peer: run the mctx + pgx peer (else the ratio is None).
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
    out: dict[str, Any] = {
        "machine": machine_info(),
        "positions": {"count": len(boards), "fens": [b.fen() for b in boards]},
        "net": {"blocks": blocks, "filters": filters, "spec": net_spec},
        "expander_workers": expander.num_workers,
        "ours": [],
    }
    try:
        for spec in specs:
            model = load_model(spec)
            points = [(b, s) for b in batches for s in sims]
            if spec == net_spec and ratio_point not in points:
                points.append(ratio_point)
            for b, s in points:
                point = run_ours(model, boards, b, s, expander)
                out["ours"].append(point.as_dict())
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
        hb = host_boundary(boards, host_leaves)
        out["host_boundary"] = hb
        log(f"host boundary per leaf: expand_batch {hb['expand_batch_us_per_leaf']:.1f} us vs "
            f"raw python-chess {hb['python_chess_us_per_leaf']:.1f} us -> ratio "
            f"{hb['ratio']:.2f} (Expander with {hb['expander_workers']} workers: "
            f"{hb['expander_wall_us_per_leaf']:.1f} us/leaf wall)")

    out["peer"] = None
    out["ratio"] = None
    if peer:
        b, s = ratio_point
        need_gb = mctx_node["total"] * b * (s + 1) / 2**30
        avail = _available_gb()
        if avail is not None and need_gb > 0.7 * avail:
            log(f"peer skipped: its tree needs {need_gb:.1f} GiB, {avail:.1f} GiB available")
        else:
            res = peer_mctx_pgx.run_peer(boards, b, s, blocks, filters)
            out["peer"] = res
            ours = next(p for p in out["ours"] if p["model"].startswith(net_spec + ":")
                        and (p["batch"], p["sims"]) == ratio_point)
            out["ratio"] = ours["sims_per_s"] / res["sims_per_s"]
            out["ratio_excl_init"] = ours["sims_per_s_excl_init"] / res["sims_per_s"]
            log(f"peer mctx+pgx B={b} S={s} {res['net']}: compile {res['compile_s']:.1f}s "
                f"search {res['search_s']:.2f}s {res['sims_per_s']:.0f} sims/s "
                f"(positions converted in {res['convert_s']:.1f}s)")
    out["peak_rss_mb"] = peak_rss_mb()
    out["ratio_point"] = {"batch": ratio_point[0], "sims": ratio_point[1]}
    return out


def print_report(res: dict[str, Any], net_note: str) -> None:
    """The rich table of the grid and the summary figures (ends with the ratio line)."""
    console = Console(highlight=False, width=max(Console().width, 110))
    table = Table(title="zerochess search throughput (simulations/s)")
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
        print(f"host boundary: {hb['expand_batch_us_per_leaf']:.1f} us/leaf (expand_batch) vs "
              f"{hb['python_chess_us_per_leaf']:.1f} us/leaf (python-chess) = "
              f"{hb['ratio']:.2f}x (target <= 1.5x)")
    rb, rs = res["ratio_point"]["batch"], res["ratio_point"]["sims"]
    print(net_note)
    if res["peer"]:
        ours = res["peer"]["sims_per_s"] * res["ratio"]
        print(f"B={rb} S={rs}: ours {ours:.0f} sims/s vs mctx+pgx "
              f"{res['peer']['sims_per_s']:.0f} sims/s (init excluded: "
              f"{res['ratio_excl_init']:.2f}x) (target >= 4x)")
    print(ratio_line(res["ratio"]))


def _grid_arg(values: Sequence[int] | None, default: Sequence[int]) -> list[int]:
    values = list(values) if values else list(default)
    if any(v < 1 for v in values):
        raise ValueError(f"batch sizes and simulation counts must be >= 1, got {values}")
    return values


def main(args: Any) -> int:
    """``zerochess bench`` against mctx + pgx (args: quick, batch, sims, json).

    Raises:
      UserError: pgx is not installed (one line saying how to install it).
    """
    peer_mctx_pgx.require_pgx()
    quick = bool(getattr(args, "quick", False))
    if quick:
        batches = _grid_arg(getattr(args, "batch", None), [RATIO_POINT[0]])
        sims = _grid_arg(getattr(args, "sims", None), [RATIO_POINT[1]])
        net = QUICK_NET
    else:
        batches = _grid_arg(getattr(args, "batch", None), DEFAULT_BATCHES)
        sims = _grid_arg(getattr(args, "sims", None), DEFAULT_SIMS)
        net = FULL_NET
    ratio_point = RATIO_POINT if (RATIO_POINT[0] in batches and RATIO_POINT[1] in sims) \
        else (batches[0], sims[0])

    info = machine_info()
    print(f"machine: {info['cpu']}, {info['usable_cores']} usable cores "
          f"(cpu_count {info['cpu_count']}); jax {info['jax']} backend {info['jax_backend']} "
          f"devices {', '.join(info['jax_devices'])}")
    note = (f"net body for the ratio: SE-ResNet {net[0]}x{net[1]} (SE ratio 4, ReLU) on both "
            f"sides{' (--quick: tiny net)' if quick else ''}; ratio at B={ratio_point[0]}, "
            f"S={ratio_point[1]}, ours including init / mctx gumbel_muzero_policy + pgx "
            "including root evaluation")
    models = f"resnet:{net[0]}x{net[1]}" if quick else f"builtin, resnet:{net[0]}x{net[1]}"
    print(f"grid: B in {batches} x S in {sims}; models: {models}"
          + (" (--quick skips the built-in evaluator to stay within 3 minutes)" if quick else ""))
    t0 = time.perf_counter()
    res = run_bench(batches, sims, net, ratio_point, builtin=not quick)
    res["total_s"] = time.perf_counter() - t0
    res["quick"] = quick
    if getattr(args, "json", None):
        with open(args.json, "w") as fh:
            json.dump(res, fh, indent=2, default=float)
    print(f"total time {res['total_s']:.0f}s")
    print_report(res, note)
    return 0
