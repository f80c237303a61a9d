"""``zerochess bench --analysis`` (``zerochess.bench.analysis``) at tiny size.

References: the Lichess CSV read with the csv module and python-chess (legality, game
ends); the engine's JSON and lc0's moves checked with python-chess; the figures
recomputed from the raw JSON the bench writes.
"""

from __future__ import annotations

import argparse
import csv
import json
from importlib import resources

import chess
import pytest

from zerochess.bench import analysis
from zerochess.errors import UserError
from zerochess.neural import load_model

FIRST_PUZZLE = ("000rZ", "2kr1b1r/p1p2pp1/2pqb3/7p/3N2n1/2NPB3/PPP2PPP/R2Q1RK1 w - - 2 13",
                ["d4e6", "d6h2"])  # the first row of Lichess's CC0 puzzle sample


def _args(**kw) -> argparse.Namespace:
    base = dict(quick=False, gpu=False, positions=None, visits=None, slots=None, queued=None,
                probes=None, lc0_positions=None, leaves_per_step=None, workers=None, json=None)
    return argparse.Namespace(**{**base, **kw})


def test_puzzle_sample_is_shipped_and_read():
    puzzles = analysis.read_puzzles()
    assert len(puzzles) == 1499
    assert puzzles[0] == FIRST_PUZZLE
    text = resources.files("zerochess.bench").joinpath("data", "README.md").read_text()
    assert "CC0" in text
    for pid, fen, moves in puzzles:
        board = chess.Board(fen)
        assert board.is_valid(), pid
        for uci in moves:
            assert chess.Move.from_uci(uci) in board.legal_moves, pid
            board.push_uci(uci)


def test_positions_without_a_model_are_the_puzzles_moves():
    rows = list(csv.DictReader(
        resources.files("zerochess.bench").joinpath("data", "lichess_puzzles_sample.csv")
        .read_text().splitlines()))
    positions = analysis.analysis_positions(50, model=None)
    for row, pos in zip(rows, positions, strict=False):
        assert pos.puzzle == row["PuzzleId"] and pos.fen == row["FEN"]
        moves = row["Moves"].split()
        # all of them, or all but the last when the last one ends the game (mate)
        board = chess.Board(row["FEN"])
        for uci in moves:
            board.push_uci(uci)
        expected = moves[:-1] if board.is_game_over(claim_draw=False) else moves
        assert list(pos.moves) == expected


def test_positions_have_full_history_are_legal_and_seeded():
    model = load_model("builtin")
    count = 40
    a = analysis.analysis_positions(count, model)
    b = analysis.analysis_positions(count, model)
    c = analysis.analysis_positions(count, model, seed=1)
    assert a == b and a != c
    puzzles = analysis.read_puzzles()
    for i, pos in enumerate(a):
        pid, fen, moves = puzzles[i]
        assert pos.puzzle == pid and pos.fen == fen
        assert list(pos.moves[:len(moves) - 1]) == moves[:-1]
        board = chess.Board(fen)
        for uci in pos.moves:
            assert chess.Move.from_uci(uci) in board.legal_moves
            board.push_uci(uci)
        assert not board.is_game_over(claim_draw=False)
        assert pos.board().fen() == board.fen()
        # full history (no position here has only game-ending moves)
        assert analysis.HISTORY_PLIES <= len(pos.moves)
        assert len(pos.moves) <= analysis.HISTORY_PLIES + analysis.EXTRA_PLIES
    lengths = {len(p.moves) for p in a}
    assert len(lengths) > 3  # the extra plies vary


def test_positions_beyond_the_sample_cycle_with_other_continuations():
    model = load_model("builtin")
    n = len(analysis.read_puzzles())
    positions = analysis.analysis_positions(n + 3, model)
    for k in range(3):
        assert positions[n + k].fen == positions[k].fen
    assert [positions[n + k].moves for k in range(3)] != [positions[k].moves for k in range(3)]


