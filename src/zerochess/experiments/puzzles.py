"""``puzzles`` (also ``zerochess puzzles``): tactical puzzles mined from self-play, SC vs
PUCT at equal nodes (the paper's Applications: "positions misevaluated at N_scl nodes but
correctly evaluated at N nodes", "at various difficulty levels")."""

from __future__ import annotations

import csv
import json
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import chess

from zerochess.errors import ConfigError, quote
from zerochess.experiments.common import (
    Context,
    Experiment,
    markdown_table,
    selfplay_points,
    write_csv,
)
from zerochess.experiments.intervals import (
    cluster_ratio_interval,
    cluster_share_interval,
    format_interval,
    wilson_interval,
)
from zerochess.experiments.miner import (
    LICHESS_COLUMNS,
    MinerSettings,
    Puzzle,
    Source,
    mine,
    validate,
)
from zerochess.experiments.runtime import SELFPLAY_PLIES, PlannedGames
from zerochess.experiments.scan import GameLog, check_scannable, game_boards, scan_plies
from zerochess.experiments.variants import check_scan_config, variant_points
from zerochess.validation import as_count

NAME = "puzzles"


def settings(cfg: Mapping[str, Any]) -> MinerSettings:
    return MinerSettings(cfg["shallow_nodes"], cfg["deep_nodes"], tuple(cfg["ladder"]),
                         float(cfg["min_value"]), float(cfg["margin"]), cfg["max_solver_moves"])


def _check(cfg: dict[str, Any]) -> None:
    check_scan_config(cfg)
    cfg["min_ply"] = max(cfg["min_ply"], 1)  # a puzzle needs the opponent's last move
    cfg["shallow_nodes"] = as_count(cfg["shallow_nodes"], "shallow_nodes", 1,
                                    cfg["deep_nodes"] - 1)
    cfg["max_solver_moves"] = as_count(cfg["max_solver_moves"], "max_solver_moves", 1, 10)
    ladder = cfg["ladder"]
    if not isinstance(ladder, list) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in ladder):
        raise ConfigError(f"ladder must be a list of node counts, got {quote(ladder)}")
    for key, lo, hi in (("min_value", -1.0, 1.0), ("margin", 0.0, 2.0)):
        v = cfg[key]
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not lo <= v <= hi:
            raise ConfigError(f"{key} must be a number in [{lo}, {hi}], got {quote(v)}")
    sf_margin = cfg["stockfish"].get("margin", 0.3)
    if not isinstance(sf_margin, (int, float)) or isinstance(sf_margin, bool) or sf_margin < 0:
        raise ConfigError(f"stockfish.margin must be a number >= 0, got {quote(sf_margin)}")
    if cfg["baseline"] not in [v["name"] for v in cfg["variants"]]:
        raise ConfigError(f"baseline {quote(cfg['baseline'])} is not one of the variants")


def plan(cfg: dict[str, Any]) -> list[PlannedGames]:
    """The games ``run`` plays (for the run-time estimate, measured before any game: so
    a missing Stockfish is reported here, before the warm-up's compile)."""
    from zerochess.experiments.common import selfplay_specs
    from zerochess.experiments.judge import find_stockfish_binary

    find_stockfish_binary(cfg["stockfish"].get("command"))

    players, specs = selfplay_specs(cfg, variant_points(cfg))
    return [PlannedGames(NAME, specs, players, cfg["batch_size"], SELFPLAY_PLIES)]


def _puzzle_json(p: Puzzle, v: Mapping[str, Any]) -> dict[str, Any]:
    return {"fen": p.fen, "moves": [m.uci() for m in p.moves], "found_at": p.found_at,
            "deep_value": round(p.deep_value, 5),
            "margin": None if math.isnan(p.margin) else
            (None if math.isinf(p.margin) else round(p.margin, 5)),
            "shallow_best": p.shallow_best.uci(), "themes": p.themes, "ply": p.source.ply,
            **{k: (None if isinstance(x, float) and (math.isinf(x) or math.isnan(x)) else x)
               for k, x in v.items()}}


