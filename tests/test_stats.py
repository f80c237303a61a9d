"""Interval and trend functions (``zerochess.games.stats``) against independent values:
scipy's Wilson interval, Newcombe's (1998) published intervals, Agresti's trend example,
the correlation identity of the Cochran-Armitage statistic, and a simulated coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from zerochess.experiments.common import wdl_counts
from zerochess.games.stats import (
    MatchResult,
    decisive_over_draws_interval,
    format_interval,
    score_interval,
    trend_test,
    wilson_interval,
)

# Newcombe, "Two-sided confidence intervals for the single proportion", Stat. Med. 1998,
# Table II, method 3 (Wilson score, no continuity correction).
NEWCOMBE = [((81, 263), (0.2553, 0.3662)), ((15, 148), (0.0624, 0.1605)),
            ((0, 20), (0.0, 0.1611)), ((1, 29), (0.0061, 0.1718))]


@pytest.mark.parametrize("kn, expected", NEWCOMBE)
def test_wilson_matches_newcombe_table(kn, expected):
    lo, hi = wilson_interval(*kn)
    assert lo == pytest.approx(expected[0], abs=5e-5)
    assert hi == pytest.approx(expected[1], abs=5e-5)


@pytest.mark.parametrize("k, n", [(0, 1), (1, 1), (3, 7), (12, 24), (24, 24), (5, 100),
                                  (999, 1000)])
def test_wilson_matches_scipy(k, n):
    ref = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(ref.low, abs=1e-12)
    assert hi == pytest.approx(ref.high, abs=1e-12)


def test_wilson_edge_cases():
    assert all(math.isnan(x) for x in wilson_interval(0, 0))
    with pytest.raises(ValueError):
        wilson_interval(5, 4)


def test_wilson_coverage_by_simulation():
    """At n = 24 (a small experiment's point) the interval covers p about 95% of the time."""
    rng = np.random.default_rng(0)
    for p in (0.1, 0.3, 0.5):
        ks = rng.binomial(24, p, size=4000)
        covered = np.mean([lo <= p <= hi for lo, hi in (wilson_interval(int(k), 24)
                                                       for k in ks)])
        assert 0.92 <= covered <= 0.99, (p, covered)


def test_decisive_over_draws_interval_maps_the_draw_rate():
    # (w+l)/d = n/d - 1: the interval is the draw rate's scipy Wilson interval, mapped
    ref = sps.binomtest(5, 24).proportion_ci(method="wilson")
    lo, hi = decisive_over_draws_interval(5, 24)
    assert lo == pytest.approx(1 / ref.high - 1) and hi == pytest.approx(1 / ref.low - 1)
    assert lo < 19 / 5 < hi
    assert decisive_over_draws_interval(0, 10)[1] == math.inf  # no draws: unbounded above
    assert decisive_over_draws_interval(10, 10)[0] == 0.0
    assert all(math.isnan(x) for x in decisive_over_draws_interval(0, 0))


def test_score_interval_by_hand():
    # W 37 D 46 L 17: s = 0.6; var = (37*0.16 + 46*0.01 + 17*0.36)/100 = 0.125
    half = 1.959963984540054 * math.sqrt(0.125 / 100)
    lo, hi = score_interval(37, 46, 17)
    assert lo == pytest.approx(0.6 - half) and hi == pytest.approx(0.6 + half)
    assert MatchResult(37, 46, 17).score_interval() == (lo, hi)
    assert score_interval(5, 0, 0) == (1.0, 1.0)  # clipped, zero variance


def test_match_rates_are_wilson():
    rates = MatchResult(8, 5, 11).rate_intervals()
    for key, k in (("win_rate", 8), ("draw_rate", 5), ("loss_rate", 11)):
        ref = sps.binomtest(k, 24).proportion_ci(method="wilson")
        assert rates[key] == pytest.approx(k / 24)
        assert (rates[f"{key}_low"], rates[f"{key}_high"]) == pytest.approx((ref.low, ref.high))


def test_trend_test_agresti_example():
    """Agresti, Categorical Data Analysis (2nd ed., Sec. 3.4.6): infant malformation vs
    alcohol consumption, scores (0, 0.5, 1.5, 4, 7): M^2 = 6.57, P = 0.01."""
    present = [48, 38, 5, 1, 1]
    absent = [17066, 14464, 788, 126, 37]
    t = trend_test(present, [a + b for a, b in zip(present, absent, strict=True)],
                   [0, 0.5, 1.5, 4.0, 7.0])
    assert t.z ** 2 == pytest.approx(6.57, abs=0.01)
    assert t.p_value == pytest.approx(0.0104, abs=5e-4) and t.significant and t.z > 0


def test_trend_test_equals_n_r_squared():
    """z^2 = N r^2, r the Pearson correlation of score and 0/1 outcome over all trials."""
    events, totals, scores = [3, 5, 9, 14], [20, 22, 21, 25], [0.0, 0.3, 1.0, 2.5]
    t = trend_test(events, totals, scores)
    x = np.concatenate([np.full(n, s) for n, s in zip(totals, scores, strict=True)])
    y = np.concatenate([np.r_[np.ones(k), np.zeros(n - k)]
                        for k, n in zip(events, totals, strict=True)])
    r = sps.pearsonr(x, y).statistic
    assert t.z ** 2 == pytest.approx(len(x) * r ** 2)
    assert t.p_value == pytest.approx(2 * sps.norm.sf(abs(t.z)))
    flipped = trend_test(events[::-1], totals[::-1], scores)
    assert flipped.z < 0 < t.z


def test_trend_test_degenerate_and_sentences():
    assert math.isnan(trend_test([0, 0], [5, 5], [0, 1]).z)  # no events at all
    assert math.isnan(trend_test([2, 3], [5, 5], [1, 1]).z)  # one score
    flat = trend_test([5, 5, 5], [10, 10, 10], [0, 1, 2])
    assert flat.z == 0 and not flat.significant
    assert "no trend" in flat.describe("the draw rate", "N_scl grows")
    assert "rises" in trend_test([1, 5, 9], [10, 10, 10], [0, 1, 2]).describe("x", "y")


def test_wdl_counts_carry_intervals():
    rows = [{"result": r, "plies": "10", "termination": "checkmate"}
            for r in ["1-0"] * 8 + ["1/2-1/2"] * 5 + ["0-1"] * 11]
    c = wdl_counts(rows)
    assert c["decisive_over_draws"] == pytest.approx(19 / 5)
    lo, hi = decisive_over_draws_interval(5, 24)
    assert (c["decisive_over_draws_low"], c["decisive_over_draws_high"]) == (lo, hi)
    assert (c["draw_rate_low"], c["draw_rate_high"]) == wilson_interval(5, 24)
    assert (c["white_win_rate_low"], c["white_win_rate_high"]) == wilson_interval(8, 24)
    assert (c["black_win_rate_low"], c["black_win_rate_high"]) == wilson_interval(11, 24)
    assert c["white_score"] == pytest.approx(10.5 / 24)


def test_format_interval():
    assert format_interval(0.25, 0.1, 0.456) == "0.25 [0.10, 0.46]"
    assert format_interval(3.8, 1.5, math.inf, 1) == "3.8 [1.5, inf]"
    assert format_interval(math.nan, 0, 1) == "-"
