"""Matches: config vs config, or config vs an external UCI engine (stockfish, lc0 + Maia).

Reports W/D/L, score, Elo difference with a 95% interval and LOS (``stats``).
"""

from zerochess.match.engines import (
    EnginePlayer,
    find_lc0,
    find_maia_weights,
    find_stockfish,
    lc0_maia_available,
)
from zerochess.match.match import MatchConfig, MatchReport, match_result, paired_specs, run_match
from zerochess.match.stats import MatchResult, elo_from_score, los, score_from_elo

__all__ = [
    "EnginePlayer", "MatchConfig", "MatchReport", "MatchResult", "elo_from_score",
    "find_lc0", "find_maia_weights", "find_stockfish", "lc0_maia_available", "los",
    "match_result", "paired_specs", "run_match", "score_from_elo",
]