def mine_games(ctx: Context, rows: Sequence[Mapping[str, str]]) -> dict[int, dict[str, Any]]:
    """Mine every game not yet in ``mined.jsonl``; returns game index -> its record."""
    from zerochess.experiments.deep_eval import SearchAnalyzer
    from zerochess.experiments.judge import Stockfish

    cfg = ctx.config
    log = GameLog(ctx.out_dir / "mined.jsonl")
    todo = [r for r in rows if int(r["index"]) not in log.done]
    if not todo:
        return log.done
    s = settings(cfg)
    sf_cfg = cfg["stockfish"]
    sf_margin = float(sf_cfg.get("margin", 0.3))
    analyzer = SearchAnalyzer(cfg["model"], cfg["deep_nodes"], cfg["deep_search"],
                              cfg["analysis_batch"], cfg["seed"], ctx.rules)
    with Stockfish(sf_cfg.get("command"), sf_cfg.get("nodes"), sf_cfg.get("depth")) as sf:
        chunk: list[Mapping[str, str]] = []
        for i, row in enumerate(todo):
            chunk.append(row)
            size = sum(len(scan_plies(int(r["plies"]), cfg["min_ply"], cfg["ply_stride"]))
                       for r in chunk)
            if size >= cfg["analysis_batch"] or i == len(todo) - 1:
                log.add(_mine_chunk(chunk, cfg, s, analyzer, sf, sf_margin))
                if ctx.progress:
                    print(f"puzzles: mined {len(log.done)}/{len(rows)} games", flush=True)
                chunk = []
    return log.done


def _mine_chunk(rows: Sequence[Mapping[str, str]], cfg: Mapping[str, Any], s: MinerSettings,
                analyzer: Any, sf: Any, sf_margin: float) -> list[dict[str, Any]]:
    start = time.perf_counter()
    sources, boards, owner = [], [], []
    for j, r in enumerate(rows):
        bs, ms = game_boards(r)
        for p in scan_plies(len(bs), cfg["min_ply"], cfg["ply_stride"]):
            sources.append(Source(bs[p - 1], ms[p - 1], int(r["index"]), p))
            boards.append(bs[p])
            owner.append(j)
    deep = analyzer(boards, cfg["deep_nodes"]) if boards else []
    found = mine(sources, boards, deep, analyzer, s)
    checked = [validate(p, sf, sf_margin) for p in found]
    seconds = (time.perf_counter() - start) / max(len(rows), 1)
    items = []
    for j, r in enumerate(rows):
        g = int(r["index"])
        mine_ = [(p, v) for p, v in zip(found, checked, strict=True) if p.source.game == g]
        items.append({"game": g, "variant": r["variant"],
                      "positions": sum(1 for o in owner if o == j),
                      "puzzles": [_puzzle_json(p, v) for p, v in mine_],
                      "seconds": round(seconds, 3)})
    return items


def _lichess_row(item: Mapping[str, Any], game: int, shallow_nodes: int) -> dict[str, Any]:
    from zerochess.experiments.miner import rating_for

    board = chess.Board(item["fen"])
    moves = [chess.Move.from_uci(m) for m in item["moves"]]
    before = board.copy(stack=False)
    p = Puzzle(Source(before, moves[0], game, item["ply"]), moves[1:], item["found_at"],
               item["deep_value"], math.nan, chess.Move.from_uci(item["shallow_best"]),
               item["themes"])
    row = p.lichess_row(shallow_nodes, f"zerochess:games.pgn?game={game}&ply={item['ply']}")
    row["Rating"] = rating_for(item["found_at"], shallow_nodes)
    return row


