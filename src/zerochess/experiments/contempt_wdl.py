"""``contempt_wdl``: self-play W/D/L and (w+l)/d against N_scl (the paper's Fig. 2).

Both sides use the same search-contempt config; N_scl = 10^6 is plain PUCT at
these node counts. The paper (via the fork's self-play script) used 1000 nodes per
move, 100 games per N_scl, lc0's default search parameters and the temperature
0.7 / endgame 0.1 / decay over 5 moves, from the standard start. It reports
(w+l)/d about 1 at N_scl 5-8 and above 2.5 at N_scl 1.

Settings per scale (every key documented): ``configs/experiment_contempt_wdl.yaml``. In
the CSV ``wins`` are white wins and ``losses`` black wins.
"""

from __future__ import annotations

import math
from typing import Any

from zerochess.errors import ConfigError
from zerochess.experiments.common import (
    Context,
    Experiment,
    make_player,
    markdown_table,
    pyplot,
    save_figure,
    selfplay_points,
    selfplay_specs,
    wdl_counts,
    write_csv,
)
from zerochess.experiments.runtime import SELFPLAY_PLIES, PlannedGames
from zerochess.games.config import PlayerSpec

NAME = "contempt_wdl"
PAPER = {1: "> 2.5", 5: "~ 1", 8: "~ 1"}


def _check(cfg: dict[str, Any]) -> None:
    values = cfg["n_scl"]
    if not isinstance(values, list) or not values or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in values):
        raise ConfigError(f"n_scl must be a list of integers >= 1, got {values!r}")
    if len(set(values)) != len(values):
        raise ConfigError("n_scl values must be distinct")


def point_name(n_scl: int) -> str:
    return f"nscl{n_scl}"


def points(cfg: dict[str, Any]) -> list[tuple[PlayerSpec, dict[str, Any]]]:
    """One self-play player per N_scl value, with its CSV tags."""
    return [(make_player(point_name(v), cfg["nodes"], {**cfg["search"], "n_scl": v},
                         cfg["temperature"], f"n_scl={v}"), {"n_scl": v})
            for v in cfg["n_scl"]]


def plan(cfg: dict[str, Any]) -> list[PlannedGames]:
    """The games ``run`` plays (for the run-time estimate)."""
    players, specs = selfplay_specs(cfg, points(cfg))
    return [PlannedGames(NAME, specs, players, cfg["batch_size"], SELFPLAY_PLIES)]


def run(ctx: Context) -> str:
    cfg = ctx.config
    rows = selfplay_points(ctx, points(cfg))
    table = []
    for v in cfg["n_scl"]:
        c = wdl_counts([r for r in rows if int(r["n_scl"]) == v])
        table.append({"n_scl": v, **c})
    write_csv(ctx.out_dir / f"{NAME}.csv", table)
    plot(table, ctx.out_dir / f"{NAME}.png", f"{cfg['nodes']} nodes/move")
    return summarize(table, cfg)


def plot(table: list[dict[str, Any]], path: Any, subtitle: str) -> None:
    plt = pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    xs = [r["n_scl"] for r in table]
    ratios = [r["decisive_over_draws"] for r in table]
    finite = [x for x in ratios if not math.isnan(x) and not math.isinf(x)]
    cap = max(finite + [1.0]) * 1.2
    ax1.plot(xs, [cap if math.isinf(x) else x for x in ratios], "o-")
    ax1.set_xscale("log")
    ax1.axhline(1.0, color="grey", lw=0.8, ls=":")
    ax1.set_xlabel("N_scl")
    ax1.set_ylabel("(wins + losses) / draws")
    ax1.set_title(f"(w+l)/d vs N_scl ({subtitle})")
    labels = [str(x) if x < 10**6 else "1e6" for x in xs]
    n = [max(r["games"], 1) for r in table]
    w = [r["wins"] / m for r, m in zip(table, n, strict=True)]
    d = [r["draws"] / m for r, m in zip(table, n, strict=True)]
    l = [r["losses"] / m for r, m in zip(table, n, strict=True)]
    ax2.bar(labels, w, label="white wins", color="#eeeeee", edgecolor="black")
    ax2.bar(labels, d, bottom=w, label="draws", color="#999999", edgecolor="black")
    ax2.bar(labels, l, bottom=[a + b for a, b in zip(w, d, strict=True)], label="black wins",
            color="#333333", edgecolor="black")
    ax2.set_xlabel("N_scl")
    ax2.set_ylabel("fraction of games")
    ax2.set_title("W / D / L")
    ax2.legend(fontsize=8)
    save_figure(fig, path)


def falls_with(xs: list[float], ys: list[float]) -> float:
    """Kendall-style concordance of ys falling as xs grow, in [-1, 1] (1: always falls)."""
    pairs = [(a, b) for a in range(len(xs)) for b in range(a + 1, len(xs))]
    score, count = 0, 0
    for a, b in pairs:
        ya, yb = ys[a], ys[b]
        if math.isnan(ya) or math.isnan(yb) or ya == yb:
            continue
        count += 1
        score += 1 if (ya > yb) == (xs[a] < xs[b]) else -1
    return score / count if count else math.nan


def summarize(table: list[dict[str, Any]], cfg: dict[str, Any]) -> str:
    cols = ["n_scl", "games", "wins", "draws", "losses", "decisive_over_draws", "draw_rate",
            "mean_plies", "move_cap"]
    xs = [float(r["n_scl"]) for r in table]
    ys = [r["decisive_over_draws"] for r in table]
    tau = falls_with(xs, [min(y, 1e9) for y in ys])
    trend = ("falls" if tau > 0.3 else "rises" if tau < -0.3 else "shows no clear trend") \
        if not math.isnan(tau) else "cannot be judged (no draws or no games)"
    lines = [
        f"Self-play at {cfg['nodes']} nodes/move, {cfg['games_per_point']} games per N_scl, "
        f"move cap {cfg['max_plies'] or 'none'} (capped games count as draws).", "",
        markdown_table(table, cols),
        f"![W/D/L vs N_scl]({NAME}.png)", "",
        f"Trend: (w+l)/d {trend} as N_scl grows (concordance {tau:+.2f}; +1 = always falls).",
        "Paper (Fig. 2, 1000 nodes, 100 games per point, a strong lc0 net): (w+l)/d above "
        "2.5 at N_scl 1, about 1 at N_scl 5-8, falling as N_scl grows.",
    ]
    if cfg["nodes"] < 200:
        lines.append(f"At {cfg['nodes']} nodes/move, N_scl values above ~{cfg['nodes']} "
                     "never freeze a node, so they all play plain PUCT.")
    return "\n".join(lines) + "\n"


EXPERIMENT = Experiment(NAME, "Search-contempt self-play: W/D/L vs N_scl (paper Fig. 2)",
                        run, _check, plan)
