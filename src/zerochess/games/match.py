"""Matches: config vs config, or config vs an external UCI engine (config: ``MatchConfig``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import chess

from zerochess.games.config import MatchConfig, OpeningSpec, PlayerSpec
from zerochess.games.loop import GameSpec
from zerochess.games.openings import Opening, build_openings
from zerochess.games.run import RunReport, run_games, unique_players
from zerochess.games.seeding import game_seed
from zerochess.games.stats import MatchResult
from zerochess.games.timeuse import write_time_use
from zerochess.runs import asdict_plain, write_json


def paired_specs(p1: str, p2: str, games: int, openings: OpeningSpec, seed: int,
                 tags: Mapping[str, Any] | None = None, first_index: int = 0,
                 ) -> list[GameSpec]:
    """Games with alternating colours, each opening played once with each colour.

    For odds openings with ``side: player1`` / ``player2`` the named player is the one
    without the piece in both games of a pair (so the position differs by colour).
    """
    pairs = (games + 1) // 2
    if openings.type == "odds" and openings.side in ("player1", "player2"):
        giver_is_p1 = openings.side == "player1"
        # game 2k: p1 white; game 2k+1: p1 black
        sides = [chess.WHITE if (g % 2 == 0) == giver_is_p1 else chess.BLACK
                 for g in range(games)]
        opening_of: list[Opening] = build_openings(openings, games, seed, odds_sides=sides)
    else:
        base = build_openings(openings, pairs, seed)
        opening_of = [base[g // 2] for g in range(games)]
    specs = []
    for g in range(games):
        w, b = (p1, p2) if g % 2 == 0 else (p2, p1)
        idx = first_index + g
        specs.append(GameSpec(idx, w, b, opening_of[g], game_seed(seed, idx), dict(tags or {})))
    return specs


def match_result(rows: Sequence[Mapping[str, Any]], player: str) -> MatchResult:
    """W/D/L of ``player`` over the games (CSV rows or dicts) it played."""
    w = d = l = 0
    for r in rows:
        if player not in (r["white"], r["black"]):
            continue
        s = float(r["score_white"])
        s = s if r["white"] == player else 1.0 - s
        if s == 1.0:
            w += 1
        elif s == 0.0:
            l += 1
        else:
            d += 1
    return MatchResult(w, d, l)


@dataclasses.dataclass
class MatchReport:
    """A finished match: player1's result overall and by colour, and the games."""

    config: MatchConfig
    result: MatchResult
    as_white: MatchResult
    as_black: MatchResult
    run: RunReport
    time_use: dict[str, Any] | None = None  # per player, for a match on real clocks

    def text(self) -> str:
        p1, p2 = self.run_names
        tc = f" at {self.config.time_control}" if self.config.time_control else ""
        lines = [f"{p1} vs {p2}: {self.result.games} games{tc}",
                 f"  {self.result.summary()}",
                 f"  as white: W {self.as_white.wins} D {self.as_white.draws} "
                 f"L {self.as_white.losses};  as black: W {self.as_black.wins} "
                 f"D {self.as_black.draws} L {self.as_black.losses}"]
        for name, t in (self.time_use or {}).items():
            lines.append(
                f"  {name}: time losses {t['time_losses']}, mean {t['mean_move_ms'] / 1000:.2f} "
                f"s/move, max {t['max_move_ms'] / 1000:.2f} s, mean {t['mean_game_ms'] / 1000:.1f}"
                f" s/game, lowest clock {t['min_clock_ms'] / 1000:.2f} s")
        return "\n".join(lines)

    @property
    def time_losses(self) -> int:
        return sum(t["time_losses"] for t in (self.time_use or {}).values())

    @property
    def run_names(self) -> tuple[str, str]:
        a, b = unique_players(self.config.player1, self.config.player2)
        return a.name, b.name


def run_match(config: MatchConfig, out_dir: str | Path, *, progress: bool = True,
              stop_after: int | None = None, force: bool = False,
              rules: str | None = None) -> MatchReport:
    """Play a match into ``out_dir`` (games.pgn / games.csv / match.json / summary.md);
    ``rules``: see ``run_games``."""
    p1, p2 = unique_players(config.player1, config.player2)
    players = {p1.name: p1, p2.name: p2}
    specs = paired_specs(p1.name, p2.name, config.games, config.openings, config.seed)
    run = run_games(config, out_dir, specs, players, event=f"zerochess match {config.name}",
                    progress=progress, stop_after=stop_after, force=force, rules=rules)
    rows = run.rows
    time_use = None
    if p1.time_control is not None:
        time_use = write_time_use(run.out_dir, f"{config.name}: time use per move "
                                  f"({p1.time_control} per side)")
    report = MatchReport(
        config, match_result(rows, p1.name),
        match_result([r for r in rows if r["white"] == p1.name], p1.name),
        match_result([r for r in rows if r["black"] == p1.name], p1.name), run, time_use)
    clock: dict[str, Any] = {}
    if time_use is not None:
        clock = {"time_control": str(p1.time_control), "time_losses": report.time_losses,
                 "time_use": time_use}
    write_json(run.out_dir / "match.json", {
        "player1": p1.name, "player2": p2.name, **report.result.to_dict(),
        "as_white": report.as_white.to_dict(), "as_black": report.as_black.to_dict(),
        **clock})
    plot = "\n![time use](time_use.png)\n" if (run.out_dir / "time_use.png").is_file() \
        else ""
    (run.out_dir / "summary.md").write_text(
        f"# Match {config.name}\n\n```\n{report.text()}\n```\n\n"
        f"player1: `{_describe(p1)}`\n\nplayer2: `{_describe(p2)}`\n{plot}")
    return report


def _describe(p: PlayerSpec) -> str:
    if p.engine is not None:
        return f"{p.name}: {p.engine.describe()}"
    diff = {k: v for k, v in asdict_plain(p.search).items()
            if v != getattr(type(p.search)(), k)}
    return f"{p.name}: nodes={p.nodes} search={diff or 'lc0 defaults'} " \
           f"temperature={asdict_plain(p.temperature)}"
