"""Match statistics: score, Elo difference with a 95% interval, likelihood of superiority.

Standard formulas (as in cutechess-cli / BayesElo-free "Elo calculators"):

- score ``s = (W + D/2) / N``;
- Elo difference ``E(s) = -400 log10(1/s - 1)``;
- the 95% interval maps ``s +- 1.959964 * sigma / sqrt(N)`` through ``E``, where
  ``sigma^2 = (W (1-s)^2 + D (1/2-s)^2 + L s^2) / N`` is the per-game score variance
  (the trinomial W/D/L model);
- LOS ``= 1/2 (1 + erf((W - L) / sqrt(2 (W + L))))`` (draws carry no information).
"""

from __future__ import annotations

import dataclasses
import math

Z95 = 1.959963984540054


def elo_from_score(score: float) -> float:
    """Elo difference of an expected score in [0, 1] (+-inf at 1 / 0)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_from_elo(elo: float) -> float:
    """The expected score of an Elo difference."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def los(wins: int, losses: int) -> float:
    """Likelihood of superiority from wins and losses (0.5 when there are none)."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


@dataclasses.dataclass(frozen=True)
class MatchResult:
    """W/D/L from the first player's point of view, with the derived statistics."""

    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        n = self.games
        return (self.wins + 0.5 * self.draws) / n if n else math.nan

    @property
    def draw_ratio(self) -> float:
        return self.draws / self.games if self.games else math.nan

    @property
    def stderr(self) -> float:
        """Standard error of the mean score (trinomial model)."""
        n = self.games
        if n == 0:
            return math.nan
        s = self.score
        var = (self.wins * (1 - s) ** 2 + self.draws * (0.5 - s) ** 2
               + self.losses * s ** 2) / n
        return math.sqrt(var / n)

    @property
    def elo(self) -> float:
        return elo_from_score(self.score) if self.games else math.nan

    def elo_interval(self, z: float = Z95) -> tuple[float, float]:
        """The 95% (by default) interval of the Elo difference."""
        if self.games == 0:
            return math.nan, math.nan
        s, e = self.score, self.stderr
        return elo_from_score(s - z * e), elo_from_score(s + z * e)

    @property
    def elo_error(self) -> float:
        """Half-width of the 95% Elo interval (+-)."""
        lo, hi = self.elo_interval()
        return (hi - lo) / 2

    @property
    def los(self) -> float:
        return los(self.wins, self.losses)

    def summary(self) -> str:
        lo, hi = self.elo_interval()
        return (f"W {self.wins} / D {self.draws} / L {self.losses}  "
                f"score {self.score:.3f}  Elo {self.elo:+.1f} [{lo:+.1f}, {hi:+.1f}]  "
                f"LOS {100 * self.los:.1f}%")

    def to_dict(self) -> dict[str, float]:
        lo, hi = self.elo_interval()
        return {"wins": self.wins, "draws": self.draws, "losses": self.losses,
                "games": self.games, "score": self.score, "elo": self.elo,
                "elo_low": lo, "elo_high": hi, "los": self.los}
