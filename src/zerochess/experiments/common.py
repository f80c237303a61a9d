"""What every experiment shares: configs per scale, the run folder, plots, summaries.

An experiment config is a flat mapping (documented per experiment in its ``DEFAULTS``)
resolved as: the experiment's defaults, then its ``SCALES[scale]``, then a YAML file's
top-level keys, then the file's ``scales: {scale: {...}}``, then ``--seed``.
Unknown keys are an error that names them.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from zerochess.selfplay.config import (
    GameConfigError,
    PlayerSpec,
    check_keys,
    load_yaml,
    search_config_from_dict,
    temperature_from_value,
)
from zerochess.selfplay.records import GameWriter, read_games_csv
from zerochess.selfplay.run import get_model
from zerochess.selfplay.rundir import prepare_run_dir, write_json
from zerochess.selfplay.runner import GameSpec, RunStats, play_games

SCALES = ("tiny", "small", "full")
RESULTS_ROOT = Path("results")


@dataclasses.dataclass
class Context:
    """A running experiment: its resolved config and output folder."""

    name: str
    scale: str
    config: dict[str, Any]
    out_dir: Path
    progress: bool = True
    stats: list[RunStats] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class Experiment:
    """An experiment: defaults, per-scale overrides and a ``run(ctx) -> summary`` function."""

    name: str
    title: str
    defaults: Mapping[str, Any]
    scales: Mapping[str, Mapping[str, Any]]
    run: Callable[[Context], str]
    check: Callable[[dict[str, Any]], None] | None = None

    def resolve(self, scale: str, config_path: str | Path | None = None,
                seed: int | None = None) -> dict[str, Any]:
        """The resolved config of ``scale`` (``GameConfigError`` on bad input)."""
        if scale not in SCALES:
            raise GameConfigError(f"unknown scale {scale!r}; choose one of {', '.join(SCALES)}")
        cfg = copy.deepcopy(dict(self.defaults))
        cfg.update(copy.deepcopy(dict(self.scales.get(scale, {}))))
        if config_path is not None:
            data = load_yaml(config_path)
            scales = data.pop("scales", {}) or {}
            data.pop("experiment", None)
            check_keys(data, self.defaults, f"{config_path}")
            check_keys(scales, SCALES, f"{config_path}: scales")
            cfg.update(data)
            over = scales.get(scale) or {}
            check_keys(over, self.defaults, f"{config_path}: scales.{scale}")
            cfg.update(over)
        if seed is not None:
            cfg["seed"] = seed
        if not isinstance(cfg.get("seed"), int) or cfg["seed"] < 0:
            raise GameConfigError(f"seed must be an integer >= 0, got {cfg.get('seed')!r}")
        for key in ("batch_size", "games_per_point"):
            if key in cfg and (not isinstance(cfg[key], int) or cfg[key] < 1):
                raise GameConfigError(f"{key} must be an integer >= 1, got {cfg[key]!r}")
        if self.check is not None:
            self.check(cfg)
        return cfg


def default_out_dir(name: str, scale: str, seed: int) -> Path:
    return RESULTS_ROOT / name / f"{scale}-seed{seed}"


def make_player(name: str, nodes: int, search: Mapping[str, Any] | None,
                temperature: Any, where: str) -> PlayerSpec:
    """A zerochess player from config pieces (validated, errors name ``where``)."""
    if not isinstance(nodes, int) or nodes < 1:
        raise GameConfigError(f"{where}: nodes must be an integer >= 1, got {nodes!r}")
    return PlayerSpec(name=name, nodes=nodes,
                      search=search_config_from_dict(search, f"{where}.search"),
                      temperature=temperature_from_value(temperature, f"{where}.temperature"))


def play(ctx: Context, specs: Sequence[GameSpec], players: Mapping[str, PlayerSpec],
         description: str | None = None, batch_size: int | None = None) -> list[dict[str, str]]:
    """Play ``specs`` into ``ctx.out_dir`` (resuming), return all rows of the run so far.

    Several calls may share one folder (e.g. one per node count); each call compiles
    for its own ``max_nodes``.
    """
    cfg = ctx.config
    tag_fields = sorted({k for s in specs for k in s.tags})
    needs_model = any(not p.is_engine for p in players.values())
    model = get_model(cfg["model"]) if needs_model else None
    with GameWriter(ctx.out_dir, tag_fields, event=f"zerochess {ctx.name} {ctx.scale}") as w:
        _, stats = play_games(specs, players, model,
                              batch_size=batch_size or cfg["batch_size"],
                              max_plies=cfg.get("max_plies"), writer=w,
                              progress=ctx.progress, description=description or ctx.name,
                              shrink_tail=cfg.get("shrink_tail"))
    ctx.stats.append(stats)
    return read_games_csv(ctx.out_dir / "games.csv")


def selfplay_points(ctx: Context, points: Sequence[tuple[PlayerSpec, Mapping[str, Any]]],
                    ) -> list[dict[str, str]]:
    """Self-play ``games_per_point`` games per point (both sides the point's player).

    Every point plays the same openings (``openings`` key); game indices run point by
    point, so the games of a point depend only on (seed, its position in the list).
    """
    from zerochess.selfplay.config import OpeningSpec
    from zerochess.selfplay.openings import build_openings
    from zerochess.selfplay.seeding import game_seed

    cfg = ctx.config
    k = cfg["games_per_point"]
    openings = build_openings(OpeningSpec.from_dict(cfg.get("openings")), k, cfg["seed"])
    players, specs = {}, []
    for p, (player, tags) in enumerate(points):
        if player.name in players:
            raise GameConfigError(f"duplicate point name {player.name!r}")
        players[player.name] = player
        for g in range(k):
            idx = p * k + g
            specs.append(GameSpec(idx, player.name, player.name, openings[g],
                                  game_seed(cfg["seed"], idx), dict(tags)))
    return play(ctx, specs, players)


def wdl_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """White wins / draws / black wins of self-play games, and the derived ratios."""
    w = sum(1 for r in rows if r["result"] == "1-0")
    l = sum(1 for r in rows if r["result"] == "0-1")
    d = sum(1 for r in rows if r["result"] == "1/2-1/2")
    n = w + d + l
    return {
        "games": n, "wins": w, "draws": d, "losses": l,
        "decisive_over_draws": (w + l) / d if d else (math.inf if n else math.nan),
        "draw_rate": d / n if n else math.nan,
        "mean_plies": sum(int(r["plies"]) for r in rows) / n if n else math.nan,
        "move_cap": sum(1 for r in rows if r["termination"] == "move_cap"),
        "threefold": sum(1 for r in rows if r["termination"] in
                         ("threefold_repetition", "fivefold_repetition")),
    }


def write_csv(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """A small results table (columns from the first row)."""
    import csv

    with open(path, "w", newline="") as f:
        if not rows:
            return
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: _fmt(v) for k, v in r.items()})


def _fmt(v: Any) -> Any:
    if isinstance(v, float):
        return "inf" if math.isinf(v) else ("" if math.isnan(v) else f"{v:.6g}")
    return v


def markdown_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None
                   ) -> str:
    if not rows:
        return "(no games)\n"
    cols = list(columns or rows[0])
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        out.append("| " + " | ".join(str(_fmt_md(r.get(c, ""))) for c in cols) + " |")
    return "\n".join(out) + "\n"


def _fmt_md(v: Any) -> Any:
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        if math.isinf(v):
            return "inf"
        return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"
    return v


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def throughput_note(stats: Sequence[RunStats]) -> str:
    """One line on the throughput of this call's games."""
    games = sum(s.games for s in stats)
    if not games:
        return "All games were already in the folder (resumed run); nothing played now."
    secs = sum(s.seconds for s in stats)
    pos = sum(s.positions for s in stats)
    nodes = sum(s.nodes for s in stats)
    comp = sum(s.compile_seconds for s in stats)
    return (f"Played {games} games now in {secs:.0f} s ({comp:.0f} s of it compiling): "
            f"{pos / secs:.1f} positions/s, {nodes / secs:.0f} nodes/s, "
            f"{games / secs * 3600:.0f} games/hour.")


def run_experiment(exp: Experiment, scale: str = "tiny", out_dir: str | Path | None = None,
                   seed: int | None = None, config_path: str | Path | None = None,
                   progress: bool = True) -> Path:
    """Resolve, run and summarise ``exp``; returns the run folder."""
    cfg = exp.resolve(scale, config_path, seed)
    out = Path(out_dir) if out_dir is not None else default_out_dir(exp.name, scale, cfg["seed"])
    prepare_run_dir(out, {"experiment": exp.name, "scale": scale, **cfg})
    ctx = Context(exp.name, scale, cfg, out, progress)
    body = exp.run(ctx)
    stats = [s.summary() for s in ctx.stats if s.games]
    if stats:
        write_json(out / "throughput.json", stats if len(stats) > 1 else stats[0])
    summary = [f"# {exp.title}", "",
               f"Experiment `{exp.name}`, scale `{scale}`, seed {cfg['seed']}, "
               f"model `{cfg.get('model', 'builtin')}`. Resolved config: `config.yaml`; "
               "versions: `versions.yaml`; games: `games.pgn`, `games.csv`.", "",
               body.rstrip(), ""]
    if ctx.notes:
        summary += ["## Notes", ""] + [f"- {n}" for n in ctx.notes] + [""]
    summary += ["## Run", "", throughput_note(ctx.stats), ""]
    (out / "summary.md").write_text("\n".join(summary))
    return out
