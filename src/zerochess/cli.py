"""The ``zerochess`` command line: analyse, bench, selfplay, match, experiment, train."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from zerochess.errors import UserError


def _add_analyse(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("analyse", aliases=["analyze"], help="search positions and report moves",
                       description="Search one position (FEN + moves) or an EPD file as a batch.")
    p.add_argument("fen", nargs="?", default=None,
                   help='FEN or EPD of the position, or "startpos" (quote it)')
    p.add_argument("--moves", nargs="*", default=[], metavar="UCI",
                   help="moves played from the FEN, in UCI notation")
    p.add_argument("--epd", metavar="FILE", help="one position per line (EPD or FEN), batched")
    p.add_argument("--visits", type=int, default=800, help="simulations per position")
    p.add_argument("--search", default="puct", choices=["puct", "contempt", "gumbel", "muzero"])
    p.add_argument("--contempt-limit", type=int, default=None, metavar="N",
                   help="search-contempt N_scl (with --search contempt; default 5)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--model", default="builtin", help="builtin, resnet:BxF, or an lc0 .pb.gz")
    p.add_argument("--workers", type=int, default=None,
                   help="host move-generation processes (default: one per core; 0 = inline)")
    p.add_argument("--include-policy", action="store_true",
                   help="add the raw network policy over the legal moves")
    p.add_argument("--json", action="store_true", help="one JSON object per position per line")
    p.set_defaults(func=_cmd_analyse)


def _wdl(wl: float, d: float) -> tuple[float, float]:
    return (1.0 + wl - d) / 2.0, d


def result_json(ident: str, res, include_policy: bool = False) -> dict:
    """KataGo-style analysis response adapted to chess (see README)."""
    infos = []
    for order, i in enumerate(res.order()):
        visited = res.visits[i] > 0
        win, draw = _wdl(float(res.wl[i]), float(res.d[i]))
        infos.append({
            "move": res.moves[i].uci(),
            "order": order,
            "visits": int(res.visits[i]),
            "winrate": round(win, 6) if visited else None,
            "drawrate": round(draw, 6) if visited else None,
            "q": round(float(res.q[i]), 6) if visited else None,
            "prior": round(float(res.prior[i]), 6),
            "pv": [m.uci() for m in [res.moves[i], *res.pvs[i]]],
        })
    w, d, _ = (float(x) for x in res.root_wdl)
    out = {
        "id": ident,
        "fen": res.fen,
        "moveInfos": infos,
        "rootInfo": {
            "visits": res.root_visits,
            "winrate": round(w, 6),
            "drawrate": round(d, 6),
            "q": round(float(res.root_q), 6),
            "rawWdl": [round(float(x), 6) for x in res.raw_wdl],
        },
    }
    if res.out_of_nodes:
        out["warning"] = f"tree full: {res.dropped_simulations} simulations dropped"
    if include_policy:
        out["policy"] = {m.uci(): round(float(p), 6) for m, p in
                         zip(res.moves, res.policy, strict=True)}
    return out


def _format_table(ident: str, res, include_policy: bool) -> str:
    """lc0-like verbose move stats, best move first."""
    w, d, loss = res.root_wdl
    rw, rd, rl = res.raw_wdl
    lines = [f"position {ident}: {res.fen}",
             f"  root  N: {res.root_visits}  Q: {res.root_q:+.4f}  WDL: {w:.3f}/{d:.3f}/{loss:.3f}"
             f"  net WDL: {rw:.3f}/{rd:.3f}/{rl:.3f}",
             f"  {'move':<7}{'N':>7}  {'P':>7}  {'Q':>8}  {'W':>6}  {'D':>6}  pv"]
    for i in res.order():
        visited = res.visits[i] > 0
        win, draw = _wdl(float(res.wl[i]), float(res.d[i]))
        q = f"{res.q[i]:+8.4f}" if visited else f"{'-':>8}"
        wd = f"{win:6.3f}  {draw:6.3f}" if visited else f"{'-':>6}  {'-':>6}"
        pv = " ".join(m.uci() for m in [res.moves[i], *res.pvs[i]][:10])
        policy = f"  net P: {100 * res.policy[i]:5.2f}%" if include_policy else ""
        lines.append(f"  {res.moves[i].uci():<7}{int(res.visits[i]):>7}  "
                     f"{100 * res.prior[i]:6.2f}%  {q}  {wd}  {pv}{policy}")
    lines.append(f"  bestmove {res.best_move.uci()}")
    if res.out_of_nodes:
        lines.append(f"  warning: tree full, {res.dropped_simulations} simulations dropped")
    return "\n".join(lines)


def _cmd_analyse(args: argparse.Namespace) -> int:
    from zerochess.analysis import analyse
    from zerochess.positions import parse_position, read_epd

    if args.epd:
        if args.fen is not None or args.moves:
            raise UserError("give either a FEN (with --moves) or --epd FILE, not both")
        items = read_epd(args.epd)
    else:
        items = [("0", parse_position(args.fen or "startpos", args.moves))]
    if args.visits < 1:
        raise UserError(f"--visits must be >= 1, got {args.visits}")
    if args.contempt_limit is not None and args.search != "contempt":
        raise UserError("--contempt-limit needs --search contempt")
    progress = None
    bar = None
    if not args.json and sys.stderr.isatty() and args.visits >= 400:
        from rich.progress import Progress

        bar = Progress(transient=True)
        bar.start()
        task = bar.add_task("searching", total=args.visits)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done)

    try:
        results = analyse([b for _, b in items], visits=args.visits, search=args.search,
                          contempt_limit=args.contempt_limit, model=args.model, seed=args.seed,
                          progress=progress, workers=args.workers)
    finally:
        if bar is not None:
            bar.stop()
    for (ident, _), res in zip(items, results, strict=True):
        if args.json:
            print(json.dumps(result_json(ident, res, args.include_policy)), flush=True)
        else:
            print(_format_table(ident, res, args.include_policy), flush=True)
    return 0


def _add_bench(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="throughput benchmark against mctx+pgx (and lc0)")
    p.add_argument("--quick", action="store_true", help="B=256, S=64 only (under 3 minutes)")
    p.add_argument("--vs-lc0", action="store_true", help="compare with lc0 on Maia-1900")
    p.add_argument("--batch", type=int, nargs="*", default=None, help="batch sizes")
    p.add_argument("--sims", type=int, nargs="*", default=None, help="simulations per move")
    p.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    p.set_defaults(func=_cmd_bench)


def _cmd_bench(args: argparse.Namespace) -> int:
    try:
        from benchmarks import bench
    except ImportError as err:  # pragma: no cover - packaging problem
        raise UserError(f"benchmarks package not importable: {err}") from None
    return bench.main(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zerochess", description="Batched MCTS for chess research (lc0 PUCT, "
        "search-contempt, mctx) on JAX.")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_analyse(sub)
    _add_bench(sub)
    try:
        from zerochess.cli_games import add_subcommands
    except ImportError:  # pragma: no cover - during development only
        pass
    else:
        add_subcommands(sub)
    from zerochess.training.command import add_subcommand as add_train

    add_train(sub)
    return parser


def _enable_compilation_cache() -> None:
    """Persist compiled programs between CLI runs (``ZEROCHESS_JAX_CACHE``; empty = off).

    Programs holding the host callback (the search loop) are not cacheable by jax;
    the rest (root init, result summaries, networks) are.
    """
    path = os.environ.get("ZEROCHESS_JAX_CACHE",
                          str(Path.home() / ".cache" / "zerochess" / "jax"))
    if not path:
        return
    import jax

    try:
        jax.config.update("jax_compilation_cache_dir", path)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)
    except Exception:  # pragma: no cover - an unwritable home must not stop the CLI
        pass


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _enable_compilation_cache()
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into e.g. `head`: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except (UserError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except ValueError as err:  # domain errors from python-chess / configs
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
