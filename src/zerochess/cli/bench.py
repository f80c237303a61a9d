"""``zerochess bench [--quick] [--vs-lc0 | --analysis | --layouts] [--batch B...]
[--sims S...] [--json FILE] [--note TEXT]``: search throughput against mctx + pgx, lc0, or
(``--analysis``) the analysis engine against lc0; the code is in ``zerochess.bench``."""

from __future__ import annotations

import argparse

from zerochess.cli.runs import path_arg


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("bench", help="throughput benchmark against mctx+pgx (and lc0)")
    p.add_argument("--quick", action="store_true",
                   help="a small size (mctx+pgx: B=256, S in {16, 64}; --analysis: 128 "
                   "positions)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--vs-lc0", action="store_true",
                      help="compare with lc0 on Maia-1900 (every lc0 thread/process layout)")
    mode.add_argument("--analysis", action="store_true",
                      help="the analysis engine vs lc0 over UCI: positions/s and latency")
    mode.add_argument("--layouts", action="store_true",
                      help="one process's throughput by shards x expander workers")
    mode.add_argument("--device-search", action="store_true",
                      help="the search on device rules vs the host pipeline (and, on an "
                      "accelerator, vs the network alone)")
    mode.add_argument("--rules", action="store_true",
                      help="expansions/s: device rules vs the host expander and pgx's step")
    mode.add_argument("--uci", action="store_true",
                      help="zerochess uci vs lc0 at engine time controls: nodes per move at "
                      "go movetime along games, and where each search's time goes")
    mode.add_argument("--startup", action="store_true",
                      help="start-up of new `analyse`, `uci`, `analysis` and pure-search "
                      "processes, cold and warm (with --baseline-src DIR: also of those "
                      "sources, interleaved)")
    p.add_argument("--startup-only", nargs="+", choices=("analyse", "uci", "analysis", "search"),
                   metavar="NAME",
                   help="--startup: only these start-ups (analyse, uci, analysis, search)")
    p.add_argument("--batch", type=int, nargs="*", default=None, help="batch sizes")
    p.add_argument("--sims", type=int, nargs="*", default=None, help="simulations per move")
    p.add_argument("--json", metavar="FILE", type=path_arg,
                   help="also write the figures as a JSON record "
                   "(machine, versions, backend, git commit, model hashes)")
    p.add_argument("--note", help="free text stored in the record (e.g. 'shared machine')")
    # multi-leaf search (zerochess.bench.single / leaf_quality / leaves)
    p.add_argument("--single", action="store_true",
                   help="with --vs-lc0: one position at a time, best L vs lc0's best config")
    p.add_argument("--agreement-only", action="store_true",
                   help="with --vs-lc0: the agreement with lc0 alone (no speed layouts)")
    p.add_argument("--leaf-quality", action="store_true",
                   help="search quality vs leaves per step L (Maia-1900, vs L=1 and lc0)")
    p.add_argument("--leaves", action="store_true",
                   help="simulations/s over batch size B x leaves per step L")
    p.add_argument("--gpu-grid", action="store_true",
                   help="the accelerator points (B=1 L=256; B=1024 L=1, 8) vs network alone")
    p.add_argument("--smart-pruning", action="store_true",
                   help="visits saved by smart pruning and the best-move agreement it keeps "
                        "(Maia-1900, vs the unpruned search and lc0)")
    p.add_argument("--puzzles", action="store_true",
                   help="mate-in-1/2 puzzles solved at the first move (Lichess, CC0)")
    p.add_argument("--models", nargs="*", default=None, metavar="SPEC",
                   help="with --puzzles or --gpu-grid: networks (default: builtin for --puzzles; "
                        "resnet:6x64 and resnet:15x768 for --gpu-grid)")
    p.add_argument("--certainty", choices=("both", "on", "off"), default="both",
                   help="with --puzzles: rows with certainty propagation on, off or both")
    p.add_argument("--themes", nargs="*", choices=("mateIn1", "mateIn2"), default=None,
                   help="with --puzzles: the puzzle themes (default both)")
    p.add_argument("--selfplay", action="store_true",
                   help="with --device-search: only the self-play points (the same games on "
                        "the host loop and on the device loop; with --quick the first point "
                        "alone: the built-in evaluator, 64 games at 16 nodes)")
    p.add_argument("--profile", nargs="?", const="results/device_profile", default=None,
                   metavar="DIR",
                   help="with --device-search: where a compiled step's time goes (phase "
                        "shares, HLO ops per step, bytes per simulation) and a jax.profiler "
                        "trace, written to DIR (default results/device_profile); sizes from "
                        "--batch, --sims, --leaves-per-step, --models (first), --tiny")
    p.add_argument("--tiny", action="store_true",
                   help="with --leaves, --gpu-grid, --leaf-quality, --smart-pruning or --vs-lc0 "
                        "--single: a smoke test at tiny sizes")
    u = p.add_argument_group("--uci options")
    u.add_argument("--movetimes", type=int, nargs="+", default=None, metavar="MS",
                   help="go movetime values (default 100 300 1000; --quick 100 300)")
    u.add_argument("--games", type=int, default=None, help="games to follow (default 2)")
    u.add_argument("--plies", type=int, default=None, help="plies per game (default 20)")
    u.add_argument("--modes", nargs="+", choices=("reuse", "fresh"), default=None,
                   help="reuse: one game object per game (tree reuse); fresh: ucinewgame "
                   "before every search (default both)")
    u.add_argument("--lc0-threads", type=int, default=None, metavar="T",
                   help="lc0's Threads (default 2)")
    u.add_argument("--no-lc0", action="store_true", help="zerochess alone (no lc0 installed)")
    u.add_argument("--tree-nodes", type=int, default=None, metavar="N",
                   help="zerochess's MaxTreeNodes (default 16,384, as "
                        "configs/match_uci_vs_lc0.yaml; 0: the engine's own default, 65,536 "
                        "on a CPU)")
    u.add_argument("--baseline-src", metavar="DIR",
                   help="also run zerochess from the sources in DIR (holding zerochess/), "
                        "interleaved: a before/after comparison on one machine at one time "
                        "(--uci, --startup)")
    a = p.add_argument_group("--analysis options")
    a.add_argument("--gpu", action="store_true",
                   help="the GPU size: 16,000 positions, slots 256 and 1024")
    a.add_argument("--positions", type=int, default=None, metavar="N",
                   help="positions (default 1,000; --quick 128; --gpu 16,000)")
    a.add_argument("--visits", type=int, default=None, metavar="V",
                   help="visits per position (default 400)")
    a.add_argument("--slots", type=int, nargs="+", default=None, metavar="B",
                   help="engine slot counts, one engine each (default 64 256; --quick 64; "
                        "--gpu 256 1024)")
    a.add_argument("--queued", type=int, default=None, metavar="N",
                   help="low-priority queries queued during the latency probes (default 1,000)")
    a.add_argument("--probes", type=int, default=None, metavar="K",
                   help="high-priority latency probes (default 20; --quick 5)")
    a.add_argument("--lc0-positions", type=int, default=None, metavar="N",
                   help="positions lc0 searches (default all; --gpu 1,000)")
    a.add_argument("--leaves-per-step", type=int, default=None, metavar="L",
                   help="the engine's leaves per tree per step (default: the engine's)")
    a.add_argument("--workers", type=int, default=None,
                   help="the engine's host move-generation processes (default one per core)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from zerochess.games.config import MAX_BATCH
    from zerochess.validation import MAX_INT32, as_count

    for name, values, most in (("--batch", args.batch, MAX_BATCH),
                               ("--sims", args.sims, MAX_INT32 - 1),
                               ("--movetimes", args.movetimes, 3_600_000)):
        for value in values or ():
            as_count(value, name, 1, most)
    for name, value, most in (("--games", args.games, 1000), ("--plies", args.plies, 500),
                              ("--lc0-threads", args.lc0_threads, 128)):
        if value is not None:
            as_count(value, name, 1, most)
    if getattr(args, "tree_nodes", None) is not None:
        as_count(args.tree_nodes, "--tree-nodes", 0, 2**30)
    from zerochess import bench  # jax: loaded when it runs

    return bench.main(args)