def test_lc0_configurations_cover_threads_and_processes():
    names = [(c.processes, c.threads) for c in analysis.lc0_configs(2)]
    assert names == [(1, 1), (1, 2), (2, 1)]
    assert [(c.processes, c.threads) for c in analysis.lc0_configs(1)] == [(1, 1)]
    assert len(analysis.lc0_configs(16)) == 17


def test_plan_sizes_and_bad_values():
    full = analysis.Plan.from_args(_args())
    assert (full.positions, full.visits, full.queued, full.lc0_positions) == (1000, 400, 1000,
                                                                            1000)
    quick = analysis.Plan.from_args(_args(quick=True))
    assert quick.positions < full.positions and quick.slots == analysis.QUICK_SLOTS
    gpu = analysis.Plan.from_args(_args(gpu=True))
    assert (gpu.positions, gpu.slots, gpu.lc0_positions) == (16_000, (256, 1024), 1000)
    tiny = analysis.Plan.from_args(_args(positions=5, lc0_positions=50, slots=[3]))
    assert (tiny.positions, tiny.lc0_positions, tiny.slots) == (5, 5, (3,))
    for bad in (dict(positions=-1), dict(visits=-2), dict(slots=[0]), dict(queued=-1),
                dict(probes=-3)):
        with pytest.raises(UserError):
            analysis.Plan.from_args(_args(**bad))


def test_percentile_and_ratio_line():
    assert analysis.percentile([1.0, 2.0, 3.0, 4.0], 50) == pytest.approx(2.5)
    assert analysis.percentile([5.0] * 10 + [100.0], 99) == pytest.approx(90.5)
    assert analysis.percentile([], 50) is None
    assert analysis.ratio_line(3.14159) == "ratio_vs_lc0_analysis: 3.14"
    assert analysis.ratio_line(None) == "ratio_vs_lc0_analysis: n/a"


def test_missing_lc0_is_one_error_line(monkeypatch):
    from zerochess.bench import lc0_peer

    monkeypatch.setattr(lc0_peer, "find_lc0", lambda: None)
    with pytest.raises(UserError, match="install them with"):
        analysis.main(_args(positions=2))


@pytest.mark.lc0
def test_tiny_run_end_to_end(maia, tmp_path, capsys):
    out = tmp_path / "bench.json"
    args = _args(positions=3, visits=8, slots=[2], queued=4, probes=2, json=str(out))
    assert analysis.main(args) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    res = json.loads(out.read_text())
    assert lines[-1] == analysis.ratio_line(res["ratio_vs_lc0_analysis"])
    [ours] = res["zerochess"]
    theirs = res["lc0"]["best"]
    assert ours["slots"] == 2 and ours["positions"] == 3
    assert ours["responses_not_at_max_visits"] == 0
    assert ours["positions_per_s"] == pytest.approx(3 / ours["wall_s"])
    assert theirs["positions_per_s"] == pytest.approx(3 / theirs["wall_s"])
    assert res["ratio_vs_lc0_analysis"] == pytest.approx(
        ours["positions_per_s"] / theirs["positions_per_s"])
    calibration = res["lc0"]["calibration"]
    assert [(c["processes"], c["threads"]) for c in calibration] == [
        (c.processes, c.threads) for c in analysis.lc0_configs(analysis.usable_cores())]
    best = max(calibration, key=lambda c: c["positions_per_s"])
    assert (theirs["processes"], theirs["threads"]) == (best["processes"], best["threads"])
    assert theirs["nodes_mean"] >= 8
    for pos, mine, lc0 in zip(res["positions"], ours["best_moves"], theirs["best_moves"],
                              strict=True):
        board = chess.Board(pos["fen"])
        for uci in pos["moves"]:
            board.push_uci(uci)
        assert chess.Move.from_uci(mine) in board.legal_moves
        assert chess.Move.from_uci(lc0) in board.legal_moves
    lat = res["latency"]
    assert len(lat["idle_s"]) == len(lat["loaded_s"]) == 2 and lat["queued"] == 4
    assert all(t > 0 for t in lat["idle_s"] + lat["loaded_s"])
    assert lat["p50_s"] == pytest.approx(sum(lat["loaded_s"]) / 2)
    assert 0 <= lat["low_priority_searched"] <= 4
