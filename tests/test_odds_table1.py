"""``odds_table1`` (the paper's Table 1 with intervals), its statistics and the run-time
estimate every experiment prints before playing."""

from __future__ import annotations

import math

import chess
import numpy as np
import pytest
import scipy.stats
import yaml

from zerochess.cli import main
from zerochess.errors import ConfigError
from zerochess.experiments import EXPERIMENTS, get_experiment, runtime
from zerochess.experiments.intervals import difference_interval, trend_test, wilson_interval
from zerochess.experiments.odds_table1 import cell_table, difference_table
from zerochess.games.loop import GameSpec
from zerochess.games.openings import Opening


def test_wilson_matches_scipy():
    for k, n in [(0, 8), (1, 8), (4, 8), (8, 8), (37, 100), (0, 1)]:
        ci = scipy.stats.binomtest(k, n).proportion_ci(method="wilson")
        assert wilson_interval(k, n) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert all(math.isnan(x) for x in wilson_interval(0, 0))


def test_difference_interval_matches_newcombe():
    # Newcombe (1998), Statistics in Medicine 17:873, Table II, method 10
    assert difference_interval(56, 70, 48, 80) == pytest.approx((0.0524, 0.3339), abs=1e-4)
    assert difference_interval(9, 10, 3, 10) == pytest.approx((0.1705, 0.8090), abs=1e-4)
    lo, hi = difference_interval(5, 10, 5, 10)
    assert lo == pytest.approx(-hi) and lo < 0 < hi


def test_trend_test_equals_correlation_over_trials():
    # Cochran-Armitage z^2 = N r^2, r the correlation of score and outcome over all trials
    events, totals, scores = [2, 5, 9], [10, 12, 11], [0.0, 1.0, 2.5]
    x = np.concatenate([[s] * n for s, n in zip(scores, totals, strict=True)])
    y = np.concatenate([[1] * k + [0] * (n - k) for k, n in zip(events, totals, strict=True)])
    r = np.corrcoef(x, y)[0, 1]
    t = trend_test(events, totals, scores)
    assert t.z ** 2 == pytest.approx(len(x) * r * r)
    assert t.z > 0 and t.p_value == pytest.approx(2 * scipy.stats.norm.sf(abs(t.z)))
    assert math.isnan(trend_test([0, 0], [5, 5], [1, 2]).z)


def _row(index, white, black, result):
    score = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[result]
    return {"index": str(index), "white": white, "black": black, "result": result,
            "score_white": str(score)}


def _cfg(**over):
    cfg = get_experiment("odds_table1").resolve("full")
    cfg.update(over)
    return cfg


def test_cell_and_difference_tables_count_our_side():
    cfg = _cfg(nodes=[100])
    rows = [
        # puct_n100: wins as white and as black, a loss, a draw
        _row(0, "puct_n100", "maia1900_1node", "1-0"),
        _row(1, "maia1900_1node", "puct_n100", "0-1"),
        _row(2, "puct_n100", "maia1900_1node", "0-1"),
        _row(3, "maia1900_1node", "puct_n100", "1/2-1/2"),
        # sc_n100: 4 wins of 4
        *[_row(4 + g, *(("sc_n100", "maia1900_1node") if g % 2 == 0
                        else ("maia1900_1node", "sc_n100")), "1-0" if g % 2 == 0 else "0-1")
          for g in range(4)],
    ]
    table = cell_table(rows, cfg)
    puct, sc = table
    assert (puct["wins"], puct["draws"], puct["losses"]) == (2, 1, 1)
    assert (puct["wins_as_white"], puct["games_as_white"]) == (1, 2)
    assert puct["win_pct"] == 50.0 and sc["win_pct"] == 100.0
    assert (puct["win_pct_low"], puct["win_pct_high"]) == pytest.approx(
        tuple(100 * x for x in wilson_interval(2, 4)))
    assert puct["paper_win_pct"] == 23.43 and sc["paper_win_pct"] == 36.76
    (diff,) = difference_table(table, cfg)
    assert diff["variant"] == "sc" and diff["minus"] == "puct"
    assert diff["diff_pct"] == pytest.approx(50.0)
    assert (diff["diff_pct_low"], diff["diff_pct_high"]) == pytest.approx(
        tuple(100 * x for x in difference_interval(4, 4, 2, 4)))
    # other odds than the paper's queen: no paper column
    assert math.isnan(cell_table(rows, _cfg(nodes=[100], piece="rook"))[0]["paper_win_pct"])


