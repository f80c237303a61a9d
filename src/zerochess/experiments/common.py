"""What every experiment shares: its settings per scale, the run folder, plots, summaries."""

from __future__ import annotations

import csv
import dataclasses
import importlib.resources
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zerochess.errors import ConfigError, quote
from zerochess.experiments.scales import SCALES
from zerochess.games.config import (
    MAX_BATCH,
    MAX_GAMES,
    MAX_NODES,
    OpeningSpec,
    PlayerSpec,
    check_keys,
    load_yaml,
    search_config_from_dict,
    temperature_from_value,
)
from zerochess.games.loop import GameSpec, RunStats
from zerochess.games.openings import build_openings
from zerochess.games.players import RULES, get_model
from zerochess.games.records import read_games_csv
from zerochess.games.run import play_into
from zerochess.games.seeding import game_seed
from zerochess.games.stats import (
    MatchResult,
    decisive_over_draws_interval,
    format_interval,
)
from zerochess.runs import prepare_run_dir, write_json
from zerochess.validation import as_choice, as_count, as_seed, as_text

if TYPE_CHECKING:
    from zerochess.experiments.runtime import Estimate, PlannedGames

RESULTS_ROOT = Path("results")


@dataclasses.dataclass
class Context:
    """A running experiment: its resolved config and output folder."""

    name: str
    scale: str
    config: dict[str, Any]
    out_dir: Path
    progress: bool = True
    rules: str | None = None  # where the searches' chess rules run (None: the default)
    stats: list[RunStats] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)


def settings_path(name: str) -> Path:
    """The YAML file with experiment ``name``'s settings (inside the installed package)."""
    return Path(str(importlib.resources.files("zerochess").joinpath(
        "configs", f"experiment_{name}.yaml")))


def _split_scales(data: dict[str, Any], where: str) -> dict[str, Any]:
    """Pop ``scales`` (checked to name only known scales) and ``experiment`` from ``data``."""
    scales = data.pop("scales", None) or {}
    data.pop("experiment", None)
    check_keys(scales, SCALES, f"{where}: scales")
    return scales


