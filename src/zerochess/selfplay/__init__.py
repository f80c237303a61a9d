"""Batched self-play: many games advance together, one batched search per ply.

See ``zerochess.selfplay.config`` for the YAML schema and ``runner`` for the game loop.
"""

from zerochess.selfplay.config import (
    EngineSpec,
    GameConfigError,
    OpeningSpec,
    PlayerSpec,
    SelfPlayConfig,
)
from zerochess.selfplay.openings import Opening, build_openings, odds_board
from zerochess.selfplay.records import GameRecord, GameWriter, MoveStat, read_games_csv
from zerochess.selfplay.run import RunReport, get_model, run_games, run_selfplay, selfplay_specs
from zerochess.selfplay.runner import GameSpec, RunStats, play_games

__all__ = [
    "EngineSpec", "GameConfigError", "GameRecord", "GameSpec", "GameWriter", "MoveStat",
    "Opening", "OpeningSpec", "PlayerSpec", "RunReport", "RunStats", "SelfPlayConfig",
    "build_openings", "get_model", "odds_board", "play_games", "read_games_csv", "run_games",
    "run_selfplay", "selfplay_specs",
]
