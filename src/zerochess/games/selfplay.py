"""Self-play: both colours from one config (or two players), colours optionally alternating."""

from __future__ import annotations

from pathlib import Path

from zerochess.games.config import PlayerSpec, SelfPlayConfig
from zerochess.games.loop import GameSpec
from zerochess.games.openings import build_openings
from zerochess.games.run import RunReport, run_games, unique_players
from zerochess.games.seeding import game_seed


def selfplay_specs(config: SelfPlayConfig) -> tuple[list[GameSpec], dict[str, PlayerSpec]]:
    """The games of a self-play config (colours alternate when asked, openings paired)."""
    white, black = unique_players(config.white, config.black)
    players = {white.name: white, black.name: black}
    if config.alternate_colors:
        pairs = (config.games + 1) // 2
        openings = build_openings(config.openings, pairs, config.seed)
        opening_of = [openings[g // 2] for g in range(config.games)]
    else:
        opening_of = build_openings(config.openings, config.games, config.seed)
    specs = []
    for g in range(config.games):
        w, b = (white.name, black.name)
        if config.alternate_colors and g % 2 == 1:
            w, b = b, w
        specs.append(GameSpec(g, w, b, opening_of[g], game_seed(config.seed, g)))
    return specs, players


def run_selfplay(config: SelfPlayConfig, out_dir: str | Path, *, progress: bool = True,
                 stop_after: int | None = None, force: bool = False,
                 rules: str | None = None) -> RunReport:
    """Play a self-play config into ``out_dir`` (games.pgn, games.csv, config.yaml, ...);
    ``rules``: see ``run_games``."""
    specs, players = selfplay_specs(config)
    return run_games(config, out_dir, specs, players,
                     event=f"zerochess selfplay {config.name}", progress=progress,
                     stop_after=stop_after, force=force, rules=rules)