@dataclasses.dataclass(frozen=True)
class Experiment:
    """An experiment: its logic, ``run(ctx) -> summary`` (markdown), an optional
    ``check(config)`` of the resolved settings, and an optional ``plan(config)``: the games
    ``run`` will play, one ``PlannedGames`` per ``play`` call, from which the expected run
    time is estimated before playing; and an optional ``narrow(run folder)``: the summary's
    wide tables as lines of at most 80 columns, in order, for the terminal
    (``experiments.terminal``). The settings are in ``settings_path(name)``."""

    name: str
    title: str
    run: Callable[[Context], str]
    check: Callable[[dict[str, Any]], None] | None = None
    plan: Callable[[dict[str, Any]], list[PlannedGames]] | None = None
    narrow: Callable[[Path], list[list[str]]] | None = None

    def resolve(self, scale: str, config_path: str | Path | None = None,
                seed: int | None = None) -> dict[str, Any]:
        """The resolved settings of ``scale`` (``ConfigError`` on bad input)."""
        if scale not in SCALES:
            raise ConfigError(f"unknown scale {quote(scale)}; choose one of {', '.join(SCALES)}")
        cfg = load_yaml(settings_path(self.name))
        scales = _split_scales(cfg, f"experiment {self.name}")
        known = list(cfg)
        cfg.update(scales.get(scale) or {})
        if config_path is not None:
            data = load_yaml(config_path)
            if data.get("experiment", self.name) != self.name:
                raise ConfigError(f"{config_path} is a config of experiment "
                                  f"{quote(data['experiment'])}, not {quote(self.name)}")
            over = _split_scales(data, str(config_path))
            check_keys(data, known, f"{config_path}")
            cfg.update(data)
            over = over.get(scale) or {}
            check_keys(over, known, f"{config_path}: scales.{scale}")
            cfg.update(over)
        if seed is not None:
            cfg["seed"] = seed
        cfg["seed"] = as_seed(cfg.get("seed"), "seed")
        for key, most in (("batch_size", MAX_BATCH), ("games_per_point", MAX_GAMES)):
            if key in cfg:
                cfg[key] = as_count(cfg[key], key, 1, most)
        if self.check is not None:
            self.check(cfg)
        return cfg

    def execute(self, scale: str = "tiny", out_dir: str | Path | None = None,
                seed: int | None = None, config_path: str | Path | None = None,
                progress: bool = True, force: bool = False, rules: str | None = None) -> Path:
        """Resolve, run and summarise the experiment; returns the run folder. ``force``
        resumes a folder made under other versions (recorded in ``versions.yaml``);
        ``rules``: where the searches' chess rules run, ``host`` or ``device`` (None: the
        Searcher's default); not part of the run's identity: both play the same games."""
        if rules is not None:
            as_choice(rules, "--rules", RULES)
        cfg = self.resolve(scale, config_path, seed)
        out = Path(out_dir) if out_dir is not None else default_out_dir(self.name, scale,
                                                                         cfg["seed"])
        if "model" in cfg:  # a bad model is an error before the folder is written
            get_model(as_text(cfg["model"], "model"))
        prepare_run_dir(out, {"experiment": self.name, "scale": scale, **cfg}, force=force)
        est = self.estimate(cfg, out, rules)
        if est is not None:
            from zerochess.experiments.runtime import write_estimate
            from zerochess.experiments.terminal import wrap_lines

            write_estimate(out, est)
            print(wrap_lines(est.text()), file=sys.stderr, flush=True)
        ctx = Context(self.name, scale, cfg, out, progress, rules)
        body = self.run(ctx)
        stats = [s.summary() for s in ctx.stats if s.games]
        if stats:
            write_json(out / "throughput.json", stats if len(stats) > 1 else stats[0])
        summary = [f"# {self.title}", "",
                   f"Experiment `{self.name}`, scale `{scale}`, seed {cfg['seed']}, "
                   f"model `{cfg.get('model', 'builtin')}`. Resolved config: `config.yaml`; "
                   "versions: `versions.yaml`; games: `games.pgn`, `games.csv`.", "",
                   body.rstrip(), ""]
        if ctx.notes:
            summary += ["## Notes", ""] + [f"- {n}" for n in ctx.notes] + [""]
        warmup = sum(r.compile_s for r in est.search_rates) if est is not None else None
        summary += ["## Run", "", throughput_note(ctx.stats, warmup), ""]
        if est is not None and est.games_left:
            summary += [f"Expected before playing (`estimate.json`): {est.text().splitlines()[0]}",
                        ""]
        (out / "summary.md").write_text("\n".join(summary))
        return out

    def estimate(self, cfg: dict[str, Any], out_dir: Path | None = None,
                 rules: str | None = None) -> Estimate | None:
        """The expected run time of the games of ``cfg`` not yet in ``out_dir``, from a short
        measured warm-up (None when the experiment has no ``plan``)."""
        if self.plan is None:
            return None
        from zerochess.experiments.runtime import estimate

        return estimate(cfg["model"], self.plan(cfg), out_dir, cfg.get("max_plies"), rules)


def default_out_dir(name: str, scale: str, seed: int) -> Path:
    return RESULTS_ROOT / name / f"{scale}-seed{seed}"


def make_player(name: str, nodes: int, search: Mapping[str, Any] | None,
                temperature: Any, where: str) -> PlayerSpec:
    """A zerochess player from config pieces (validated, errors name ``where``)."""
    nodes = as_count(nodes, f"{where}: nodes", 1, MAX_NODES)
    return PlayerSpec(name=name, nodes=nodes,
                      search=search_config_from_dict(search, f"{where}.search"),
                      temperature=temperature_from_value(temperature, f"{where}.temperature"))


def check_named_list(values: Any, key: str, item_keys: Sequence[str]) -> None:
    """Check the setting ``key``: a non-empty list of mappings, each with a ``name`` and
    only ``item_keys`` (``ConfigError`` naming the bad entry)."""
    if not isinstance(values, list) or not values:
        raise ConfigError(f"{key} must be a non-empty list of {{{', '.join(item_keys)}}}")
    for i, v in enumerate(values):
        check_keys(v, item_keys, f"{key}[{i}]")
        if "name" not in v:
            raise ConfigError(f"{key}[{i}] needs a name")


