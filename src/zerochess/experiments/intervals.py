"""95% intervals for the experiments' rates: ``zerochess.games.stats``'s, re-exported, plus
the difference of two proportions (Newcombe) and game-clustered bootstrap shares and ratios."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

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


def _cluster_shares(hits: Sequence[int], sizes: Sequence[int], draws: int,
                    rng: np.random.Generator) -> np.ndarray:
    """``draws`` bootstrap shares sum(hits) / sum(sizes) over games resampled with replacement."""
    k = np.asarray(hits, dtype=np.float64)
    n = np.asarray(sizes, dtype=np.float64)
    idx = rng.integers(0, len(k), size=(draws, len(k)))  # [draws, games]
    tot = n[idx].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tot > 0, k[idx].sum(axis=1) / np.where(tot > 0, tot, 1), np.nan)


def _percentiles(x: np.ndarray, alpha: float = ALPHA) -> tuple[float, float]:
    x = x[~np.isnan(x)]
    if not len(x):
        return math.nan, math.nan
    return (float(np.quantile(x, alpha / 2, method="lower")),
            float(np.quantile(x, 1 - alpha / 2, method="higher")))


def cluster_share_interval(hits: Sequence[int], sizes: Sequence[int], draws: int = 2000,
                           seed: int = 0) -> tuple[float, float]:
    """95% interval of ``sum(hits) / sum(sizes)`` where game g holds ``sizes[g]`` positions,
    ``hits[g]`` of them counted: percentile bootstrap over games (``draws`` resamples),
    widened to cover the Wilson interval of the pooled count (the bootstrap collapses to a
    point when no position, or every one, is counted; Wilson does not)."""
    if len(hits) != len(sizes):
        raise ValueError(f"hits and sizes differ in length: {len(hits)} and {len(sizes)}")
    if not len(hits) or sum(sizes) == 0:
        return math.nan, math.nan
    lo, hi = _percentiles(_cluster_shares(hits, sizes, draws, np.random.default_rng(seed)))
    wl, wh = wilson_interval(int(sum(hits)), int(sum(sizes)))
    return min(lo, wl), max(hi, wh)


def cluster_ratio_interval(hits_a: Sequence[int], sizes_a: Sequence[int],
                           hits_b: Sequence[int], sizes_b: Sequence[int], draws: int = 2000,
                           seed: int = 0) -> tuple[float, float]:
    """95% interval of share A / share B (independent groups of games, each resampled by
    game); the upper end is ``inf`` when more than 2.5% of the resamples of B count no
    position."""
    if not len(hits_a) or not len(hits_b) or sum(sizes_a) == 0 or sum(sizes_b) == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    a = _cluster_shares(hits_a, sizes_a, draws, rng)
    b = _cluster_shares(hits_b, sizes_b, draws, rng)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(b > 0, a / np.where(b > 0, b, 1), np.where(a > 0, np.inf, np.nan))
    return _percentiles(ratio)


__all__ = ["ALPHA", "Z95", "TrendTest", "cluster_ratio_interval", "cluster_share_interval",
           "decisive_over_draws_interval", "difference_interval", "format_interval",
           "trend_test", "wilson_interval"]
