"""``contempt_vs_temperature``: SC (N_scl 5, low temperature) vs PUCT (high temperature).

The paper's Table 2: search-contempt with N_scl 5 and the fork's SC temperature
(0.7 / endgame 0.1 / decay over 5 moves, lc0 default search) against PUCT with the
fork's ``tau2`` config (high temperature, its PUCT parameters and Dirichlet noise)
scored 37 W / 46 D / 17 L (+70 Elo) over 100 games at 1000 nodes per move (the fork
played SC as black in every game; here colours alternate and openings are paired).

Settings per scale (every key documented):
``configs/experiment_contempt_vs_temperature.yaml``.
"""

from __future__ import annotations

from typing import Any

from zerochess.errors import ConfigError
from zerochess.experiments.common import (
    Context,
    Experiment,
    make_player,
    markdown_table,
    play,
    pyplot,
    save_figure,
    write_csv,
)
from zerochess.experiments.runtime import SELFPLAY_PLIES, PlannedGames
from zerochess.games.config import OpeningSpec, PlayerSpec, check_keys
from zerochess.games.loop import GameSpec
from zerochess.games.match import match_result, paired_specs
from zerochess.games.stats import MatchResult

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
    cols = ["player1", "player2", "colour", "games", "wins", "draws", "losses", "score", "elo",
            "elo_low", "elo_high", "los"]
    return (f"{sc.name} (player1) vs {puct.name} at {cfg['nodes']} nodes/move, "
            f"{total.games} games, colours alternating, move cap {cfg['max_plies'] or 'none'}"
            " (capped games are draws). W/D/L from player1's view; Elo with a 95% interval; "
            "LOS = likelihood of superiority.\n\n" + markdown_table(table, cols)
            + f"\nResult: {total.summary()}\n\n![SC vs PUCT]({NAME}.png)\n\n"
            f"Paper (Table 2): {PAPER.summary()} (the paper rounds to +70 Elo).\n")


def plot(result: MatchResult, path: Any, p1: str, p2: str) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    labels = ["this run", "paper"]
    vals = [result, PAPER]
    n = [max(v.games, 1) for v in vals]
    w = [v.wins / m for v, m in zip(vals, n, strict=True)]
    d = [v.draws / m for v, m in zip(vals, n, strict=True)]
    l = [v.losses / m for v, m in zip(vals, n, strict=True)]
    ax.bar(labels, w, label=f"{p1} wins", color="#4c72b0")
    ax.bar(labels, d, bottom=w, label="draws", color="#bbbbbb")
    ax.bar(labels, l, bottom=[a + b for a, b in zip(w, d, strict=True)], label=f"{p2} wins",
           color="#c44e52")
    ax.set_ylabel("fraction of games")
    ax.set_title(f"{p1} vs {p2}: Elo {result.elo:+.0f} +- {result.elo_error:.0f}")
    ax.legend(fontsize=8)
    save_figure(fig, path)


EXPERIMENT = Experiment(NAME, "Search-contempt (low T) vs PUCT (high T) (paper Table 2)",
                        run, _check, plan)
