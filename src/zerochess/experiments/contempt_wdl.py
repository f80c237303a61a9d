"""``contempt_wdl``: self-play W/D/L and (w+l)/d against N_scl (the paper's Fig. 2)."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

from zerochess.errors import ConfigError, quote
from zerochess.experiments.common import (
    Context,
    Experiment,
    errorbar_arrays,
    make_player,
    markdown_table,
    move_cap_sentence,
    new_figure,
    save_figure,
    selfplay_points,
    selfplay_specs,
    wdl_counts,
    with_intervals,
    write_csv,
)
from zerochess.experiments.runtime import SELFPLAY_PLIES, PlannedGames
from zerochess.experiments.terminal import wdl_table
from zerochess.games.config import PlayerSpec
from zerochess.games.stats import TrendTest, trend_test

NAME = "contempt_wdl"
PAPER = {1: "> 2.5", 5: "~ 1", 8: "~ 1"}


def _check(cfg: dict[str, Any]) -> None:
    values = cfg["n_scl"]
    if not isinstance(values, list) or not values or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in values):
        raise ConfigError(f"n_scl must be a list of integers >= 1, got {quote(values)}")
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


RATE_SERIES = (("white_win_rate", "white wins", "#4c72b0", "o"),
               ("draw_rate", "draws", "#555555", "s"),
               ("black_win_rate", "black wins", "#c44e52", "^"))


def plot(table: list[dict[str, Any]], path: Any, subtitle: str) -> None:
    """(w+l)/d and the W/D/L rates per N_scl (evenly spaced, in order), each with its 95%
    interval as error bars."""
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(11, 4))
    pos = list(range(len(table)))
    labels = [str(r["n_scl"]) if r["n_scl"] < 10**6 else "1e6\n(PUCT)" for r in table]
    ends = [r[k] for r in table for k in ("decisive_over_draws", "decisive_over_draws_high")]
    finite = [x for x in ends if not math.isnan(x) and not math.isinf(x)]
    cap = max(finite + [1.0]) * 1.2
    ys, yerr = errorbar_arrays(table, "decisive_over_draws", cap)
    ax1.errorbar(pos, ys, yerr=yerr, fmt="o-", capsize=3)
    ax1.set_ylim(0, cap * 1.05)
    ax1.axhline(1.0, color="grey", lw=0.8, ls=":")
    ax1.set_xticks(pos, labels)
    ax1.set_xlabel("N_scl")
    ax1.set_ylabel("(wins + losses) / draws")
    ax1.set_title(f"(w+l)/d vs N_scl, 95% CI ({subtitle})", fontsize=10)
    if any(math.isinf(r["decisive_over_draws_high"]) for r in table):
        ax1.text(0.02, 0.97, "bars reaching the top: unbounded (few or no draws)",
                 transform=ax1.transAxes, fontsize=7, va="top")
    for j, (key, label, colour, marker) in enumerate(RATE_SERIES):
        ys, yerr = errorbar_arrays(table, key)
        ax2.errorbar([x + 0.2 * (j - 1) for x in pos], ys, yerr=yerr, fmt=marker,
                     color=colour, capsize=3, label=label)
    ax2.set_xticks(pos, labels)
    ax2.set_ylim(-0.02, 1.02)
    ax2.set_xlabel("N_scl")
    ax2.set_ylabel("fraction of games")
    ax2.set_title("W / D / L rates, 95% Wilson intervals", fontsize=10)
    # outside the axes: a legend inside would hide points near 0 or 1
    ax2.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    save_figure(fig, path)


def draw_trend(table: list[dict[str, Any]]) -> TrendTest:
    """Cochran-Armitage test of the draw rate against log10(N_scl)."""
    return trend_test([r["draws"] for r in table], [r["games"] for r in table],
                      [math.log10(r["n_scl"]) for r in table])


def trend_sentence(test: TrendTest) -> str:
    """The trend of (w+l)/d in N_scl, from the draw-rate test ((w+l)/d = 1/draw rate - 1)."""
    if math.isnan(test.z):
        return "Trend: not testable (no variation in the draw rate, or no games)."
    stat = (f"Cochran-Armitage test of the draw rate against log10(N_scl): z = {test.z:+.2f}, "
            f"two-sided p = {test.p_value:.3g}")
    if not test.significant:
        return (f"Trend: no trend of (w+l)/d in N_scl is significant at this scale ({stat}; "
                "5% level).")
    direction = "falls" if test.z > 0 else "rises"
    return f"Trend: (w+l)/d {direction} as N_scl grows ({stat})."


def summarize(table: list[dict[str, Any]], cfg: dict[str, Any]) -> str:
    cols = ["n_scl", "games", "white_wins", "draws", "black_wins", "decisive_over_draws",
            "white_win_rate", "draw_rate", "black_win_rate", "white_score", "mean_plies",
            "move_cap_games"]
    shown = [with_intervals(r, ("decisive_over_draws", "white_win_rate", "draw_rate",
                                "black_win_rate", "white_score")) for r in table]
    lines = [
        f"Self-play at {cfg['nodes']} nodes/move, {cfg['games_per_point']} games per N_scl, "
        f"move cap {cfg['max_plies'] or 'none'} (capped games count as draws). Both sides "
        "play the same search, so results are counted by colour: `white_wins`, `draws`, "
        "`black_wins` (w and l in (w+l)/d). Every rate with its 95% interval in brackets: "
        "Wilson for the white-win/draw/black-win rates, the draw rate's Wilson interval "
        "mapped through 1/p - 1 for (w+l)/d (inf: unbounded), the trinomial normal "
        "interval for white's score.", "",
        move_cap_sentence(table, cfg["max_plies"]), "",
        markdown_table(shown, cols),
        f"![W/D/L vs N_scl]({NAME}.png)", "",
        trend_sentence(draw_trend(table)),
        "Paper (Fig. 2, 1000 nodes, 100 games per point, a strong lc0 net): (w+l)/d above "
        "2.5 at N_scl 1, about 1 at N_scl 5-8, falling as N_scl grows.",
    ]
    if cfg["nodes"] < 200:
        lines.append(f"At {cfg['nodes']} nodes/move, N_scl values above ~{cfg['nodes']} "
                     "never freeze a node, so they all play plain PUCT.")
    return "\n".join(lines) + "\n"


def narrow(out_dir: Path) -> list[list[str]]:
    """The summary's table for an 80-column terminal, from the run's CSV."""
    with open(out_dir / f"{NAME}.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [wdl_table(rows, "n_scl", "N_scl")]


EXPERIMENT = Experiment(NAME, "Search-contempt self-play: W/D/L vs N_scl (paper Fig. 2)",
                        run, _check, plan, narrow)
