"""95% intervals and trend tests for the experiments' rates (one place for all of them).

TODO(i8): issue 8 adds ``wilson_interval``, ``decisive_over_draws_interval``,
``format_interval`` and ``trend_test`` to ``zerochess.games.stats`` (same names and
signatures as here). Once that is on main, import them from there and keep only
:func:`difference_interval` (the SC - PUCT win-rate difference, not in issue 8) here.

Formulas:

- a proportion ``k / n``: the Wilson score interval (Wilson 1927; good coverage at small
  ``n`` and at 0 or ``n``);
- ``(w + l) / d = n / d - 1`` is a decreasing function of the draw rate, so its interval
  is the draw rate's Wilson interval mapped through ``1 / p - 1`` (unbounded above when
  there are no draws);
- the difference of two independent proportions: Newcombe's hybrid score interval
  (Newcombe 1998, method 10), built from the two Wilson intervals;
- a trend of a proportion over ordered groups: the Cochran-Armitage test (two-sided).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

Z95 = 1.959963984540054
ALPHA = 0.05


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float]:  # TODO(i8)
    """Wilson score interval of ``k / n`` (95% by default); NaNs when ``n == 0``."""
    if n <= 0:
        return math.nan, math.nan
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    p = k / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half) if k else 0.0), (min(1.0, centre + half) if k < n else 1.0)


def decisive_over_draws_interval(draws: int, games: int, z: float = Z95
                                 ) -> tuple[float, float]:  # TODO(i8)
    """95% interval of ``(w + l) / d`` from the Wilson interval of the draw rate."""
    lo, hi = wilson_interval(draws, games, z)
    if math.isnan(lo):
        return math.nan, math.nan
    return 1.0 / hi - 1.0, (math.inf if lo <= 0.0 else 1.0 / lo - 1.0)


def difference_interval(k1: int, n1: int, k2: int, n2: int, z: float = Z95
                        ) -> tuple[float, float]:
    """95% interval of ``k1/n1 - k2/n2`` (independent samples; Newcombe's method 10)."""
    if n1 <= 0 or n2 <= 0:
        return math.nan, math.nan
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson_interval(k1, n1, z)
    l2, u2 = wilson_interval(k2, n2, z)
    d = p1 - p2
    return (d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2),
            d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))


def format_interval(value: float, lo: float, hi: float, digits: int = 2) -> str:  # TODO(i8)
    """``"0.25 [0.12, 0.45]"`` (``-`` for NaN, ``inf`` for infinity)."""
    def f(v: float) -> str:
        if math.isnan(v):
            return "-"
        return "inf" if math.isinf(v) else f"{v:.{digits}f}"

    return "-" if math.isnan(value) else f"{f(value)} [{f(lo)}, {f(hi)}]"


@dataclasses.dataclass(frozen=True)
class TrendTest:  # TODO(i8)
    """Cochran-Armitage test of a trend in proportions: ``z > 0`` when the rate rises with
    the score; ``p_value`` is two-sided."""

    z: float
    p_value: float

    @property
    def significant(self) -> bool:
        return bool(self.p_value < ALPHA)

    def describe(self, rate: str, grows: str) -> str:
        """One sentence: the direction with its statistic, or "not significant"."""
        if math.isnan(self.z):
            return f"no test of a trend in {rate} (no variation or no games)"
        stat = f"Cochran-Armitage z = {self.z:+.2f}, two-sided p = {self.p_value:.3g}"
        if not self.significant:
            return f"{rate} shows no significant trend as {grows} at this scale ({stat})"
        return f"{rate} {'rises' if self.z > 0 else 'falls'} as {grows} ({stat})"


def trend_test(events: Sequence[int], totals: Sequence[int], scores: Sequence[float]
               ) -> TrendTest:  # TODO(i8)
    """Cochran-Armitage test for a linear trend of ``events[i] / totals[i]`` in ``scores``.

    ``T = sum x_i (k_i - n_i pbar)``, ``Var T = pbar (1 - pbar) (sum n_i x_i^2 -
    (sum n_i x_i)^2 / N)``, ``z = T / sqrt(Var T)``. Groups without trials are left out.
    """
    if not len(events) == len(totals) == len(scores):
        raise ValueError("events, totals and scores need the same length")
    rows = [(int(k), int(n), float(x)) for k, n, x in zip(events, totals, scores, strict=True)
            if n > 0]
    big_n = sum(n for _, n, _ in rows)
    if big_n == 0:
        return TrendTest(math.nan, math.nan)
    pbar = sum(k for k, _, _ in rows) / big_n
    t = sum(x * (k - n * pbar) for k, n, x in rows)
    sxx = sum(n * x * x for _, n, x in rows) - sum(n * x for _, n, x in rows) ** 2 / big_n
    var = pbar * (1 - pbar) * sxx
    if var <= 0:
        return TrendTest(math.nan, math.nan)
    z = t / math.sqrt(var)
    return TrendTest(z, math.erfc(abs(z) / math.sqrt(2.0)))


__all__ = ["TrendTest", "decisive_over_draws_interval", "difference_interval",
           "format_interval", "trend_test", "wilson_interval"]
