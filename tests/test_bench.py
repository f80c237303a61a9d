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


@pytest.mark.tier2  # runs the mctx + pgx peer
def test_peer_runs_sharded_on_the_same_positions() -> None:
    """The peer's threaded layout: legal actions for every row, figures filled in."""
    boards = throughput.bench_positions(3)
    res = peer_mctx_pgx.run_peer(boards, 2, 2, 1, 8, shards=2)
    assert res["shards"] == 2 and res["batch"] == 2 and res["actions_legal"]
    assert res["sims_per_s"] == pytest.approx(2 * 2 / res["search_s"])
    assert res["compile_s"] > 0 and res["cpu_utilisation"] > 0


@pytest.mark.tier2  # a whole bench run
def test_harness_figures_curve_and_ratio_lines(capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The curve's bookkeeping: every layout tried, the best one counts, ratios per S, the
    smallest ratio and the ratio point (the peer's speed is faked here: one real peer
    search per layout would compile four programs; see the test above and the slow
    end-to-end test)."""
    from zerochess.chess.expander import Expander

    fake_speed = {(2, 1): 50.0, (2, 2): 80.0, (4, 1): 40.0, (4, 2): 30.0}  # (S, shards)

    def fake_peer(boards, batch, sims, blocks, filters, shards=1):
        return {"batch": batch, "sims": sims, "shards": shards, "actions_legal": True,
                "sims_per_s": fake_speed[(sims, shards)], "cpu_utilisation": 1.0 * shards,
                "compile_s": 1.0, "search_s": 1.0, "net": f"se-resnet {blocks}x{filters}"}

    monkeypatch.setattr(peer_mctx_pgx, "run_peer", fake_peer)
    monkeypatch.setattr(throughput, "peer_layouts", lambda: [1, 2])
    lines: list[str] = []
    with Expander(0) as expander:
        res = throughput.run_bench([2], [4], net=(1, 8), curve_batch=2, curve_sims=[2, 4],
                                   builtin=False, num_positions=3, host_leaves=16,
                                   expander=expander, log=lines.append)
    grid = [p for p in res["ours"] if (p["batch"], p["sims"]) == (2, 4)]
    assert len(grid) == 1 and grid[0]["dropped"] == 0
    for key in ("compile_s", "init_s", "run_s", "sims_per_s", "sims_per_s_excl_init"):
        assert grid[0][key] > 0, key
    assert [c["sims"] for c in res["curve"]] == [2, 4]  # S=2 measured for ours too
    for c, best_layout in zip(res["curve"], (2, 1), strict=True):
        layouts = c["peer"]["layouts"]
        assert [t["shards"] for t in layouts] == [1, 2]
        best = c["peer"]["best"]
        assert best["shards"] == best_layout
        assert best["sims_per_s"] == max(fake_speed[(c["sims"], k)] for k in (1, 2))
        assert c["ratio"] == pytest.approx(c["ours"]["sims_per_s"] / best["sims_per_s"])
        assert c["ours"]["sims"] == c["sims"] and c["ours"]["spec"] == "resnet:1x8"
        assert c["backend"] == res["backend"]
    assert res["ratio_point"] == {"batch": 2, "sims": 4}  # 64 is not on this curve
    assert res["ratio_vs_mctx_pgx"] == res["curve"][1]["ratio"]
    assert res["min_ratio_vs_mctx_pgx"] == min(c["ratio"] for c in res["curve"])
    assert res["peak_rss_mb"] > 0
    assert 0 < res["bytes_per_node"]["ours"] < res["bytes_per_node"]["mctx_dense_4672"]
    assert res["bytes_per_node"]["mctx_dense_4672"] == 5 * 4 + 6 * 4 * 4672
    hb = res["host_boundary"]
    assert hb["expand_batch_us_per_leaf"] > 0
    assert set(hb["python_chess_us_per_leaf"]) == {"fen", "copy", "push_pop"}
    from zerochess.bench import device_search

    points = [{"model": "builtin", "batch": 64, "ratio": 9.0},
              {"model": "builtin", "batch": 256, "ratio": 1.5}]
    res["ratio_device_vs_host_search"] = device_search.ratio_at({"points": points})
    assert res["ratio_device_vs_host_search"] == 1.5  # the point at B = 256
    throughput.print_report(res, "net body: SE-ResNet 1x8")
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-3] == "ratio_device_vs_host_search: 1.50"
    assert RATIO_RE.fullmatch(out[-1]), out[-1]
    assert out[-1] == throughput.ratio_line(res["ratio_vs_mctx_pgx"])
    assert out[-2] == "min_ratio_vs_mctx_pgx: " + f"{res['min_ratio_vs_mctx_pgx']:.2f}"
    assert f"ratio_vs_mctx_pgx_at_S2: {res['curve'][0]['ratio']:.2f}" in out
    assert throughput.ratio_line(None) == "ratio_vs_mctx_pgx: n/a"


def test_peer_layouts_follow_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    from zerochess.bench import record

    monkeypatch.setattr(record, "usable_cores", lambda: 1)
    assert throughput.peer_layouts() == [1]
    monkeypatch.setattr(record, "usable_cores", lambda: 2)
    assert throughput.peer_layouts() == [1, 2]  # on this CPU backend
    monkeypatch.setattr(record, "usable_cores", lambda: 16)
    assert throughput.peer_layouts() == [1, 4]  # as zerochess's own default shards


def test_peer_shards_must_divide_the_batch() -> None:
    boards = throughput.bench_positions(2)
    with pytest.raises(ValueError, match="divide"):
        peer_mctx_pgx.run_peer(boards, 3, 2, 1, 8, shards=2)


def test_host_boundary_baselines_do_the_same_work() -> None:
    """Each plain python-chess baseline plays the same moves and sees the same legal moves
    and game ends as python-chess itself; push/pop leaves its resident boards unchanged."""
    import random

    from zerochess.bench import host_boundary

    rows = throughput.bench_positions(4) + [chess.Board("7k/8/8/8/8/8/5Q2/6K1 w - - 0 1")]
    rng = random.Random(1)
    moves = [rng.choice(list(b.legal_moves)) for b in rows]
    moves[-1] = chess.Move.from_uci("f2f7")  # stalemates the black king
    seen: list[tuple[str, int, bool]] = []
    real_push = chess.Board.push

    def spy(board: chess.Board, move: chess.Move) -> None:
        real_push(board, move)
        seen.append((board.fen(), board.legal_moves.count(), board.is_game_over()))

    fns = host_boundary.baselines(rows, moves)
    want = []
    for b, m in zip(rows, moves, strict=True):
        child = b.copy()
        child.push(m)
        want.append((child.fen(), child.legal_moves.count(), child.is_game_over()))
    assert want[-1][2]  # the stalemate is a game end
    for name, fn in fns.items():
        seen.clear()
        chess.Board.push = spy  # type: ignore[method-assign]
        try:
            fn()
        finally:
            chess.Board.push = real_push  # type: ignore[method-assign]
        assert seen == want, name
    fns["push_pop"]()
    fens = [b.fen() for b in rows]
    hb = host_boundary.measure(rows, leaves=10, workers=False)
    assert [b.fen() for b in rows] == fens
    pc = hb["python_chess_us_per_leaf"]
    assert hb["fastest_python_chess"] == min(("copy", "push_pop"), key=pc.__getitem__)
    assert hb["ratio_vs_fastest"] == pytest.approx(
        hb["expand_batch_us_per_leaf"] / pc[hb["fastest_python_chess"]])
    assert "push/pop" in host_boundary.describe(hb)


def test_record_header_names_machine_versions_commit_and_model(tmp_path: Path) -> None:
    import hashlib
    import json

    from zerochess.bench import record
    from zerochess.provenance import git_info

    net = tmp_path / "n.pb.gz"
    net.write_bytes(b"x" * 100)
    head = record.header("test", [str(net), "builtin"], note="shared machine",
                         argv=["bench", "--quick"])
    record.write(tmp_path / "r.json", head, {"figure": float("inf"), "n": np.int64(3)})
    data = json.loads((tmp_path / "r.json").read_text())
    rec = data["record"]
    assert rec["mode"] == "test" and rec["command"] == "zerochess bench --quick"
    assert rec["note"] == "shared machine" and rec["wall_s"] >= 0
    assert rec["machine"]["jax"] and rec["machine"]["jax_backend"] == "cpu"
    assert rec["machine"]["usable_cores"] >= 1 and rec["machine"]["cpu"]
    assert rec["provenance"]["git_commit"] == git_info()["git_commit"]
    assert "git_dirty" in rec["provenance"] and rec["provenance"]["jax"]
    assert rec["models"][0]["model_sha256"] == hashlib.sha256(net.read_bytes()).hexdigest()
    assert len(rec["models"][1]["model_sha256"]) == 64
    assert len(rec["load_average_start"]) == 3 and len(rec["load_average_end"]) == 3
    assert data["figure"] == "inf" and data["n"] == 3


def test_modes_dispatch(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    seen: list[str] = []
    for module in [*bench.MODES.values(), bench.DEFAULT_MODE]:
        mod = importlib.import_module(module)
        monkeypatch.setattr(mod, "main", lambda a, m=module: seen.append(m) or 0)
    base = dict(quick=True, batch=None, sims=None, json=None, note=None)
    flags = {f for key in bench.MODES for f in key.split("+")}
    for key, module in bench.MODES.items():
        on = set(key.split("+"))
        args = types.SimpleNamespace(**base, **{f: f in on for f in flags})
        assert bench.main(args) == 0 and seen[-1] == module, key
    assert bench.main(types.SimpleNamespace(**base, **{f: False for f in flags})) == 0
    assert seen[-1] == bench.DEFAULT_MODE
    # --single only means something with --vs-lc0; alone it is the default run
    assert bench.main(types.SimpleNamespace(**base, **{f: f == "single" for f in flags})) == 0
    assert seen[-1] == bench.DEFAULT_MODE


def test_selfplay_quick_runs_the_first_point_alone(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """``--device-search --selfplay --quick`` runs ``SELFPLAY``'s first point (minutes),
    without ``--quick`` every point."""
    from zerochess.bench import device_search

    ran: list[tuple] = []
    row = {"host": {"positions_per_s": 1.0}, "device_loop": {"positions_per_s": 2.0}}
    monkeypatch.setattr(device_search, "selfplay_ratio",
                        lambda points: ran.append(points) or [row])
    for quick in (True, False):
        args = types.SimpleNamespace(quick=quick, selfplay=True, json=None, note=None,
                                     tiny=False, profile=None)
        assert device_search.main(args) == 0
    assert ran == [device_search.SELFPLAY[:1], device_search.SELFPLAY]
    assert len(device_search.SELFPLAY) > 1
    assert "ratio_device_vs_host_selfplay: 2.00" in capsys.readouterr().out


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
    import json

    out_json = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from zerochess.cli import main; "
         "sys.exit(main(['bench', '--quick', '--json', sys.argv[1]]))", str(out_json)],
        cwd=REPO, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert RATIO_RE.fullmatch(lines[-1]), lines[-1]
    assert re.fullmatch(r"min_ratio_vs_mctx_pgx: \d+\.\d{2}", lines[-2]), lines[-2]
    assert any(line.startswith("ratio_vs_mctx_pgx_at_S16: ") for line in lines)
    data = json.loads(out_json.read_text())
    assert [c["sims"] for c in data["curve"]] == [16, 64]
    assert data["record"]["provenance"]["git_commit"] is not None
    assert float(lines[-1].split()[-1]) == pytest.approx(data["ratio_vs_mctx_pgx"], abs=0.01)


# --- multi-leaf bench modes at tiny sizes (zerochess.bench.leaves / leaf_quality / single) ---


def _figures(path: Path) -> dict:
    import json

    return json.loads(path.read_text())


@pytest.mark.tier2  # a whole bench run
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


# --- start-up (zerochess.bench.startup) -------------------------------------------------------

def test_startup_runs_cold_then_warm_on_one_new_cache(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Each command's runs share one new, empty cache directory (the first run finds it
    empty, each later one what the runs before left), never the machine's, removed at the
    end; a run that fails or never says it is ready is an error quoting its output.
    Stand-in commands: the real ones compile the search programs (minutes on CI)."""
    import os

    from zerochess.bench import startup

    log = tmp_path / "log"
    probe = ("import os, sys; d = os.environ['ZEROCHESS_JAX_CACHE']; n = len(os.listdir(d)); "
             "open(os.path.join(d, f'f{n}'), 'w').close(); "
             "open(sys.argv[1], 'a').write(f'{sys.argv[2]} {n} {d}\\n'); "
             "print(sys.stdin.read().split(), 'ready')")
    commands = [startup.Command(name, (sys.executable, "-c", probe, str(log), name),
                                stdin="uci\nquit\n", ready="ready") for name in ("a", "b")]
    figures = startup.run(commands, warm_runs=2, log=print)["commands"]
    rows = [line.split() for line in log.read_text().splitlines()]
    assert [(name, n) for name, n, _ in rows] == [("a", "0"), ("a", "1"), ("a", "2"),
                                                  ("b", "0"), ("b", "1"), ("b", "2")]
    caches = {d for _, _, d in rows}
    assert len(caches) == 2 and not any(Path(d).exists() for d in caches)
    assert os.environ.get("ZEROCHESS_JAX_CACHE") not in caches
    assert [r["run"] for r in figures["a"]["runs"]] == ["cold", "warm 1", "warm 2"]
    assert capsys.readouterr().out.splitlines()[0].startswith("a cold: ")
    assert all(r["wall_s"] > 0 and r["cpu_user_s"] >= 0 for r in figures["a"]["runs"])
    warm = sorted(r["wall_s"] for r in figures["b"]["runs"][1:])
    assert figures["b"]["warm_wall_s_median"] == pytest.approx(sum(warm) / 2)
    assert figures["a"]["command"].endswith("(stdin: uci, quit)")
    failing = startup.Command("bad", (sys.executable, "-c", "print('no'); raise SystemExit(3)"),
                              ready="ready")
    with pytest.raises(RuntimeError, match="bad: exit status 3.*no"):
        startup.run_once(failing, dict(os.environ))
    silent = startup.Command("silent", (sys.executable, "-c", "print('up')"), ready="readyok")
    with pytest.raises(RuntimeError, match="no 'readyok'"):
        startup.run_once(silent, dict(os.environ))
    with pytest.raises(ValueError):
        startup.run(commands, warm_runs=0)
    assert [c.name for c in startup.commands()] == ["analyse", "uci", "analysis", "search"]
    assert [r["ready_s"] <= r["wall_s"] for r in figures["a"]["runs"]] == [True] * 3
    both = startup.run(commands[:1], warm_runs=1, log=print, baseline_src=str(tmp_path))
    assert both["baseline"]["src"] == str(tmp_path)
    assert [r["run"] for r in both["baseline"]["commands"]["a"]["runs"]] == ["cold", "warm 1"]
    rows = [line.split() for line in log.read_text().splitlines()][6:]
    # interleaved, each source on a cache of its own: cold, cold, warm, warm
    assert [n for _, n, _ in rows] == ["0", "0", "1", "1"] and len({d for *_, d in rows}) == 2
    assert startup.commands(64)[0].argv[-3:] == ("--visits", "64", "--json")


def test_startup_and_warmup_run_the_readmes_pure_search_verbatim() -> None:
    """``bench --startup``'s and ``zerochess warmup search``'s pure search is the README's
    snippet as a user copies it: a warm-up of anything else leaves that snippet to compile
    (the fresh-clone walk-through, docs/WALKTHROUGH.md)."""
    from zerochess.bench import startup

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert startup.README_SEARCH.strip() in [b.strip() for b in blocks]
    assert startup.SEARCH_SCRIPT.startswith(startup.README_SEARCH)
    search = next(c for c in startup.commands() if c.name == "search")
    assert search.argv[-1] == startup.SEARCH_SCRIPT
