"""``odds_table1``: the paper's Table 1 with intervals: odds-chess win % of PUCT and
search-contempt against a fixed weaker opponent, at 100 and 800 nodes per move."""

from __future__ import annotations

import math
from typing import Any

from zerochess.errors import ConfigError, quote
from zerochess.experiments.common import (
    Context,
    Experiment,
    check_named_list,
    make_player,
    markdown_table,
    new_figure,
    play,
    save_figure,
    write_csv,
)
from zerochess.experiments.intervals import difference_interval, wilson_interval
from zerochess.experiments.runtime import ODDS_PLIES, PlannedGames
from zerochess.games.config import OpeningSpec, PlayerSpec
from zerochess.games.loop import GameSpec
from zerochess.games.match import match_result, paired_specs

NAME = "odds_table1"
PAPER = {100: (23.43, 36.76), 800: (35.25, 57.81), 20000: (25.40, 81.73)}  # queen odds
TARGET_HALF_WIDTH = 10.0  # win-% points: the +-10 the design asks of each cell


def _check(cfg: dict[str, Any]) -> None:
    ns = cfg["nodes"]
    if not isinstance(ns, list) or not ns or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in ns):
        raise ConfigError(f"nodes must be a list of integers >= 1, got {quote(ns)}")
    if len(set(ns)) != len(ns):
        raise ConfigError("nodes values must be distinct")
    if not isinstance(cfg["games_per_cell"], int) or cfg["games_per_cell"] < 1:
        raise ConfigError("games_per_cell must be an integer >= 1, "
                          f"got {quote(cfg['games_per_cell'])}")
    if cfg["piece"] not in OpeningSpec.PIECES:
        raise ConfigError(f"piece must be one of {', '.join(OpeningSpec.PIECES)}, "
                          f"got {quote(cfg['piece'])}")
    check_named_list(cfg["variants"], "variants", ("name", "search"))
    names = [v["name"] for v in cfg["variants"]]
    if len(set(names)) != len(names):
        raise ConfigError(f"variant names must be distinct, got {names}")
    for v in cfg["variants"]:
        make_player(str(v["name"]), 1, v.get("search"), cfg["temperature"],
                    f"variants[{v['name']}]")
    opponent(cfg)


def opponent(cfg: dict[str, Any]) -> PlayerSpec:
    """The fixed opponent (``ConfigError`` on a bad spec; a missing engine program is
    reported when the run starts it: the run-time estimate's warm-up does, before any game)."""
    spec = PlayerSpec.from_dict(cfg["opponent"], "opponent", "opponent")
    if spec.name in {str(v["name"]) for v in cfg["variants"]} | {
            cell_name(str(v["name"]), n) for v in cfg["variants"] for n in cfg["nodes"]}:
        raise ConfigError(f"the opponent's name {quote(spec.name)} is also a variant's")
    return spec


def cell_name(variant: str, nodes: int) -> str:
    return f"{variant}_n{nodes}"


def describe(spec: PlayerSpec) -> str:
    if spec.engine is not None:
        return f"`{spec.name}`: {spec.engine.describe()}"
    if spec.nodes == 1:
        return f"`{spec.name}`: the model's policy move (zerochess at 1 node per move)"
    return f"`{spec.name}`: zerochess at {spec.nodes} nodes per move"


def plan(cfg: dict[str, Any]) -> list[PlannedGames]:
    """One ``play`` call per node count: every variant's games at that count, one batch."""
    opp = opponent(cfg)
    k = cfg["games_per_cell"]
    openings = OpeningSpec(type="odds", piece=cfg["piece"], side="player1")
    out, index = [], 0
    for n in cfg["nodes"]:
        players: dict[str, PlayerSpec] = {opp.name: opp}
        specs: list[GameSpec] = []
        for v in cfg["variants"]:
            name = cell_name(str(v["name"]), n)
            players[name] = make_player(name, n, v.get("search"), cfg["temperature"], name)
            specs += paired_specs(name, opp.name, k, openings, cfg["seed"],
                                  tags={"nodes": n, "variant": v["name"]}, first_index=index)
            index += k
        out.append(PlannedGames(f"{n} nodes", specs, players, cfg["batch_size"], ODDS_PLIES))
    return out


