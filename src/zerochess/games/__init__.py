"""Games: self-play, matches and tournaments of zerochess searches and UCI engines."""

from zerochess.games.config import (
    EngineSpec,
    MatchConfig,
    OpeningSpec,
    PlayerSpec,
    RunConfig,
    SelfPlayConfig,
)
from zerochess.games.loop import GameSpec, RunStats, play_games
from zerochess.games.match import MatchReport, match_result, paired_specs, run_match
from zerochess.games.openings import Opening, build_openings, odds_board
from zerochess.games.players import EnginePlayer, get_model, lc0_maia_available
from zerochess.games.records import GameRecord, GameWriter, MoveStat, read_games_csv
from zerochess.games.run import RunReport, play_into, run_games
from zerochess.games.selfplay import run_selfplay, selfplay_specs
from zerochess.games.stats import MatchResult, elo_from_score, los, score_from_elo

__all__ = [
    "EnginePlayer", "EngineSpec", "GameRecord", "GameSpec", "GameWriter", "MatchConfig",
    "MatchReport", "MatchResult", "MoveStat", "Opening", "OpeningSpec", "PlayerSpec",
    "RunConfig", "RunReport", "RunStats", "SelfPlayConfig", "build_openings",
    "elo_from_score", "get_model", "lc0_maia_available", "los", "match_result", "odds_board",
    "paired_specs", "play_games", "play_into", "read_games_csv", "run_games", "run_match",
    "run_selfplay", "score_from_elo", "selfplay_specs",
]
