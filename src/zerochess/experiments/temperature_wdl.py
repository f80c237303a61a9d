"""``temperature_wdl``: self-play W/D/L and (w+l)/d against temperature schedules (Fig. 3).

Plain PUCT self-play (no search-contempt) at several lc0 temperature schedules.
Defaults follow the search-contempt fork's configs: ``tau1`` (Temperature 0.7,
TempEndgame 0.1, TempDecayMoves 5, TempCutoffMove 40) and ``tau2`` (Temperature 0.9,
TempEndgame 0.6, TempDecayMoves 60, TempDecayDelayMoves 20, TempCutoffMove 40,
TempVisitOffset -0.8), both with the fork's PUCT parameters (CPuct 1.2, CPuctAtRoot 2.0,
FpuValue 0.49, absolute FPU 1.0 at the root, PolicyTemperature 1.45, Dirichlet noise
0.1 / 0.12); ``t0`` (no temperature) is added for reference.

Settings per scale (every key documented): ``configs/experiment_temperature_wdl.yaml``.
In the CSV ``wins`` are white wins and ``losses`` black wins.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from zerochess.experiments.common import (
    Context,
    Experiment,
    check_named_list,
    make_player,
    markdown_table,
    pyplot,
    save_figure,
    selfplay_points,
    wdl_counts,
    write_csv,
)

NAME = "temperature_wdl"


def _check(cfg: dict[str, Any]) -> None:
    check_named_list(cfg["schedules"], "schedules", ("name", "temperature"))


def run(ctx: Context) -> str:
    cfg = ctx.config
    points = []
    for s in cfg["schedules"]:
        player = make_player(str(s["name"]), cfg["nodes"], cfg["search"],
                             s.get("temperature"), f"schedule {s['name']}")
        points.append((player, {"schedule": player.name}))
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
    cols = ["schedule", "games", "wins", "draws", "losses", "decisive_over_draws",
            "draw_rate", "mean_plies", "move_cap"]
    return (f"PUCT self-play at {cfg['nodes']} nodes/move, {cfg['games_per_point']} games "
            f"per schedule, move cap {cfg['max_plies'] or 'none'} (capped games are draws).\n\n"
            + markdown_table(table, cols) + f"\n![W/D/L vs temperature]({NAME}.png)\n\n"
            "Schedules:\n\n" + detail + "\n\nPaper (Fig. 3): a higher temperature lowers the "
            "draw rate of PUCT self-play, at a cost in move quality.\n")


def plot(table: list[dict[str, Any]], path: Any, subtitle: str) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    labels = [r["schedule"] for r in table]
    n = [max(r["games"], 1) for r in table]
    w = [r["wins"] / m for r, m in zip(table, n, strict=True)]
    d = [r["draws"] / m for r, m in zip(table, n, strict=True)]
    l = [r["losses"] / m for r, m in zip(table, n, strict=True)]
    ax.bar(labels, w, label="white wins", color="#eeeeee", edgecolor="black")
    ax.bar(labels, d, bottom=w, label="draws", color="#999999", edgecolor="black")
    ax.bar(labels, l, bottom=[a + b for a, b in zip(w, d, strict=True)], label="black wins",
           color="#333333", edgecolor="black")
    ax.set_ylabel("fraction of games")
    ax.set_title(f"PUCT self-play W/D/L by temperature ({subtitle})")
    ax.legend(fontsize=8)
    save_figure(fig, path)


EXPERIMENT = Experiment(NAME, "PUCT self-play: W/D/L vs temperature (paper Fig. 3)",
                        run, _check)