def run(ctx: Context) -> str:
    cfg = ctx.config
    rows: list[dict[str, str]] = []
    for part in plan(cfg):
        rows = play(ctx, part.specs, part.players, description=f"{NAME} {part.label}")
    table = cell_table(rows, cfg)
    diffs = difference_table(table, cfg)
    write_csv(ctx.out_dir / f"{NAME}.csv", table)
    write_csv(ctx.out_dir / f"{NAME}_differences.csv", diffs)
    plot(table, ctx.out_dir / f"{NAME}.png", cfg["piece"], describe(opponent(cfg)))
    return summarize(table, diffs, cfg)


def cell_table(rows: list[dict[str, str]], cfg: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per (node count, variant): W/D/L of our side, win % with its 95% interval."""
    table = []
    for n in cfg["nodes"]:
        for v in cfg["variants"]:
            name = cell_name(str(v["name"]), n)
            sel = [r for r in rows if r["white"] == name or r["black"] == name]
            m = match_result(sel, name)
            white = match_result([r for r in sel if r["white"] == name], name)
            lo, hi = wilson_interval(m.wins, m.games)
            paper = PAPER.get(n, (math.nan, math.nan))
            table.append({
                "nodes": n, "variant": v["name"], "n_scl": (v.get("search") or {}).get("n_scl"),
                "games": m.games, "wins": m.wins, "draws": m.draws, "losses": m.losses,
                "win_pct": 100 * m.wins / m.games if m.games else math.nan,
                "win_pct_low": 100 * lo, "win_pct_high": 100 * hi,
                "score": m.score, "wins_as_white": white.wins, "games_as_white": white.games,
                "paper_win_pct": paper[0 if (v.get("search") or {}).get("n_scl") is None
                                       else 1] if cfg["piece"] == "queen" else math.nan,
            })
    return table


def difference_table(table: list[dict[str, Any]], cfg: dict[str, Any]) -> list[dict[str, Any]]:
    """Per node count, each variant's win % minus the first variant's (PUCT), 95% interval."""
    base = str(cfg["variants"][0]["name"])
    out = []
    for n in cfg["nodes"]:
        cells = {t["variant"]: t for t in table if t["nodes"] == n}
        b = cells[base]
        for name, c in cells.items():
            if name == base:
                continue
            lo, hi = difference_interval(c["wins"], c["games"], b["wins"], b["games"])
            diff = (c["wins"] / c["games"] - b["wins"] / b["games"]
                    if c["games"] and b["games"] else math.nan)
            paper = PAPER.get(n)
            out.append({"nodes": n, "variant": name, "minus": base,
                        "diff_pct": 100 * diff, "diff_pct_low": 100 * lo,
                        "diff_pct_high": 100 * hi,
                        "paper_diff_pct": (paper[1] - paper[0]) if paper and
                        cfg["piece"] == "queen" else math.nan})
    return out


def _pct(v: float, lo: float, hi: float) -> str:
    if math.isnan(v):
        return "-"
    return f"{v:.1f} [{lo:.1f}, {hi:.1f}]"


def summarize(table: list[dict[str, Any]], diffs: list[dict[str, Any]],
              cfg: dict[str, Any]) -> str:
    opp = opponent(cfg)
    k = cfg["games_per_cell"]
    shown = [{**t, "win % [95% CI]": _pct(t["win_pct"], t["win_pct_low"], t["win_pct_high"]),
              "paper win %": t["paper_win_pct"]} for t in table]
    cols = ["nodes", "variant", "n_scl", "games", "wins", "draws", "losses",
            "win % [95% CI]", "score", "paper win %"]
    dshown = [{**d, "difference [95% CI]": _pct(d["diff_pct"], d["diff_pct_low"],
                                                 d["diff_pct_high"]),
               "paper": d["paper_diff_pct"]} for d in diffs]
    lines = [
        f"Our side (model `{cfg['model']}`) plays without its {cfg['piece']} against "
        f"{describe(opp)}; {k} games per (node count, variant), colours alternating, "
        f"temperature `{cfg['temperature']}`, move cap {cfg['max_plies'] or 'none'} "
        "(capped games are draws). Win % of our side with 95% Wilson intervals.", "",
        markdown_table(shown, cols),
        f"![{cfg['piece']} odds win %]({NAME}.png)", "",
        "Win-rate difference per node count (percentage points; 95% interval, Newcombe's "
        "method 10; an interval above 0 means the variant wins significantly more often "
        "than the first variant at the 5% level):", "",
        markdown_table(dshown, ["nodes", "variant", "minus", "difference [95% CI]", "paper"]),
    ]
    widths = [(t["win_pct_high"] - t["win_pct_low"]) / 2 for t in table if t["games"]]
    if widths:
        worst = max(widths)
        lines.append(f"Widest interval: +-{worst:.1f} points (design target: +-"
                     f"{TARGET_HALF_WIDTH:.0f}; " + ("met" if worst <= TARGET_HALF_WIDTH
                                                    else "not met: play more games") + ").")
    base = [t for t in table if t["variant"] == cfg["variants"][0]["name"] and t["games"]]
    if base:
        regime = ", ".join(f"{t['win_pct']:.0f}% at {t['nodes']} nodes" for t in base)
        lines.append(f"First variant ({cfg['variants'][0]['name']}) wins {regime}; the paper's "
                     "PUCT sits at 23-35% at 100-800 nodes with queen odds.")
    lines.append("\nPaper (Table 1, queen odds, a fixed opponent): PUCT 23.4 / SC 36.8 at "
                 "100 nodes, 35.3 / 57.8 at 800, 25.4 / 81.7 at 20000 (win %).")
    return "\n".join(lines) + "\n"


def plot(table: list[dict[str, Any]], path: Any, piece: str, opp: str) -> None:
    fig, ax = new_figure(figsize=(6.5, 4.2))
    colours = ["#c44e52", "#4c72b0", "#55a868", "#8172b2", "#ccb974"]
    variants = list(dict.fromkeys(t["variant"] for t in table))
    for i, variant in enumerate(variants):
        pts = [t for t in table if t["variant"] == variant and t["games"]]
        if not pts:
            continue
        x = [t["nodes"] * (1 + 0.04 * (i - (len(variants) - 1) / 2)) for t in pts]
        y = [t["win_pct"] for t in pts]
        err = [[t["win_pct"] - t["win_pct_low"] for t in pts],
               [t["win_pct_high"] - t["win_pct"] for t in pts]]
        ax.errorbar(x, y, yerr=err, fmt="o-", capsize=4, color=colours[i % len(colours)],
                    label=f"{variant} (this run, 95% CI)")
    if piece == "queen":
        for i, label in enumerate(("PUCT (paper)", "SC (paper)")):
            ax.plot(list(PAPER), [v[i] for v in PAPER.values()], "s--", alpha=0.45,
                    color=colours[i], label=label)
    ax.set_xscale("log")
    ax.set_xlabel("nodes per move")
    ax.set_ylabel("win % of the odds giver")
    ax.set_ylim(-2, 102)
    ax.set_title(f"{piece} odds vs {opp.split(':')[0].strip('`')}", fontsize=10)
    ax.legend(fontsize=8)
    save_figure(fig, path)


EXPERIMENT = Experiment(NAME, "Odds chess vs a fixed opponent: PUCT and search-contempt "
                        "(paper Table 1)", run, _check, plan)
