"""``zerochess bench --layouts``: throughput of one process by how it uses the cores."""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from zerochess.bench import record
from zerochess.bench.fixtures import NUM_POSITIONS, bench_positions
from zerochess.bench.throughput import run_ours
from zerochess.chess.expander import Expander
from zerochess.neural import load_model

FULL_POINTS = (("builtin", 256, 64), ("resnet:2x32", 256, 64), ("resnet:6x64", 64, 200))
QUICK_POINTS = (("builtin", 64, 32), ("resnet:2x32", 64, 32))


def layouts() -> list[tuple[int, int | None]]:
    """(shards, expander workers) pairs: 1 and ``min(cores, 4)`` shards x inline (0) and
    the default worker pool (None)."""
    cores = record.usable_cores()
    shard_counts = sorted({1, min(cores, 4)})
    workers = [0, None] if cores > 1 else [0]
    return [(s, w) for s in shard_counts for w in workers]


def run_layouts(points: Any, num_positions: int = NUM_POSITIONS, log: Any = print
                ) -> list[dict[str, Any]]:
    """Every (model, B, S) of ``points`` in every layout; one dict per measurement."""
    boards = bench_positions(num_positions)
    label = record.backend_label()
    out = []
    for spec, batch, sims in points:
        model = load_model(spec)
        for shards, workers in layouts():
            with Expander(workers) as expander:
                point = run_ours(model, boards, batch, sims, expander, shards=shards)
                n_workers = expander.num_workers
            row = {**point.as_dict(), "spec": spec, "shards": shards,
                   "expander_workers": n_workers, "backend": label}
            out.append(row)
            log(f"{spec:>12} B={batch:<4} S={sims:<4} shards={shards} expander "
                f"{'inline' if not n_workers else f'{n_workers} workers'}: "
                f"{point.sims_per_s:8.0f} sims/s ({point.sims_per_s_run:.0f} excl. init), "
                f"compile {point.compile_s:.1f}s")
    return out


def print_report(rows: list[dict[str, Any]]) -> None:
    console = Console(highlight=False, width=max(Console().width, 100))
    table = Table(title=f"throughput in one process by layout, {record.backend_label()}")
    for col in ("model", "B", "S", "shards x expander", "sims/s", "sims/s excl init"):
        table.add_column(col, justify="left" if col == "model" else "right")
    for r in rows:
        exp = "inline" if not r["expander_workers"] else f"{r['expander_workers']} workers"
        table.add_row(r["spec"], str(r["batch"]), str(r["sims"]), f"{r['shards']} x {exp}",
                      f"{r['sims_per_s']:.0f}", f"{r['sims_per_s_excl_init']:.0f}")
    console.print(table)


def main(args: Any) -> int:
    """``zerochess bench --layouts [--quick] [--json FILE] [--note TEXT]``."""
    quick = bool(getattr(args, "quick", False))
    points = QUICK_POINTS if quick else FULL_POINTS
    head = record.header("layouts", sorted({p[0] for p in points}), getattr(args, "note", None))
    record.print_header(head)
    rows = run_layouts(points, log=lambda m: print(m, file=sys.stderr, flush=True))
    if getattr(args, "json", None):
        record.write(args.json, head, {"bench": "layouts", "quick": quick, "rows": rows})
    print_report(rows)
    return 0


__all__ = ["FULL_POINTS", "QUICK_POINTS", "layouts", "main", "run_layouts"]
