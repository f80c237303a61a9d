"""``repeat_rate``: the fraction of repeated games against move number (the paper's Fig. 4)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from zerochess.errors import ConfigError
from zerochess.experiments.common import (
    Context,
    Experiment,
    check_named_list,
    make_player,
    markdown_table,
    new_figure,
    save_figure,
    selfplay_points,
    write_csv,
)
from zerochess.games.stats import format_interval, wilson_interval

NAME = "repeat_rate"


def _check(cfg: dict[str, Any]) -> None:
    check_named_list(cfg["variants"], "variants", ("name", "search", "temperature"))
    if not isinstance(cfg["max_move"], int) or cfg["max_move"] < 1:
        raise ConfigError("max_move must be an integer >= 1")


def repeated_fraction(games: Sequence[Sequence[str]], move: int) -> float:
    """Fraction of games whose first ``2 * move`` plies are shared with another game."""
    if not games:
        return float("nan")
    keys = [tuple(g[: 2 * move]) for g in games]
    counts = Counter(keys)
    return sum(1 for k in keys if counts[k] > 1) / len(keys)


def repeat_table(rows: Sequence[Mapping[str, str]], variants: Sequence[str],
                 max_move: int) -> list[dict[str, Any]]:
    """One row per (variant, move number) with the repeated fraction."""
    out = []
    for v in variants:
        games = [r["moves"].split() for r in rows if r["variant"] == v]
        distinct = len({tuple(g) for g in games})
        for m in range(1, max_move + 1):
            frac = repeated_fraction(games, m)
            lo, hi = wilson_interval(round(frac * len(games)), len(games)) if games \
                else (math.nan, math.nan)
            out.append({"variant": v, "move": m, "games": len(games),
                        "distinct_games": distinct, "repeated_fraction": frac,
                        "repeated_fraction_low": lo, "repeated_fraction_high": hi})
    return out


def run(ctx: Context) -> str:
    cfg = ctx.config
    points = []
    for v in cfg["variants"]:
        player = make_player(str(v["name"]), cfg["nodes"], v.get("search"),
                             v.get("temperature"), f"variant {v['name']}")
        points.append((player, {"variant": player.name}))
    rows = selfplay_points(ctx, points)
    names = [p.name for p, _ in points]
    table = repeat_table(rows, names, cfg["max_move"])
    write_csv(ctx.out_dir / f"{NAME}.csv", table)
    plot(table, names, ctx.out_dir / f"{NAME}.png", f"{cfg['nodes']} nodes/move")
    marks = sorted({1, 5, 10, 20, cfg["max_move"]} & set(range(1, cfg["max_move"] + 1)))
    summary_rows = []
    for v in names:
        hits = {t["move"]: t for t in table if t["variant"] == v}
        r: dict[str, Any] = {"variant": v, "games": hits[1]["games"],
                             "distinct games": hits[1]["distinct_games"]}
        r.update({f"move {m}": format_interval(hits[m]["repeated_fraction"],
                                               hits[m]["repeated_fraction_low"],
                                               hits[m]["repeated_fraction_high"])
                  for m in marks})
        summary_rows.append(r)
    return (f"Self-play at {cfg['nodes']} nodes/move, {cfg['games_per_point']} games per "
            "variant. Fraction of games whose opening up to move m is shared with another "
            "game of the same variant, with a 95% Wilson interval (games treated as "
            "independent trials; repeated games come in groups, so the interval is "
            "indicative):\n\n" + markdown_table(summary_rows)
            + f"\n![repeated games vs move number]({NAME}.png)\n\n"
            "Paper (Fig. 4): PUCT self-play repeats many games, search-contempt far fewer "
            "(its sampling at opponent nodes diversifies the games).\n")


def plot(table: list[dict[str, Any]], names: Sequence[str], path: Any, subtitle: str) -> None:
    fig, ax = new_figure(figsize=(6.5, 4))
    for v in names:
        pts = [t for t in table if t["variant"] == v]
        moves = [t["move"] for t in pts]
        line = ax.plot(moves, [t["repeated_fraction"] for t in pts], "o-", ms=3, label=v)[0]
        ax.fill_between(moves, [t["repeated_fraction_low"] for t in pts],
                        [t["repeated_fraction_high"] for t in pts], color=line.get_color(),
                        alpha=0.15, lw=0)
    ax.set_xlabel("move number")
    ax.set_ylabel("fraction of repeated games")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"Repeated games vs move number, 95% CI bands ({subtitle})", fontsize=10)
    ax.legend(fontsize=8)
    save_figure(fig, path)


EXPERIMENT = Experiment(NAME, "Repeated self-play games vs move number (paper Fig. 4)",
                        run, _check)
