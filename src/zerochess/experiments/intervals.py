"""95% intervals for the experiments' rates: the shared ones (Wilson, ``(w + l) / d``, the
Cochran-Armitage trend test, formatting) are ``zerochess.games.stats``'s, re-exported here;
this module adds :func:`difference_interval`, the interval of a difference of two
independent proportions (Newcombe's hybrid score interval, Newcombe 1998, method 10, built
from the two Wilson intervals), e.g. the SC - PUCT win-rate difference of Table 1.
"""

from __future__ import annotations

import math

from zerochess.games.stats import (
    ALPHA,
    Z95,
    TrendTest,
    decisive_over_draws_interval,
    format_interval,
    trend_test,
    wilson_interval,
)


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


__all__ = ["ALPHA", "Z95", "TrendTest", "decisive_over_draws_interval", "difference_interval",
           "format_interval", "trend_test", "wilson_interval"]
