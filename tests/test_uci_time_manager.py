"""Time managers and stoppers: lc0's formulas on hand-worked cases, the option string, and a
simulation of whole games on synthetic nps / tree-reuse / smart-pruning histories."""

from __future__ import annotations

import math

import pytest

from zerochess.uci.protocol import GoParams
from zerochess.uci.stoppers import (
    IterationStats,
    SmartPruningStopper,
    StoppersHints,
)
from zerochess.uci.time_manager import (
    SEED_SMOOTH_DEFAULTS,
    LegacyTimeManager,
    SmoothTimeManager,
    TimeManagerError,
    VisitsTrendWatcher,
    estimated_moves_to_go,
    exponential_decay,
    make_search_stopper,
    make_time_manager,
    parse_options_string,
    smooth_spec,
)
from zerochess.uci.tm_simulation import CLOCKS, simulate

# --- formulas, worked by hand from lc0's source ----------------------------------------------


def test_moves_left_curve_and_decay():
    # ply 0: midpoint * (1 + 0)^(1/s) - 0 = midpoint
    assert estimated_moves_to_go(0, 45.2, 5.93) == pytest.approx(45.2)
    # move 40: 45.2 * (1 + 2 (40/45.2)^5.93)^(1/5.93) - 40 = 10.67
    assert estimated_moves_to_go(80, 45.2, 5.93) == pytest.approx(10.67, abs=0.01)
    assert exponential_decay(0.0, 1.0, 2.0, 2.0) == pytest.approx(0.5)
    assert exponential_decay(0.0, 1.0, 2.0, 4.0) == pytest.approx(0.75)
    assert exponential_decay(3.0, 1.0, 5.0, 0.0) == 3.0


def test_legacy_first_move_budget():
    tm = LegacyTimeManager(200)
    stopper = tm.get_stopper(GoParams(wtime=60000, btime=60000), ply=0, black=False,
                             current_nodes=0)
    # (60000 - 200) / 51.5 moves = 1161.2 ms, x (1 + 1.8 first-move bonus) = 3251 ms
    assert stopper.limit_ms == 3251
    stopper.on_search_done(IterationStats(time_since_movestart=1251))
    assert tm.time_spared_ms == 2000  # saved by the early stop, spent at once next move
    nxt = tm.get_stopper(GoParams(wtime=58000, btime=60000), ply=2, black=False,
                         current_nodes=0)
    # (58000 - 200 - 2000) / ML(ply 2) + 2000
    ml = 51.5 * (1 + 2 * (1 / 51.5) ** 7) ** (1 / 7) - 1
    assert nxt.limit_ms == int((58000 - 200 - 2000) / ml + 2000)


def test_legacy_respects_movestogo_and_overhead():
    tm = LegacyTimeManager(500)
    tm.first_move_of_game = False
    go = GoParams(wtime=10000, btime=1, winc=1000, movestogo=1)
    stopper = tm.get_stopper(go, ply=60, black=False, current_nodes=0)
    # movestogo 1: all the clock plus no increments, but never past clock - overhead
    assert stopper.limit_ms == 10000 - 500
    assert tm.get_stopper(GoParams(wtime=100), ply=60, black=False, current_nodes=0).limit_ms \
        <= 100 - 500
    assert tm.get_stopper(GoParams(infinite=True, wtime=100), ply=0, black=False,
                          current_nodes=0) is None


def test_smooth_first_move_budget():
    tm = SmoothTimeManager(200)
    stopper = tm.get_stopper(GoParams(wtime=60000, btime=60000), ply=0, black=False,
                             current_nodes=0)
    # bank 9% = 5400; total = 60000 - 5400 - 200 = 54400 over 45.2 moves = 1203.5 ms;
    # / (1 - 0.52 reuse) = 2507.4 ms brutto; 12% of it (300.9) to the bank;
    # (2507.4 - 300.9) / 0.7 timeuse = 3152.1 ms; bank use 0.94 * 5400 = 5076 ms
    assert stopper.deadline == pytest.approx(3152.1, abs=0.2)
    assert stopper.piggybank == 5076
    assert tm.piggybank_ms == 5700
    assert tm.avg_ms_per_move == pytest.approx(54400 / 45.2)


