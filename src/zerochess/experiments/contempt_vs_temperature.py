"""``contempt_vs_temperature``: SC (N_scl 5, low temperature) vs PUCT (high temperature)."""

from __future__ import annotations

from typing import Any

from zerochess.errors import ConfigError
from zerochess.experiments.common import (
    Context,
    Experiment,
    make_player,
    markdown_table,
    new_figure,
    play,
    save_figure,
    with_intervals,
    write_csv,
)
from zerochess.experiments.runtime import SELFPLAY_PLIES, PlannedGames
from zerochess.games.config import OpeningSpec, PlayerSpec, check_keys
from zerochess.games.loop import GameSpec
from zerochess.games.match import match_result, paired_specs
from zerochess.games.stats import MatchResult, format_interval

NAME = "contempt_vs_temperature"
PAPER = MatchResult(37, 46, 17)


def _check(cfg: dict[str, Any]) -> None:
    for key in ("sc", "puct"):
        check_keys(cfg[key], ("name", "search", "temperature"), key)
    if cfg["sc"].get("name") == cfg["puct"].get("name"):
        raise ConfigError("sc and puct need different names")
    if not isinstance(cfg["games"], int) or cfg["games"] < 1:
        raise ConfigError("games must be an integer >= 1")


def match(cfg: dict[str, Any]) -> tuple[PlayerSpec, PlayerSpec, list[GameSpec]]:
    """The two players and the games (colours alternating, openings paired)."""
    sc = make_player(cfg["sc"].get("name", "sc5"), cfg["nodes"], cfg["sc"].get("search"),
                     cfg["sc"].get("temperature"), "sc")
    puct = make_player(cfg["puct"].get("name", "puct_tau2"), cfg["nodes"],
                       cfg["puct"].get("search"), cfg["puct"].get("temperature"), "puct")
    specs = paired_specs(sc.name, puct.name, cfg["games"], OpeningSpec.from_dict(cfg["openings"]),
                         cfg["seed"])
    return sc, puct, specs


def plan(cfg: dict[str, Any]) -> list[PlannedGames]:
    """The games ``run`` plays (for the run-time estimate)."""
    sc, puct, specs = match(cfg)
    return [PlannedGames(NAME, specs, {sc.name: sc, puct.name: puct}, cfg["batch_size"],
                         SELFPLAY_PLIES)]


def run(ctx: Context) -> str:
    cfg = ctx.config
    sc, puct, specs = match(cfg)
    rows = play(ctx, specs, {sc.name: sc, puct.name: puct})
    total = match_result(rows, sc.name)
    white = match_result([r for r in rows if r["white"] == sc.name], sc.name)
    black = match_result([r for r in rows if r["black"] == sc.name], sc.name)
    table = [{"player1": sc.name, "player2": puct.name, "colour": c, **m.to_dict()}
             for c, m in (("both", total), ("white", white), ("black", black))]
    table.append({"player1": "paper SC", "player2": "paper PUCT tau2", "colour": "black",
                  **PAPER.to_dict()})
    write_csv(ctx.out_dir / f"{NAME}.csv", table)
    plot(total, ctx.out_dir / f"{NAME}.png", sc.name, puct.name)
    cols = ["player1", "player2", "colour", "games", "wins", "draws", "losses", "win_rate",
            "draw_rate", "loss_rate", "score", "elo", "los"]
    shown = []
    for r in table:
        row = with_intervals(r, ("win_rate", "draw_rate", "loss_rate", "score"))
        row["elo"] = format_interval(r["elo"], r["elo_low"], r["elo_high"], 0)
        shown.append(row)
    return (f"{sc.name} (player1) vs {puct.name} at {cfg['nodes']} nodes/move, "
            f"{total.games} games, colours alternating, move cap {cfg['max_plies'] or 'none'}"
            " (capped games are draws). W/D/L from player1's view, each rate with its 95% "
            "Wilson interval, the score and Elo with their 95% intervals (trinomial model); "
            "LOS = likelihood of superiority.\n\n" + markdown_table(shown, cols)
            + f"\nResult: {total.summary()}\n\n![SC vs PUCT]({NAME}.png)\n\n"
            f"Paper (Table 2): {PAPER.summary()} (the paper rounds to +70 Elo).\n")


def plot(result: MatchResult, path: Any, p1: str, p2: str) -> None:
    """W/D/L rates of this run and the paper's, with 95% Wilson intervals as error bars."""
    fig, ax = new_figure(figsize=(6, 3.8))
    width = 0.38
    cats = [f"{p1} wins", "draws", f"{p2} wins"]
    for j, (label, res, colour) in enumerate((("this run", result, "#4c72b0"),
                                              ("paper", PAPER, "#bbbbbb"))):
        rates = res.rate_intervals()
        keys = ("win_rate", "draw_rate", "loss_rate")
        vals = [rates[k] for k in keys]
        err = [[max(0.0, rates[k] - rates[f"{k}_low"]) for k in keys],
               [max(0.0, rates[f"{k}_high"] - rates[k]) for k in keys]]
        ax.bar([i + (j - 0.5) * width for i in range(3)], vals, width, yerr=err, capsize=3,
               label=f"{label} (n={res.games})", color=colour, edgecolor="black")
    ax.set_xticks(range(3), cats)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("fraction of games")
    lo, hi = result.elo_interval()
    ax.set_title(f"{p1} vs {p2}: Elo {result.elo:+.0f} [{lo:+.0f}, {hi:+.0f}] (95%)",
                 fontsize=10)
    ax.legend(fontsize=8)
    save_figure(fig, path)


EXPERIMENT = Experiment(NAME, "Search-contempt (low T) vs PUCT (high T) (paper Table 2)",
                        run, _check, plan)
