"""``temperature_wdl``: self-play W/D/L and (w+l)/d against temperature schedules (Fig. 3)."""

from __future__ import annotations

import dataclasses
from typing import Any

from zerochess.experiments.common import (
    Context,
    Experiment,
    check_named_list,
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
from zerochess.games.config import PlayerSpec
from zerochess.games.stats import trend_test

NAME = "temperature_wdl"


def _check(cfg: dict[str, Any]) -> None:
    check_named_list(cfg["schedules"], "schedules", ("name", "temperature"))


def schedule_points(cfg: dict[str, Any]) -> list[tuple[PlayerSpec, dict[str, Any]]]:
    """One PUCT self-play player per temperature schedule, with its CSV tags."""
    points = []
    for s in cfg["schedules"]:
        player = make_player(str(s["name"]), cfg["nodes"], cfg["search"],
                             s.get("temperature"), f"schedule {s['name']}")
        points.append((player, {"schedule": player.name}))
    return points


def plan(cfg: dict[str, Any]) -> list[PlannedGames]:
    """The games ``run`` plays (for the run-time estimate)."""
    players, specs = selfplay_specs(cfg, schedule_points(cfg))
    return [PlannedGames(NAME, specs, players, cfg["batch_size"], SELFPLAY_PLIES)]


def run(ctx: Context) -> str:
    cfg = ctx.config
    points = schedule_points(cfg)
    rows = selfplay_points(ctx, points)
    table = []
    for player, _ in points:
        c = wdl_counts([r for r in rows if r["schedule"] == player.name])
        t = player.temperature
        table.append({"schedule": player.name, "temperature": t.temperature,
                      "endgame_temperature": t.endgame_temperature,
                      "decay_moves": t.decay_moves, **c})
    write_csv(ctx.out_dir / f"{NAME}.csv", table)
    plot(table, ctx.out_dir / f"{NAME}.png", f"{cfg['nodes']} nodes/move")
    detail = "\n".join(f"- `{p.name}`: {dataclasses.asdict(p.temperature)}" for p, _ in points)
    cols = ["schedule", "games", "white_wins", "draws", "black_wins", "decisive_over_draws",
            "white_win_rate", "draw_rate", "black_win_rate", "mean_plies", "move_cap_games"]
    shown = [with_intervals(r, ("decisive_over_draws", "white_win_rate", "draw_rate",
                                "black_win_rate")) for r in table]
    return (f"PUCT self-play at {cfg['nodes']} nodes/move, {cfg['games_per_point']} games "
            f"per schedule, move cap {cfg['max_plies'] or 'none'} (capped games are draws). "
            "95% intervals in brackets (Wilson for rates; the draw rate's interval mapped "
            "through 1/p - 1 for (w+l)/d).\n\n"
            + move_cap_sentence(table, cfg["max_plies"]) + "\n\n"
            + markdown_table(shown, cols) + f"\n![W/D/L vs temperature]({NAME}.png)\n\n"
            + trend_sentence(table) + "\n\n"
            "Schedules:\n\n" + detail + "\n\nPaper (Fig. 3): a higher temperature lowers the "
            "draw rate of PUCT self-play, at a cost in move quality.\n")


def trend_sentence(table: list[dict[str, Any]]) -> str:
    """The paper's claim as a test: the draw rate against the schedules' initial
    temperatures (Cochran-Armitage; with two schedules, the two-proportion z test)."""
    test = trend_test([r["draws"] for r in table], [r["games"] for r in table],
                      [float(r["temperature"]) for r in table])
    return "Trend: " + test.describe("the draw rate", "the schedule's temperature grows") + "."


def plot(table: list[dict[str, Any]], path: Any, subtitle: str) -> None:
    """Grouped W/D/L rate bars per schedule with 95% Wilson intervals as error bars."""
    fig, ax = new_figure(figsize=(6.5, 4))
    labels = [r["schedule"] for r in table]
    width = 0.26
    for j, (key, label, colour) in enumerate((("white_win_rate", "white wins", "#eeeeee"),
                                              ("draw_rate", "draws", "#999999"),
                                              ("black_win_rate", "black wins", "#333333"))):
        ys, yerr = errorbar_arrays(table, key)
        ax.bar([i + (j - 1) * width for i in range(len(labels))], ys, width, yerr=yerr,
               capsize=3, label=label, color=colour, edgecolor="black")
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("fraction of games")
    ax.set_title(f"PUCT self-play W/D/L by temperature, 95% CI ({subtitle})", fontsize=10)
    # outside the axes: a legend inside would hide bars near 1
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    save_figure(fig, path)


EXPERIMENT = Experiment(NAME, "PUCT self-play: W/D/L vs temperature (paper Fig. 3)",
                        run, _check, plan)