def test_smooth_tree_reuse_and_timeuse_updates():
    tm = SmoothTimeManager(200)
    stopper = tm.get_stopper(GoParams(wtime=60000, btime=60000), ply=0, black=False,
                             current_nodes=0)
    hints = StoppersHints()
    # 1000 nodes in 1000 ms; the search asked for more time (uses the piggybank)
    stats = IterationStats(time_since_movestart=1000, time_since_first_batch=1000,
                           total_nodes=1000, nodes_since_movestart=1000, edge_n=[600, 400])
    assert not stopper.should_stop(stats, hints)
    assert tm.nps == pytest.approx(1000.0) and hints.estimated_nps == pytest.approx(1000.0)
    stopper.on_search_done(stats)
    used = 1000 / 3152.13
    fraction = 1000 / (54400 / 45.2)
    assert tm.timeuse == pytest.approx(max(0.34, exponential_decay(0.7, used, 5.51, fraction)),
                                       rel=1e-3)
    tm.get_stopper(GoParams(wtime=59000, btime=60000), ply=2, black=False, current_nodes=400)
    # reuse 400 / 1000, weighted by last_time (1000 ms) over the average move time
    assert tm.tree_reuse == pytest.approx(exponential_decay(0.52, 0.4, 3.39, fraction), rel=1e-3)


def test_trend_watcher_sees_an_overtaker():
    watcher = VisitsTrendWatcher(3000, 0.2, 4.0)
    watcher.update(100, [100, 10])
    watcher.update(200, [150, 40])  # best +50, second +30 per 100 ms
    # by 1200 ms: best 150 + 0.2 * 0.5 * 1000 = 250; second 40 + 4 * 0.3 * 1000 = 1240
    assert watcher.best_move_being_overtaken(1200)
    calm = VisitsTrendWatcher(3000, 0.2, 4.0)
    calm.update(100, [100, 10])
    calm.update(200, [200, 11])  # second +1: 11 + 4 * 0.01 * 1000 = 51 < 300
    assert not calm.best_move_being_overtaken(1200)


def test_smart_pruning_stopper():
    sp = SmartPruningStopper(1.33, 0)
    hints = StoppersHints()
    assert sp.should_stop(IterationStats(edge_n=[5]), hints)  # one legal move
    assert sp.should_stop(IterationStats(edge_n=[5, 3], win_found=True), hints)
    sp = SmartPruningStopper(1.33, 0)
    base = dict(nodes_since_movestart=10, edge_n=[700, 100, 0])
    assert not sp.should_stop(IterationStats(time_since_movestart=50, **base), hints)
    assert not sp.should_stop(IterationStats(time_since_movestart=200, **base), hints)  # < +200
    hints.update_remaining_time_ms(500)
    hints.estimated_nps = 1000.0
    # 0.5 s * 1000 nps / 1.33 = 376 playouts left < 700 - 100: stop
    assert sp.should_stop(IterationStats(time_since_movestart=300, **base), hints)
    hints = StoppersHints()
    hints.update_remaining_time_ms(2000)
    hints.estimated_nps = 1000.0
    assert not sp.should_stop(IterationStats(time_since_movestart=300, **base), hints)


def test_search_stopper_chain_follows_go():
    def chain(go, **kw):
        return make_search_stopper(None, go, ply=0, black=False, current_nodes=0,
                                   move_overhead_ms=100, smart_pruning_factor=1.33, **kw)

    names = [type(s).__name__ for s in chain(GoParams(nodes=50, movetime=1000, depth=3)).stoppers]
    assert names == ["VisitsStopper", "TimeLimitStopper", "DepthStopper", "SmartPruningStopper"]
    movetime = chain(GoParams(movetime=1000)).stoppers[1]
    assert movetime.limit_ms == 900  # MoveOverheadMs subtracted
    names = [type(s).__name__ for s in chain(GoParams(infinite=True, movetime=1000)).stoppers]
    assert names == ["VisitsStopper"]  # infinite: no time, no smart pruning
    names = [type(s).__name__ for s in chain(GoParams(mate=2)).stoppers]
    assert names == ["VisitsStopper", "MateStopper"]
    playouts = chain(GoParams(nodes=50), nodes_as_playouts=True).stoppers[0]
    assert type(playouts).__name__ == "PlayoutsStopper"


