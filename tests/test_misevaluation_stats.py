"""The misevaluation statistic (``experiments.misevaluation``) on hand-set values against a
plain-Python count; the by-game bootstrap intervals; Lichess's centipawn mapping; the
per-game log a resumed scan reads back."""

from __future__ import annotations

import json
import math

import pytest

from zerochess.experiments.intervals import (
    cluster_ratio_interval,
    cluster_share_interval,
    wilson_interval,
)
from zerochess.experiments.judge import cp_to_value
from zerochess.experiments.misevaluation import GameValues, over_threshold, ratio_row, share_row
from zerochess.experiments.scan import GameLog, scan_plies

# hand-set values: (variant, raw values, deep values, Stockfish values) per game
GAMES = [
    ("sc", [0.0, 0.1, 0.9, -0.5], [0.0, -0.3, 0.0, 0.5], [0.1, 0.1, 0.1, 0.1]),
    ("sc", [0.2, 0.2], [0.2, -0.7], [0.2, 0.2]),
    ("puct", [0.0, 0.0, 0.0], [0.05, 0.31, -0.6], [0.0, 0.0, 0.9]),
    ("puct", [0.5], [0.5], [0.5]),
]


def games():
    return [GameValues(i, v, raw, {"deep": deep, "stockfish": sf})
            for i, (v, raw, deep, sf) in enumerate(GAMES)]


def plain_count(variant, judge, t):
    k = n = 0
    for v, raw, deep, sf in GAMES:
        if v != variant:
            continue
        other = deep if judge == "deep" else sf
        for a, b in zip(raw, other, strict=True):
            n += 1
            if abs(a - b) > t:
                k += 1
    return k, n


@pytest.mark.parametrize("t", [0.3, 0.5, 0.8])
@pytest.mark.parametrize("judge", ["deep", "stockfish"])
@pytest.mark.parametrize("variant", ["sc", "puct"])
def test_share_matches_a_plain_count(variant, judge, t):
    k, n = plain_count(variant, judge, t)
    row = share_row(games(), variant, judge, t, draws=500, seed=0)
    assert (row["over"], row["positions"]) == (k, n)
    assert row["share"] == pytest.approx(k / n)
    assert row["share_low"] <= row["share"] <= row["share_high"]
    assert (row["wilson_low"], row["wilson_high"]) == pytest.approx(wilson_interval(k, n))


def test_hand_counts():
    # by hand: sc's |raw - deep| = 0, 0.4, 0.9, 1.0, 0, 0.9 -> over 0.3: 4, over 0.8: 3
    assert over_threshold([0.0, 0.1, 0.9, -0.5], [0.0, -0.3, 0.0, 0.5], 0.3) == 3
    assert plain_count("sc", "deep", 0.3) == (4, 6)
    assert plain_count("sc", "deep", 0.8) == (3, 6)
    # puct: 0.05, 0.31, 0.6, 0 -> over 0.3: 2 of 4; strictly greater: 0.5 is not over 0.5
    assert plain_count("puct", "deep", 0.3) == (2, 4)
    assert over_threshold([0.0], [0.5], 0.5) == 0


def test_ratio_row():
    r = ratio_row(games(), "sc", "puct", "deep", 0.3, draws=500, seed=0)
    assert r["ratio"] == pytest.approx((4 / 6) / (2 / 4))
    assert r["ratio_low"] <= r["ratio"] <= r["ratio_high"]


def test_cluster_interval_collapses_and_widens():
    # every game the same share: every resample gives it, and the interval is Wilson's
    assert cluster_share_interval([1, 1, 1], [2, 2, 2]) == pytest.approx(wilson_interval(3, 6))
    # no position counted: not the point [0, 0] but Wilson's [0, 0.0xx]
    lo, hi = cluster_share_interval([0] * 10, [10] * 10)
    assert lo == 0.0 and hi == pytest.approx(wilson_interval(0, 100)[1]) and hi > 0.03
    # all-or-nothing games (positions perfectly correlated within a game): the by-game
    # interval is wider than Wilson's, which treats the 200 positions as independent
    hits, sizes = [20] * 5 + [0] * 5, [20] * 10
    lo, hi = cluster_share_interval(hits, sizes, draws=2000, seed=1)
    wl, wh = wilson_interval(100, 200)
    assert lo < wl and hi > wh
    assert lo <= 0.5 <= hi
    # a baseline with no hit: the ratio is unbounded above
    lo, hi = cluster_ratio_interval([1, 2], [5, 5], [0, 0], [5, 5], draws=200)
    assert math.isinf(hi)
    # seeded: the same call gives the same interval
    assert cluster_share_interval(hits, sizes, 500, 3) == cluster_share_interval(hits, sizes,
                                                                                   500, 3)


def test_lichess_win_chances():
    assert cp_to_value(0) == 0.0
    # Lichess: win% = 50 + 50 * v; +100 cp is about 59.1% (lichess.org accuracy page)
    assert 50 + 50 * cp_to_value(100) == pytest.approx(59.1, abs=0.05)
    assert cp_to_value(-300) == pytest.approx(-cp_to_value(300))
    assert cp_to_value(5000) == cp_to_value(1000)  # clamped at +-1000 cp


def test_scan_plies():
    assert scan_plies(10, 1, 3) == [1, 4, 7]
    assert scan_plies(0, 0, 1) == []


def test_game_log_keeps_finished_games_and_drops_a_cut_line(tmp_path):
    path = tmp_path / "positions.jsonl"
    log = GameLog(path)
    log.add([{"game": 0, "x": 1}, {"game": 3, "x": 2}])
    with open(path, "a") as f:
        f.write('{"game": 5, "x"')  # cut short by an interruption
    again = GameLog(path)
    assert sorted(again.done) == [0, 3]
    assert [json.loads(x)["game"] for x in path.read_text().splitlines()] == [0, 3]
    path.write_text('not json\n{"game": 1}\n')
    from zerochess.errors import ConfigError

    with pytest.raises(ConfigError, match="not a game record"):
        GameLog(path)