def rate_rows(done: Mapping[int, Mapping[str, Any]], cfg: Mapping[str, Any],
              selfplay_pos_per_s: float) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per variant: puzzles (all, and Stockfish-validated) per 1,000 positions with 95%
    by-game bootstrap intervals and per hour; the ratio to the baseline."""
    names = [v["name"] for v in cfg["variants"]]
    draws, seed = cfg["bootstrap"], cfg["seed"]

    def counts(v: str, valid_only: bool) -> tuple[list[int], list[int]]:
        mine_ = [x for x in done.values() if x["variant"] == v]
        return ([sum(1 for p in x["puzzles"] if p["passed"] or not valid_only) for x in mine_],
                [int(x["positions"]) for x in mine_])

    rows, ratios = [], []
    for v in names:
        row: dict[str, Any] = {"variant": v}
        hits, sizes = counts(v, False)
        vhits, _ = counts(v, True)
        n = sum(sizes)
        mined_s = sum(float(x["seconds"]) for x in done.values() if x["variant"] == v)
        hours = (mined_s + (n / selfplay_pos_per_s if selfplay_pos_per_s > 0 else 0)) / 3600
        row.update(games=len(sizes), positions=n, puzzles=sum(hits), validated=sum(vhits))
        for key, h in (("per_1000", hits), ("validated_per_1000", vhits)):
            lo, hi = cluster_share_interval(h, sizes, draws, seed)
            row[key] = 1000 * sum(h) / n if n else math.nan
            row[f"{key}_low"], row[f"{key}_high"] = 1000 * lo, 1000 * hi
        row["per_hour"] = (sum(hits) / hours if hours > 0 and selfplay_pos_per_s > 0
                           else math.nan)
        row["per_mining_hour"] = sum(hits) / (mined_s / 3600) if mined_s > 0 else math.nan
        row["validated_share"] = sum(vhits) / sum(hits) if sum(hits) else math.nan
        row["validated_share_low"], row["validated_share_high"] = (
            wilson_interval(sum(vhits), sum(hits)) if sum(hits) else (math.nan, math.nan))
        rows.append(row)
    base = cfg["baseline"]
    for v in names:
        if v == base:
            continue
        for label, valid_only in (("all", False), ("validated", True)):
            ha, na = counts(v, valid_only)
            hb, nb = counts(base, valid_only)
            sa, sb = sum(ha) / max(sum(na), 1), sum(hb) / max(sum(nb), 1)
            ratio = sa / sb if sb > 0 else (math.inf if sa > 0 else math.nan)
            lo, hi = cluster_ratio_interval(ha, na, hb, nb, draws, seed)
            ratios.append({"variant": v, "base": base, "puzzles": label, "ratio": ratio,
                           "ratio_low": lo, "ratio_high": hi})
    return rows, ratios


def _selfplay_rate(ctx: Context) -> float:
    """Self-play positions per second: this call's games, else the folder's throughput.json."""
    pos = sum(s.positions for s in ctx.stats)
    secs = sum(s.seconds for s in ctx.stats)
    if pos and secs:
        return pos / secs
    path = ctx.out_dir / "throughput.json"
    if path.is_file():
        data = json.loads(path.read_text())
        data = data[0] if isinstance(data, list) else data
        return float(data.get("positions_per_s", 0) or 0)
    return 0.0


def run(ctx: Context) -> str:
    from zerochess.experiments.judge import find_stockfish_binary

    cfg = ctx.config
    find_stockfish_binary(cfg["stockfish"].get("command"))  # before any game is played
    rows = selfplay_points(ctx, variant_points(cfg))
    check_scannable(NAME, rows, cfg["min_ply"], cfg["ply_stride"], ctx.out_dir)
    done = mine_games(ctx, rows)
    lichess, info = [], []
    for g in sorted(done):
        for item in done[g]["puzzles"]:
            row = _lichess_row(item, g, cfg["shallow_nodes"])
            lichess.append(row)
            info.append({"PuzzleId": row["PuzzleId"], "variant": done[g]["variant"], "game": g,
                         "ply": item["ply"], "found_at_nodes": item["found_at"],
                         "shallow_best": item["shallow_best"], "deep_value": item["deep_value"],
                         "margin": item["margin"], "stockfish_passed": item["passed"],
                         "stockfish_best": item.get("sf_best", ""),
                         "stockfish_margin": item.get("sf_margin")})
    with open(ctx.out_dir / "puzzles.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(LICHESS_COLUMNS))
        w.writeheader()
        w.writerows(lichess)
    write_csv(ctx.out_dir / "puzzles_info.csv", info)
    rates, ratios = rate_rows(done, cfg, _selfplay_rate(ctx))
    write_csv(ctx.out_dir / "puzzles_rate.csv", rates)
    write_csv(ctx.out_dir / "puzzles_ratio.csv", ratios)
    return summarize(rates, ratios, info, cfg)


def summarize(rates: Sequence[Mapping[str, Any]], ratios: Sequence[Mapping[str, Any]],
              info: Sequence[Mapping[str, Any]], cfg: Mapping[str, Any]) -> str:
    total = len(info)
    passed = sum(1 for r in info if r["stockfish_passed"])
    lo, hi = wilson_interval(passed, total) if total else (math.nan, math.nan)
    shown = [{**r,
              "per 1,000 [95%]": format_interval(r["per_1000"], r["per_1000_low"],
                                                 r["per_1000_high"], 1),
              "validated per 1,000 [95%]": format_interval(
                  r["validated_per_1000"], r["validated_per_1000_low"],
                  r["validated_per_1000_high"], 1),
              "Stockfish pass [95%]": format_interval(r["validated_share"],
                                                      r["validated_share_low"],
                                                      r["validated_share_high"])}
             for r in rates]
    count = {(r["variant"], k): r[c] for r in rates
             for k, c in (("all", "puzzles"), ("validated", "validated"))}

    def ratio_text(r: Mapping[str, Any]) -> str:
        if not count[(r["base"], r["puzzles"])]:
            return f"unbounded: no puzzle from `{r['base']}`"
        if not count[(r["variant"], r["puzzles"])]:
            return f"0: no puzzle from `{r['variant']}` (the bootstrap cannot bound it)"
        return format_interval(r["ratio"], r["ratio_low"], r["ratio_high"])

    rshown = [{**r, "ratio [95%]": ratio_text(r)} for r in ratios]
    levels: dict[int, int] = {}
    for r in info:
        levels[int(r["found_at_nodes"])] = levels.get(int(r["found_at_nodes"]), 0) + 1
    sf = cfg["stockfish"]
    limit = f"{sf['nodes']} nodes" if sf.get("nodes") else f"depth {sf.get('depth')}"
    lines = [
        f"Self-play at {cfg['nodes']} nodes/move, {cfg['games_per_point']} games per variant, "
        f"move cap {cfg['max_plies'] or 'none'}; scanned: the positions before plies "
        f"{cfg['min_ply']}, {cfg['min_ply'] + cfg['ply_stride']}, ... (every {cfg['ply_stride']}). "
        f"A puzzle: the deep search ({cfg['deep_nodes']} nodes, the "
        f"same network, PUCT) finds a move worth >= {cfg['min_value']} that beats every other "
        f"searched move by >= {cfg['margin']} (win chances on [-1, 1]; a mate in one always "
        f"counts), and the shallow search ({cfg['shallow_nodes']} nodes) plays another move; "
        f"the line is extended while the solver's move stays the only clear one (at most "
        f"{cfg['max_solver_moves']} solver moves). Stockfish ({limit}, 1 thread) validates "
        f"each: its best move at every solver step, ahead of its second line by >= "
        f"{sf.get('margin', 0.3)} (any mate at a mating step). Rating: 1000 + 250 * "
        f"log2(difficulty / {cfg['shallow_nodes']}), difficulty = the first node count of "
        f"{cfg['ladder']} (else {cfg['deep_nodes']}) at which our search finds the first "
        "move. Intervals: 95% percentile bootstrap over games; Wilson for the pass share.", "",
        f"**{total} puzzles, {passed} pass Stockfish's check: "
        f"{format_interval(passed / total if total else math.nan, lo, hi)}.** "
        "(`puzzles.csv`, Lichess's columns; `puzzles_info.csv`.)", "",
        markdown_table(shown, ["variant", "games", "positions", "puzzles", "validated",
                               "per 1,000 [95%]", "validated per 1,000 [95%]", "per_hour",
                               "per_mining_hour", "Stockfish pass [95%]"]),
        "`per_hour`: puzzles per hour of this machine's self-play (at the run's positions/s) "
        "plus mining (`-`: the self-play's rate is not in this folder, e.g. games played by "
        "another call); `per_mining_hour`: per hour of mining alone.", "",
        f"## Ratio to `{cfg['baseline']}` (puzzles per position)", "",
        markdown_table(rshown, ["variant", "base", "puzzles", "ratio [95%]"]),
        "Difficulty (nodes at which our search first finds the move): "
        + (", ".join(f"{n}: {k}" for n, k in sorted(levels.items())) or "none") + ".", "",
    ]
    return "\n".join(lines) + "\n"


EXPERIMENT = Experiment(NAME, "Tactical puzzles mined from self-play: SC vs PUCT "
                        "(paper, Applications)", run, _check, plan)

__all__ = ["EXPERIMENT", "mine_games", "rate_rows", "settings"]
