"""Game statistics: rates with 95% intervals, Elo, likelihood of superiority, trend tests."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

Z95 = 1.959963984540054
ALPHA = 0.05


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``k / n`` (95% by default); NaNs if ``n == 0``.

    ``(p + z^2/2n -+ z sqrt(p (1-p) / n + z^2 / 4n^2)) / (1 + z^2 / n)`` with ``p = k / n``
    (Wilson 1927; Newcombe 1998, method 3).
    """
    if n <= 0:
        return math.nan, math.nan
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    p = k / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half) if k else 0.0, min(1.0, centre + half) if k < n else 1.0


def decisive_over_draws_interval(draws: int, games: int, z: float = Z95
                                 ) -> tuple[float, float]:
    """95% interval of ``(w + l) / d`` from the Wilson interval of the draw rate.

    ``(w + l) / d = games / draws - 1`` falls as the draw rate ``p`` rises, so the interval
    is ``(1 / p_hi - 1, 1 / p_lo - 1)``; the upper end is ``inf`` when ``p_lo`` is 0
    (no draws).
    """
    lo, hi = wilson_interval(draws, games, z)
    if math.isnan(lo):
        return math.nan, math.nan
    return 1.0 / hi - 1.0, (math.inf if lo <= 0.0 else 1.0 / lo - 1.0)


def score_interval(wins: int, draws: int, losses: int, z: float = Z95) -> tuple[float, float]:
    """95% interval of the score ``(W + D/2) / N`` (trinomial normal approximation, clipped
    to [0, 1]); the same interval the Elo interval is mapped from."""
    result = MatchResult(wins, draws, losses)
    if result.games == 0:
        return math.nan, math.nan
    s, e = result.score, result.stderr
    return max(0.0, s - z * e), min(1.0, s + z * e)


@dataclasses.dataclass(frozen=True)
class TrendTest:
    """A Cochran-Armitage test of a trend in proportions: ``z`` > 0 when the rate rises
    with the score; ``p_value`` two-sided."""

    z: float
    p_value: float
    scores: tuple[float, ...]

    @property
    def significant(self) -> bool:
        return bool(self.p_value < ALPHA)

    def describe(self, rate: str, grows: str) -> str:
        """One sentence: the direction with its statistic, or "not significant"."""
        if math.isnan(self.z):
            return f"no test of a trend in {rate} (no variation or no games)"
        stat = f"Cochran-Armitage z = {self.z:+.2f}, two-sided p = {self.p_value:.3g}"
        if not self.significant:
            return (f"{rate} shows no trend as {grows} that is significant at this scale "
                    f"({stat}; 5% level)")
        direction = "rises" if self.z > 0 else "falls"
        return f"{rate} {direction} as {grows} ({stat})"


def trend_test(events: Sequence[int], totals: Sequence[int], scores: Sequence[float]
               ) -> TrendTest:
    """Cochran-Armitage test for a linear trend of ``events[i] / totals[i]`` in ``scores``.

    ``T = sum x_i (k_i - n_i pbar)``, ``Var T = pbar (1 - pbar) (sum n_i x_i^2 -
    (sum n_i x_i)^2 / N)``, ``z = T / sqrt(Var T)`` (no continuity correction; ``z^2``
    equals ``N r^2`` with ``r`` the correlation of score and outcome over all trials).
    Groups with no trials are left out; NaNs when nothing varies.
    """
    if not len(events) == len(totals) == len(scores):
        raise ValueError("events, totals and scores need the same length")
    rows = [(int(k), int(n), float(x)) for k, n, x in zip(events, totals, scores, strict=True)
            if n > 0]
    big_n = sum(n for _, n, _ in rows)
    if big_n == 0:
        return TrendTest(math.nan, math.nan, tuple(map(float, scores)))
    pbar = sum(k for k, _, _ in rows) / big_n
    t = sum(x * (k - n * pbar) for k, n, x in rows)
    sxx = sum(n * x * x for _, n, x in rows) - sum(n * x for _, n, x in rows) ** 2 / big_n
    var = pbar * (1 - pbar) * sxx
    if var <= 0:
        return TrendTest(math.nan, math.nan, tuple(map(float, scores)))
    z = t / math.sqrt(var)
    return TrendTest(z, math.erfc(abs(z) / math.sqrt(2.0)), tuple(map(float, scores)))


def format_interval(value: float, lo: float, hi: float, digits: int = 2) -> str:
    """``"0.25 [0.12, 0.45]"`` (``-`` for NaN, ``inf`` for infinity)."""
    def f(v: float) -> str:
        if math.isnan(v):
            return "-"
        return "inf" if math.isinf(v) else f"{v:.{digits}f}"

    if math.isnan(value):
        return "-"
    return f"{f(value)} [{f(lo)}, {f(hi)}]"


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
        s_lo, s_hi = self.score_interval()
        return (f"W {self.wins} / D {self.draws} / L {self.losses}  "
                f"score {self.score:.3f} [{s_lo:.3f}, {s_hi:.3f}]  "
                f"Elo {self.elo:+.1f} [{lo:+.1f}, {hi:+.1f}] (95%)  LOS {100 * self.los:.1f}%")

    def score_interval(self, z: float = Z95) -> tuple[float, float]:
        """The 95% interval of the score (see :func:`score_interval`)."""
        return score_interval(self.wins, self.draws, self.losses, z)

    def rate_intervals(self) -> dict[str, float]:
        """Win, draw and loss rates with their 95% Wilson intervals (``*_low``/``*_high``)."""
        out: dict[str, float] = {}
        for name, k in (("win_rate", self.wins), ("draw_rate", self.draws),
                        ("loss_rate", self.losses)):
            lo, hi = wilson_interval(k, self.games)
            out.update({name: k / self.games if self.games else math.nan,
                        f"{name}_low": lo, f"{name}_high": hi})
        return out

    def to_dict(self) -> dict[str, float]:
        lo, hi = self.elo_interval()
        s_lo, s_hi = self.score_interval()
        return {"wins": self.wins, "draws": self.draws, "losses": self.losses,
                "games": self.games, **self.rate_intervals(), "score": self.score,
                "score_low": s_lo, "score_high": s_hi, "elo": self.elo,
                "elo_low": lo, "elo_high": hi, "los": self.los}