@pytest.mark.parametrize("over, match", [
    ({"nodes": [100, 100]}, "distinct"),
    ({"nodes": []}, "nodes"),
    ({"piece": "king"}, "piece"),
    ({"games_per_cell": 0}, "games_per_cell"),
    ({"variants": [{"name": "a", "search": {}}, {"name": "a", "search": {"n_scl": 5}}]},
     "distinct"),
    ({"variants": [{"name": "a", "search": {"n_scll": 5}}]}, "n_scll"),
    ({"opponent": {"name": "puct", "nodes": 1}}, "opponent"),
    ({"opponent": {"name": "x", "engine": {"kind": "nonsense"}}}, "kind"),
])
def test_bad_settings_are_clear_errors(tmp_path, over, match):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(over))
    with pytest.raises(ConfigError, match=match):
        get_experiment("odds_table1").resolve("tiny", path)


def test_plan_is_one_batch_per_node_count():
    cfg = _cfg()
    plan = get_experiment("odds_table1").plan(cfg)
    assert [p.label for p in plan] == ["100 nodes", "800 nodes"]
    k = cfg["games_per_cell"]
    assert k >= 100  # a 95% interval within +-10 points needs about 100 games per cell
    indices = [s.index for p in plan for s in p.specs]
    assert sorted(indices) == list(range(len(indices))) and len(indices) == 4 * k
    for p in plan:
        ours = [n for n in p.players if n != "maia1900_1node"]
        assert len(ours) == 2
        for name in ours:
            mine = [s for s in p.specs if name in (s.white, s.black)]
            assert len(mine) == k
            # our side always gives the odds, in both colours
            for s in mine:
                board = s.opening.board()
                colour = s.white == name
                assert not board.pieces(chess.QUEEN, colour)
                assert board.pieces(chess.QUEEN, not colour)


def test_estimate_arithmetic(monkeypatch, tmp_path):
    """The estimate adds up measured costs per game left: plies / 2 per side."""
    from zerochess.games.config import EngineSpec, PlayerSpec
    from zerochess.search import SearchConfig

    monkeypatch.setattr(runtime, "measure_search", lambda model, players, specs, b, rules="host":
                        runtime.SearchRate(max(p.nodes for p in players) + 1, b, 1000.0,
                                           0.5, 7.0))
    monkeypatch.setattr(runtime, "measure_engine", lambda spec, board: 0.01)
    opening = Opening("startpos", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
    engine = PlayerSpec("eng", nodes=1, engine=EngineSpec(kind="lc0", nodes=1))
    a = PlayerSpec("a", nodes=100, search=SearchConfig())
    specs = [GameSpec(i, "a" if i % 2 == 0 else "eng", "eng" if i % 2 == 0 else "a", opening,
                      i) for i in range(6)]
    plan = [runtime.PlannedGames("part", specs, {"a": a, "eng": engine}, 4, 80.0)]
    est = runtime.estimate("builtin", plan)
    per_game = 80 / 2 * ((0.5 / 4 + 100 / 1000.0) + 0.01)
    assert est.games_left == 6 and est.seconds == pytest.approx(6 * per_game)
    # a resumed folder: its games are not counted, their mean length replaces the guess
    lines = ["index,plies"] + [f"{i},{40 + i}" for i in range(10)]
    many = [GameSpec(i, s.white, s.black, opening, i) for i, s in
            enumerate(specs * 3)]
    (tmp_path / "games.csv").write_text("\n".join(lines) + "\n")
    plan = [runtime.PlannedGames("part", many, {"a": a, "eng": engine}, 4, 80.0)]
    est = runtime.estimate("builtin", plan, tmp_path, max_plies=44)
    assert est.games_left == 8 and est.plies_per_game == 44  # mean 44.5, capped at 44
    assert est.seconds == pytest.approx(8 * 44 / 2 * ((0.5 / 4 + 0.1) + 0.01))
    assert "games in the run folder" in est.text()


@pytest.mark.tier2  # a whole experiment
def test_odds_table1_tiny_end_to_end(tmp_path, capsys):
    assert "odds_table1" in EXPERIMENTS
    over = tmp_path / "over.yaml"
    over.write_text(yaml.safe_dump({"nodes": [4], "games_per_cell": 2}))
    out = tmp_path / "run"
    args = ["experiment", "odds_table1", "--scale", "tiny", "--config", str(over),
            "--out", str(out), "--no-progress"]
    assert main(args + ["--estimate"]) == 0
    assert "Expected run time on this machine" in capsys.readouterr().out
    assert not out.exists()  # --estimate plays nothing
    assert main(args) == 0
    text = (out / "summary.md").read_text()
    assert "win % [95% CI]" in text and "Expected before playing" in text
    for name in ("odds_table1.csv", "odds_table1_differences.csv", "odds_table1.png",
                 "estimate.json", "games.pgn"):
        assert (out / name).is_file(), name
    rows = (out / "games.csv").read_text().splitlines()
    assert len(rows) == 1 + 4
    # resuming a finished run plays nothing and keeps the games
    assert main(args) == 0
    assert (out / "games.csv").read_text().splitlines() == rows
