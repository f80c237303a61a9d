"""``zerochess bench --smart-pruning`` at a tiny size (the stopping rule itself is tested
against a plain-Python replay in test_smart_pruning.py)."""

import pytest

from zerochess.bench import smart_pruning


@pytest.mark.tier2  # a whole bench run
def test_rows_count_the_visits_each_factor_spends():
    plan = {**smart_pruning.TINY, "positions": 4, "visits": 48}
    out = smart_pruning.run(plan, factors=(0.0, 1.33), log=lambda s: None)
    off, on = out["rows"]
    assert off["factor"] == 0.0 and on["factor"] == 1.33
    # without pruning every search spends its whole budget (root evaluation + 48)
    assert off["mean_playouts"] == 49 and off["stopped_early"] == 0
    assert off["same_best_as_unpruned"] == 4
    # pruning stops at least one of these searches early, never past the budget
    assert 0 < on["stopped_early"] <= 4
    assert on["mean_playouts"] < 49 and 0 < on["share_of_budget"] < 1
    lo, hi = on["same_best_as_unpruned_ci95"]
    assert 0 <= lo <= on["same_best_as_unpruned"] / 4 <= hi + 1e-12 and hi <= 1 + 1e-12
