"""Smoke tests of the ``zerochess bench`` harness (``zerochess.bench``): tiny nets, B=2, S=4."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import types
from pathlib import Path

import chess
import numpy as np
import pytest

from zerochess import bench
from zerochess.bench import lc0_peer, peer_mctx_pgx, throughput
from zerochess.cli import main

RATIO_RE = re.compile(r"ratio_vs_mctx_pgx: \d+\.\d{2}")
REPO = Path(__file__).resolve().parents[1]


def test_positions_are_seeded_middlegames() -> None:
    a = throughput.bench_positions(6, seed=3)
    b = throughput.bench_positions(6, seed=3)
    assert [x.fen() for x in a] == [x.fen() for x in b]
    assert all(not x.is_game_over() and len(x.move_stack) >= 20 for x in a)
    assert [x.fen() for x in throughput.fill(a, 8)][6:] == [a[0].fen(), a[1].fen()]


@pytest.mark.parametrize("fen", [
    "r3k2r/pPpp1ppp/8/3Pp3/8/8/P1PP1PPP/R3K2R w KQkq e6 0 1",  # ep, castling, promotions
    "r3k2r/pppp1ppp/8/8/3pP3/8/PPPP1PpP/R3K2R b KQkq e3 0 1",  # black: ep, castling, promos
    "1n2k3/P7/8/8/8/8/6p1/4K2R w K - 0 1",  # capture- and push-promotions
])
def test_move_to_action_matches_pgx_legal_mask(fen: str) -> None:
    board = chess.Board(fen)
    state = peer_mctx_pgx.states_from_fens([fen])
    mask = np.asarray(state.legal_action_mask[0])
    actions = {peer_mctx_pgx.move_to_action(board, m) for m in board.legal_moves}
    assert len(actions) == board.legal_moves.count()
    assert actions == set(np.flatnonzero(mask).tolist())


def test_harness_figures_and_ratio_line(capsys: pytest.CaptureFixture[str]) -> None:
    from zerochess.chess.expander import Expander

    lines: list[str] = []
    with Expander(0) as expander:
        res = throughput.run_bench([2], [4], net=(1, 8), ratio_point=(2, 4), builtin=False,
                              num_positions=3, host_leaves=16, expander=expander,
                              log=lines.append)
    (point,) = res["ours"]
    assert point["batch"] == 2 and point["sims"] == 4 and point["dropped"] == 0
    for key in ("compile_s", "init_s", "run_s", "sims_per_s", "sims_per_s_excl_init"):
        assert point[key] > 0, key
    peer = res["peer"]
    assert peer["sims_per_s"] > 0 and peer["compile_s"] > 0 and peer["actions_legal"]
    assert res["ratio"] > 0 and res["peak_rss_mb"] > 0
    assert 0 < res["bytes_per_node"]["ours"] < res["bytes_per_node"]["mctx_dense_4672"]
    assert res["bytes_per_node"]["mctx_dense_4672"] == 5 * 4 + 6 * 4 * 4672
    hb = res["host_boundary"]
    assert hb["expand_batch_us_per_leaf"] > 0 and hb["python_chess_us_per_leaf"] > 0
    assert hb["ratio"] > 0
    throughput.print_report(res, "net body: SE-ResNet 1x8")
    out = capsys.readouterr().out.strip().splitlines()
    assert RATIO_RE.fullmatch(out[-1]), out[-1]
    assert out[-1] == throughput.ratio_line(res["ratio"])
    assert throughput.ratio_line(None) == "ratio_vs_mctx_pgx: n/a"


def test_vs_lc0_delegates_or_says_missing(monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(lc0_peer, "find_lc0", lambda: None)
    assert main(["bench", "--vs-lc0", "--quick"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: bench --vs-lc0 needs the lc0 program") and \
        lc0_peer.INSTALL_HINT in err and len(err.splitlines()) == 1
    args = types.SimpleNamespace(quick=True, vs_lc0=True, batch=None, sims=None, json=None)
    seen: list[object] = []
    monkeypatch.setattr(lc0_peer, "main", lambda a: seen.append(a) or 0)
    assert bench.main(args) == 0 and seen == [args]


def test_missing_pgx_is_one_error_line(monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pgx" else find_spec(name, *a))
    assert main(["bench", "--quick"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "pip install 'pgx==2.6.0'" in err
    assert len(err.splitlines()) == 1


@pytest.mark.slow
def test_bench_quick_end_to_end(tmp_path: Path) -> None:
    out_json = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from zerochess.cli import main; "
         "sys.exit(main(['bench', '--quick', '--json', sys.argv[1]]))", str(out_json)],
        cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    last = proc.stdout.strip().splitlines()[-1]
    assert RATIO_RE.fullmatch(last), last
    assert out_json.exists()


# --- multi-leaf bench modes at tiny sizes (zerochess.bench.leaves / leaf_quality / single) ---


def _figures(path: Path) -> dict:
    import json

    return json.loads(path.read_text())


@pytest.mark.parametrize("mode", ["--leaves", "--gpu-grid"])
def test_leaves_and_gpu_grid_modes_run_tiny(mode: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from zerochess.bench import leaves

    out = tmp_path / "leaves.json"
    assert main(["bench", mode, "--tiny", "--json", str(out)]) == 0
    figures = _figures(out)
    grid = leaves.GPU_TINY if mode == "--gpu-grid" else leaves.TINY
    points = figures["points"]
    expected = (len(grid["points"]) if mode == "--gpu-grid"
                else len(grid["batches"]) * len(grid["leaves"]))
    assert len(points) == expected * len(grid["models"])
    for p in points:
        assert p["sims_per_s"] > 0 and p["dropped"] == 0
        # every step's network batch holds at least the rows that needed it, and at most R
        assert 0 < p["rows_used"] <= p["rows_available"] <= p["rows_capacity"]
        if p["leaves"] == 1:
            assert p["collisions"] == 0  # nothing is in flight with one leaf per step
        if mode == "--gpu-grid":
            assert p["network_only"]["rows"] == p["batch"] * p["leaves"]
            assert p["ratio_search_to_network"] > 0
    # the trees of B=1024, N=10,001 at <= 1,024 bytes per node (and the node arrays alone
    # are more than 0)
    assert 0 < figures["tree_memory_gib_b1024_n10001"] <= 1024 * 10_001 * 1024 / 2**30
    assert "tree memory at B=1024" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.lc0
@pytest.mark.parametrize("mode", [["--leaf-quality"], ["--vs-lc0", "--single"]])
def test_lc0_modes_run_tiny(mode: list[str], tmp_path: Path, maia: None,
                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "lc0.json"
    assert main(["bench", *mode, "--tiny", "--json", str(out)]) == 0
    figures = _figures(out)
    lines = capsys.readouterr().out.strip().splitlines()
    if "--single" in mode:
        assert re.fullmatch(r"ratio_vs_lc0_single: \d+\.\d\d", lines[-1]), lines[-1]
        row = figures["rows"][0]
        assert row["ratio"] > 0 and 0.0 <= row["agreement"] <= 1.0
        assert float(lines[-1].split()[-1]) == pytest.approx(figures["ratio"], abs=0.01)
    else:
        rows = {r["leaves"]: r for r in figures["rows"]}
        # L = 1 compared with itself: identical searches
        assert rows[1]["vs_one_leaf"]["same_best"] == 1.0
        assert rows[1]["vs_one_leaf"]["kl_mean"] < 0.01  # only the smoothing of KL
        assert 0.0 <= rows[4]["vs_lc0_default"]["same_best"] <= 1.0
        assert figures["lc0_batching"]["kl_mean"] >= 0.0