def play(ctx: Context, specs: Sequence[GameSpec], players: Mapping[str, PlayerSpec],
         description: str | None = None, batch_size: int | None = None) -> list[dict[str, str]]:
    """Play ``specs`` into ``ctx.out_dir`` (resuming), return all rows of the run so far.

    Several calls may share one folder (e.g. one per node count); each call compiles
    for its own ``max_nodes``.
    """
    cfg = ctx.config
    _, stats = play_into(ctx.out_dir, specs, players, cfg["model"],
                         batch_size=batch_size or cfg["batch_size"],
                         max_plies=cfg.get("max_plies"), progress=ctx.progress,
                         description=description or ctx.name,
                         event=f"zerochess {ctx.name} {ctx.scale}",
                         shrink_tail=cfg.get("shrink_tail"), rules=ctx.rules)
    ctx.stats.append(stats)
    return read_games_csv(ctx.out_dir / "games.csv")


def selfplay_points(ctx: Context, points: Sequence[tuple[PlayerSpec, Mapping[str, Any]]],
                    ) -> list[dict[str, str]]:
    """Self-play ``games_per_point`` games per point (both sides the point's player).

    Every point plays the same openings (``openings`` key); game indices run point by
    point, so the games of a point depend only on (seed, its position in the list).
    """
    players, specs = selfplay_specs(ctx.config, points)
    return play(ctx, specs, players)


def selfplay_specs(cfg: Mapping[str, Any],
                   points: Sequence[tuple[PlayerSpec, Mapping[str, Any]]],
                   ) -> tuple[dict[str, PlayerSpec], list[GameSpec]]:
    """The players and games of :func:`selfplay_points`."""
    k = cfg["games_per_point"]
    openings = build_openings(OpeningSpec.from_dict(cfg.get("openings")), k, cfg["seed"])
    players, specs = {}, []
    for p, (player, tags) in enumerate(points):
        if player.name in players:
            raise ConfigError(f"duplicate point name {quote(player.name)}")
        players[player.name] = player
        for g in range(k):
            idx = p * k + g
            specs.append(GameSpec(idx, player.name, player.name, openings[g],
                                  game_seed(cfg["seed"], idx), dict(tags)))
    return players, specs


def wdl_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """White wins / draws / black wins of self-play games (both sides are the same player,
    so the columns are named by colour: ``white_wins``, ``draws``, ``black_wins``), the
    derived rates and ratio with 95% intervals (``*_low`` / ``*_high``: Wilson for the
    rates, the draw rate's Wilson interval mapped for ``(w+l)/d``, the trinomial interval
    for white's score), and how many games ended at the move cap (``move_cap_games``,
    adjudicated draws) or by repetition."""
    w = sum(1 for r in rows if r["result"] == "1-0")
    l = sum(1 for r in rows if r["result"] == "0-1")
    d = sum(1 for r in rows if r["result"] == "1/2-1/2")
    n = w + d + l
    capped = sum(1 for r in rows if r["termination"] == "move_cap")
    ratio_lo, ratio_hi = decisive_over_draws_interval(d, n)
    result = MatchResult(w, d, l)
    rates = result.rate_intervals()
    s_lo, s_hi = result.score_interval()
    return {
        "games": n, "white_wins": w, "draws": d, "black_wins": l,
        "decisive_over_draws": (w + l) / d if d else (math.inf if n else math.nan),
        "decisive_over_draws_low": ratio_lo, "decisive_over_draws_high": ratio_hi,
        "white_win_rate": rates["win_rate"], "white_win_rate_low": rates["win_rate_low"],
        "white_win_rate_high": rates["win_rate_high"],
        "draw_rate": rates["draw_rate"], "draw_rate_low": rates["draw_rate_low"],
        "draw_rate_high": rates["draw_rate_high"],
        "black_win_rate": rates["loss_rate"], "black_win_rate_low": rates["loss_rate_low"],
        "black_win_rate_high": rates["loss_rate_high"],
        "white_score": result.score, "white_score_low": s_lo, "white_score_high": s_hi,
        "mean_plies": sum(int(r["plies"]) for r in rows) / n if n else math.nan,
        "move_cap_games": capped,
        "move_cap_share": capped / n if n else math.nan,
        "threefold": sum(1 for r in rows if r["termination"] in
                         ("threefold_repetition", "fivefold_repetition")),
    }