def test_options_string_syntax_and_errors():
    assert parse_options_string("legacy") == {"legacy": {}}
    assert parse_options_string("smooth(init-nps=1.0, mle-legacy(midpoint=50,steepness=12.0))") \
        == {"smooth": {"init-nps": 1.0, "mle-legacy": {"midpoint": 50, "steepness": 12.0}}}
    tm = make_time_manager("smooth(max-move-budget=0.3,mle-legacy(midpoint=50.0))", 100)
    assert tm.p["max-move-budget"] == 0.3 and tm.p["midpoint"] == 50.0
    assert tm.p["steepness"] == 5.93 and tm.move_overhead == 100
    assert make_time_manager(smooth_spec(SEED_SMOOTH_DEFAULTS), 0).p["max-move-budget"] == 0.3
    for spec, fragment in [
        ("blitz", "unknown time manager 'blitz'"),
        ("smooth(init-npss=1.0)", "unknown setting 'init-npss'"),
        ("smooth(nps-update-rate=5.0)", "nps-update-period"),
        ("smooth(init-nps=fast)", "needs a number"),
        ("smooth(max-tree-reuse=1.5)", "max-tree-reuse must be in"),
        ("smooth(", "cannot parse"),
        ("legacy,smooth", "exactly one time manager"),
        ("midpoint=3", "outside a manager"),
    ]:
        with pytest.raises(TimeManagerError, match=fragment):
            make_time_manager(spec, 200)
    with pytest.raises(TimeManagerError, match="both TimeManager and Slowmover"):
        make_time_manager("smooth", 200, slowmover=1.5, slowmover_is_default=False,
                          spec_is_default=False)
    assert make_time_manager("legacy", 200, slowmover=1.5, slowmover_is_default=False).slowmover \
        == 1.5


# --- whole games on synthetic histories -------------------------------------------------------



@pytest.mark.parametrize("base, inc", CLOCKS)
@pytest.mark.parametrize("spec", ["smooth", "legacy"])
def test_a_40_move_time_control_uses_the_clock_without_flagging(spec, base, inc):
    """40 moves in the base time (movestogo counts down): 85-100% used, never flagged."""
    for seed in range(3):
        game = simulate(spec, base, inc, moves=40, seed=seed, movestogo=True)
        assert not game.flagged and game.overruns == 0
        assert 0.85 <= game.used <= 1.0, (seed, game.used)


@pytest.mark.parametrize("base, inc", CLOCKS)
def test_sudden_death_40_moves_smooth_defaults(base, inc):
    """Sudden death, lc0's smooth defaults: no flag, no search past clock - overhead, but
    short of 85% by move 40 at 10+0.1.

    At move 40 lc0's moves-left curve (midpoint 45.2, steepness 5.93) still expects
    10.7 more moves (it cannot know the game ends there), so the manager keeps their
    share: 82-88% of the clock is spent by then (``docs/UCI.md``); a 60-move game spends
    95% or more (slow test below).
    """
    for seed in range(3):
        game = simulate("smooth", base, inc, moves=40, seed=seed)
        assert not game.flagged and game.overruns == 0
        assert 0.78 <= game.used <= 0.92, (seed, game.used)


FORTY_MOVE_HORIZON = "smooth(mle-legacy(midpoint=40.0))"


@pytest.mark.parametrize("base, inc", CLOCKS)
def test_sudden_death_40_move_game_with_a_40_move_horizon(base, inc):
    """The issue's target in sudden death: a game that lasts 40 moves spends 85-100% of
    the clock without flagging, with the moves-left curve centred on move 40 (the
    documented setting). Longer games still do not flag, but their late moves get less
    time than with the defaults (docs/UCI.md has the numbers)."""
    for seed in range(5):
        game = simulate(FORTY_MOVE_HORIZON, base, inc, moves=40, seed=seed)
        assert not game.flagged and game.overruns == 0
        assert 0.85 <= game.used <= 1.0, (seed, game.used)
        defaults = simulate("smooth", base, inc, moves=40, seed=seed)
        assert game.used > defaults.used + 0.03  # the horizon, not luck, makes the difference
    for seed in range(2):
        longer = simulate(FORTY_MOVE_HORIZON, base, inc, moves=60, seed=seed)
        assert not longer.flagged and longer.overruns == 0 and longer.used >= 0.95


@pytest.mark.slow
@pytest.mark.parametrize("base, inc", CLOCKS)
def test_sudden_death_60_moves_spends_the_clock(base, inc):
    for seed in range(3):
        game = simulate("smooth", base, inc, moves=60, seed=seed)
        assert not game.flagged and game.overruns == 0 and game.used >= 0.9, (seed, game.used)


@pytest.mark.slow
@pytest.mark.parametrize("base, inc", CLOCKS[1:])
def test_long_games_with_increment_never_flag(base, inc):
    for spec in ("smooth", "legacy"):
        game = simulate(spec, base, inc, moves=150, seed=3)
        assert not game.flagged and game.overruns == 0


def test_first_move_is_longest_and_budget_capped():
    game = simulate("smooth", 180_000, 2_000, moves=40, seed=1)
    assert max(game.move_ms) <= 0.42 * 180_000 + 0.94 * 0.09 * 180_000 + 100
    assert math.isclose(max(game.move_ms), max(game.move_ms[:5]))
