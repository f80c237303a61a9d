"""``zerochess analyse``: search positions (a FEN + moves, or an EPD file as one batch) and
print lc0-like move stats or KataGo-style JSON."""

from __future__ import annotations

import argparse
import json
import sys

from zerochess.errors import UserError
from zerochess.positions import parse_position, read_epd


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
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
    p.add_argument("--leaves-per-step", "-L", type=int, default=None, metavar="L",
                   help="leaves gathered per position and step (lc0's minibatch; default: 16 "
                        "below 16 positions, else 1; 1 is the exact one-leaf search)")
    p.add_argument("--cache-size", type=int, default=0, metavar="N",
                   help="evaluation cache entries (lc0's NNCache; default 0 = none)")
    p.add_argument("--include-policy", action="store_true",
                   help="add the raw network policy over the legal moves")
    p.add_argument("--json", action="store_true", help="one JSON object per position per line")
    p.add_argument("--chess960", action="store_true",
                   help="chess960: castling moves print king-to-rook (lc0's UCI_Chess960); "
                   "FENs with chess960 castling rights are read as chess960 without it")
    p.set_defaults(run=run)


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
            "score": res.score(i).as_dict() if visited else None,
            "wdl": list(res.wdl_permille(i)) if visited else None,
            "proven": res.proven(i),
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
            "score": res.score().as_dict(),
            "wdl": list(res.wdl_permille()),
        },
    }
    out["stats"] = res.stats()
    if res.out_of_nodes:
        out["warning"] = f"tree full: {res.dropped_simulations} simulations dropped"
    if include_policy:
        out["policy"] = {m.uci(): round(float(p), 6) for m, p in
                         zip(res.moves, res.policy, strict=True)}
    return out


def format_table(ident: str, res, include_policy: bool) -> str:
    """lc0-like verbose move stats, best move first."""
    w, d, loss = res.root_wdl
    rw, rd, rl = res.raw_wdl
    lines = [f"position {ident}: {res.fen}",
             f"  root  N: {res.root_visits}  Q: {res.root_q:+.4f}  WDL: {w:.3f}/{d:.3f}/{loss:.3f}"
             f"  net WDL: {rw:.3f}/{rd:.3f}/{rl:.3f}  score {res.score()}",
             f"  {'move':<7}{'N':>7}  {'P':>7}  {'Q':>8}  {'W':>6}  {'D':>6}  "
             f"{'score':>8}  pv"]
    for i in res.order():
        visited = res.visits[i] > 0
        win, draw = _wdl(float(res.wl[i]), float(res.d[i]))
        q = f"{res.q[i]:+8.4f}" if visited else f"{'-':>8}"
        wd = f"{win:6.3f}  {draw:6.3f}" if visited else f"{'-':>6}  {'-':>6}"
        wd += f"  {str(res.score(i)) if visited else '-':>8}"
        pv = " ".join(m.uci() for m in [res.moves[i], *res.pvs[i]][:10])
        policy = f"  net P: {100 * res.policy[i]:5.2f}%" if include_policy else ""
        lines.append(f"  {res.moves[i].uci():<7}{int(res.visits[i]):>7}  "
                     f"{100 * res.prior[i]:6.2f}%  {q}  {wd}  {pv}{policy}")
    lines.append(f"  bestmove {res.best_move.uci()}")
    nps = f"  nps {res.nodes_per_second:.0f}" if res.search_time_s > 0 else ""
    lines.append(f"  playouts {res.playouts}  depth {res.depth:.1f}  seldepth {res.seldepth}  "
                 f"nn evals {res.nn_evals}  cache hits {res.cache_hits}  "
                 f"collisions {res.collisions}{nps}")
    if res.out_of_nodes:
        lines.append(f"  warning: tree full, {res.dropped_simulations} simulations dropped")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from zerochess.analysis import analyse  # jax: loaded only when the command runs
    from zerochess.program_store import preloading

    if args.epd:
        if args.fen is not None or args.moves:
            raise UserError("give either a FEN (with --moves) or --epd FILE, not both")
        items = read_epd(args.epd, chess960=args.chess960 or None)
    else:
        fen = "startpos" if args.fen is None else args.fen
        items = [("0", parse_position(fen, args.moves, chess960=args.chess960 or None))]
    if args.visits < 1:
        raise UserError(f"--visits must be >= 1, got {args.visits}")
    if args.leaves_per_step is not None and args.leaves_per_step < 1:
        raise UserError(f"--leaves-per-step must be >= 1, got {args.leaves_per_step}")
    if args.cache_size < 0:
        raise UserError(f"--cache-size must be >= 0, got {args.cache_size}")
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

    # the programs an earlier run of these settings stored load in parallel threads
    tag = (f"analyse {args.model} positions={len(items)} visits={args.visits} "
           f"search={args.search} L={args.leaves_per_step} cache={args.cache_size} "
           f"workers={args.workers}")
    try:
        with preloading(tag):
            results = analyse([b for _, b in items], visits=args.visits, search=args.search,
                              contempt_limit=args.contempt_limit, model=args.model,
                              seed=args.seed, progress=progress, workers=args.workers,
                              leaves_per_step=args.leaves_per_step, cache_size=args.cache_size)
    finally:
        if bar is not None:
            bar.stop()
    for (ident, _), res in zip(items, results, strict=True):
        if args.json:
            print(json.dumps(result_json(ident, res, args.include_policy)), flush=True)
        else:
            print(format_table(ident, res, args.include_policy), flush=True)
    return 0