def move_cap_sentence(table: Sequence[Mapping[str, Any]], max_plies: int | None) -> str:
    """How many of the games of ``table`` (rows of ``wdl_counts``) ended at the move cap,
    as a sentence for ``summary.md``; a warning when they are most of the draws, whose
    rate then measures the cap more than the search."""
    games = sum(int(r["games"]) for r in table)
    capped = sum(int(r["move_cap_games"]) for r in table)
    draws = sum(int(r["draws"]) for r in table)
    if not max_plies or not games:
        return "No move cap: every game ended on the board."
    text = (f"**{capped} of {games} games ({100 * capped / games:.0f}%) ended at the move "
            f"cap of {max_plies} plies** and count as draws (column `move_cap_games`).")
    if draws and capped > draws / 2:
        text += (f" They are {100 * capped / draws:.0f}% of the draws: at this scale the "
                 "draw rate mostly measures the cap, not the search.")
    return text


def with_intervals(row: Mapping[str, Any], keys: Sequence[str], digits: int = 2
                   ) -> dict[str, Any]:
    """``row`` with each of ``keys`` shown as ``"value [low, high]"`` (from ``key_low`` and
    ``key_high``), for the markdown tables of ``summary.md``."""
    out = dict(row)
    for k in keys:
        out[k] = format_interval(float(row[k]), float(row[f"{k}_low"]), float(row[f"{k}_high"]),
                                 digits)
    return out


def errorbar_arrays(table: Sequence[Mapping[str, Any]], key: str, cap: float | None = None
                    ) -> tuple[list[float], list[list[float]]]:
    """Values of ``key`` and matplotlib's asymmetric ``yerr`` from ``key_low``/``key_high``;
    ``cap`` replaces infinite ends (drawn at the top of the axis)."""
    def c(v: float) -> float:
        return cap if cap is not None and math.isinf(v) else v

    ys = [c(float(r[key])) for r in table]
    lo = [max(0.0, y - c(float(r[f"{key}_low"]))) for y, r in zip(ys, table, strict=True)]
    hi = [max(0.0, c(float(r[f"{key}_high"])) - y) for y, r in zip(ys, table, strict=True)]
    return ys, [lo, hi]


def write_csv(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """A small results table (columns from the first row)."""
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


def new_figure(nrows: int = 1, ncols: int = 1, **kwargs: Any) -> tuple[Any, Any]:
    """``(figure, axes)`` of a ``matplotlib.figure.Figure`` made directly, not through
    pyplot: drawing a file never touches the caller's backend or pyplot's current
    figure (a notebook keeps showing its own plots; library code never calls
    ``matplotlib.use``). ``kwargs`` go to ``Figure`` (``figsize``, ...)."""
    from matplotlib.figure import Figure

    fig = Figure(**kwargs)
    return fig, fig.subplots(nrows, ncols)


def save_figure(fig: Any, path: Any) -> None:
    """Lay out ``fig`` and write it as a PNG (a ``Figure`` from ``new_figure``: nothing to
    close, pyplot never held it)."""
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def throughput_note(stats: Sequence[RunStats], warmup_compile_s: float | None = None) -> str:
    """One line on the throughput of this call's games, with one compile figure: the
    run-time estimate's warm-up (``warmup_compile_s``, before the games, which reuse it)
    plus what the games compiled themselves."""
    from zerochess.experiments.terminal import compile_sentence

    games = sum(s.games for s in stats)
    if not games:
        return "All games were already in the folder (resumed run); nothing played now."
    secs = sum(s.seconds for s in stats)
    pos = sum(s.positions for s in stats)
    nodes = sum(s.nodes for s in stats)
    comp = sum(s.compile_seconds for s in stats)
    return (f"Played {games} games now in {secs:.0f} s; "
            f"{compile_sentence(warmup_compile_s, comp)}: "
            f"{pos / secs:.1f} positions/s, {nodes / secs:.0f} nodes/s, "
            f"{games / secs * 3600:.0f} games/hour.")
