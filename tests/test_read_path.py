"""Every reader of a search reads it the same way (``zerochess.search.view``): the UCI
engine's VerboseMoveStats and info lines, the analysis engine's moveInfos and
``Searcher.results`` are checked against one plain-numpy computation from the raw tree
arrays with lc0's formulas (/work/shared/reference.md: cpuct(N), U, FPU reduction, Q =
W - L + DrawScore * D, the best move order), in the middle of a multi-leaf search (visits
in flight, read between two steps) and at its end. A reader that drifted from the others
(its own PUCT copy, another Q sign, another order) fails here.
"""

from __future__ import annotations

import json
import math
import re

import chess
import jax
import numpy as np
import pytest

from zerochess.analysis import report
from zerochess.analysis.protocol import parse_line
from zerochess.analysis.scheduler import JobQueue
from zerochess.analysis.settings import EngineSettings
from zerochess.chess.policy_map import move_to_index
from zerochess.neural import load_model
from zerochess.search import view
from zerochess.search.api import Searcher
from zerochess.search.config import SearchConfig
from zerochess.search.results import results_from_view
from zerochess.uci.driver import PV_LENGTH, SearchDriver
from zerochess.uci.info import thinking_infos, verbose_move_stats

FEN = "r1bq1rk1/pp2bppp/2n2n2/3p4/3P4/2NB1N2/PP3PPP/R1BQ1RK1 b - - 3 10"
CONFIG = SearchConfig(draw_score=0.1, fpu_value=0.44)  # a non-zero draw score: Q's sign


@pytest.fixture(scope="module")
def driver():
    # the shapes of tests/test_uci_driver.py (the UCI engine's defaults): shared programs
    drv = SearchDriver(load_model("builtin"), 2048,
                       searcher_kwargs={"leaves_per_step": 16, "cache_size": 4096})
    drv.prepare(1)
    return drv


def reference(tree, config: SearchConfig) -> dict[str, np.ndarray]:
    """lc0's root statistics from the raw arrays of one tree (numpy float64)."""
    nl = int(tree.num_legal[0])
    start = int(tree.edge_start[0])
    child = tree.edges.child[start:start + nl].astype(np.int64)
    exists = child >= 0
    safe = np.maximum(child, 0)
    n = np.where(exists, tree.visits[safe], 0).astype(np.float64)
    in_flight = np.where(exists, tree.in_flight[safe], 0).astype(np.float64)
    visited = n > 0
    wl = np.where(visited, tree.wl_sum[safe] / np.maximum(n, 1), 0.0)
    d = np.where(visited, tree.d_sum[safe] / np.maximum(n, 1), 0.0)
    lost = visited & (tree.upper[safe] == -1)
    p = np.where(lost, 0.0, tree.root_prior[:nl].astype(np.float64))
    q = wl + config.draw_score * d
    n_parent = float(tree.visits[0])
    cpuct = config.cpuct + config.cpuct_factor * math.log(
        (n_parent + config.cpuct_base) / config.cpuct_base)
    u = cpuct * math.sqrt(max(n_parent - 1.0, 1.0)) * p / (1.0 + n + in_flight)
    # the parent's Q from its own side to move: -(W - L) of the mover into it, + draw
    parent_q = (-tree.wl_sum[0] + config.draw_score * tree.d_sum[0]) / max(n_parent, 1.0)
    fpu = parent_q - config.fpu_value * math.sqrt(p[visited].sum())
    shown = np.where(visited, q, fpu)
    raw = tree.raw_wdl[safe].astype(np.float64)
    # lc0's best move: most visits, then Q, then P (no proven results in this position)
    order = sorted(range(nl), key=lambda i: (-n[i], -(q[i] if visited[i] else -np.inf), -p[i]))
    return dict(moves=tree.edges.move[start:start + nl].astype(np.int64), n=n,
                in_flight=in_flight, wl=wl, d=d, p=p, q=q, u=u, fpu=fpu, shown=shown,
                s=shown + u, v=np.where(visited, raw[:, 2] - raw[:, 0], np.nan),
                order=np.array(order), root_n=n_parent)


_FIELD = re.compile(r"\((\w+):\s*([-+0-9.]+|-\.-+)%?\)")


def parse_verbose(lines: list[str]) -> dict[str, dict[str, float | None]]:
    """lc0's VerboseMoveStats lines -> {move: {N, inflight, P, WL, D, M, Q, U, S, V}}."""
    out = {}
    for line in lines[:-1]:
        fields = {k: None if v.startswith("-.") else float(v) for k, v in _FIELD.findall(line)}
        n = re.search(r"N:\s*(\d+) \(\+\s*(\d+)\)", line)
        fields["N"], fields["inflight"] = int(n[1]), int(n[2])
        fields["P"] = fields["P"] / 100
        out[line.split()[0]] = fields
    return out


def check_against_reference(result, ref, board: chess.Board) -> None:
    uci = {board.uci(m, chess960=True): i for i, m in enumerate(result.moves)}
    stats = parse_verbose(verbose_move_stats(result))
    assert set(stats) == set(uci)
    assert int(verbose_move_stats(result)[-1].split("N:")[1].split()[0]) == ref["root_n"]
    for move, i in uci.items():
        got = stats[move]
        assert got["N"] == ref["n"][i] and got["inflight"] == ref["in_flight"][i], move
        assert got["P"] == pytest.approx(ref["p"][i], abs=6e-5), move
        assert got["Q"] == pytest.approx(ref["shown"][i], abs=2e-5), move
        assert got["U"] == pytest.approx(ref["u"][i], abs=2e-5), move
        assert got["S"] == pytest.approx(ref["s"][i], abs=3e-5), move
        if ref["n"][i] > 0:
            assert got["WL"] == pytest.approx(ref["wl"][i], abs=2e-5), move
            assert got["V"] == pytest.approx(ref["v"][i], abs=2e-4), move
        else:
            assert got["WL"] is None and got["V"] is None
    # the same fields on the result itself
    np.testing.assert_allclose(result.u, ref["u"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(result.s, ref["s"], rtol=1e-5, atol=1e-6)
    assert result.fpu == pytest.approx(ref["fpu"], abs=1e-5)
    assert result.best_index == ref["order"][0]
    np.testing.assert_array_equal(result.order()[:5], ref["order"][:5])


def test_readers_agree_mid_search_with_visits_in_flight(driver):
    """Between two steps of a 16-leaf, two-group search the UCI verbose stats (the
    engine's snapshot) equal the reference from the raw arrays at that moment, visits in
    flight included (U counts them)."""
    board = chess.Board(FEN)
    searcher: Searcher = driver.searcher
    batch = searcher.init([board], CONFIG, seed=4)
    seen: list[tuple] = []

    def observe(shards) -> bool:
        state = shards[0]
        raw = jax.tree.map(lambda a: np.asarray(a[0]), jax.device_get(state.tree))
        read = jax.device_get(view.read_trees(state, view.best_rows(1, 1), PV_LENGTH))
        if raw.in_flight.sum() > 0 and raw.visits[0] > 40:
            seen.append((raw, read))
        return len(seen) >= 2

    searcher.run(batch, 400, observe=observe)
    assert seen, "no step with visits in flight"
    for raw, read in seen:
        result = results_from_view([board], read)[0]
        assert result.in_flight.sum() > 0
        check_against_reference(result, reference(raw, CONFIG), board)


def test_uci_analysis_and_results_agree_after_a_search(driver):
    """One finished search read by the UCI driver (info line, verbose stats), by the
    analysis engine's read (``read_tree``, moveInfos) and by ``Searcher.results``: the same
    numbers, equal to the reference."""
    board = chess.Board(FEN)
    driver.forget()
    driver.start(board, CONFIG, seed=9)
    driver.search(300, None, lambda _: False)
    state = driver.batch.shards[0]
    raw = jax.tree.map(lambda a: np.asarray(a[0]), jax.device_get(state.tree))
    ref = reference(raw, CONFIG)

    uci = driver.result()
    check_against_reference(uci, ref, board)
    results = driver.searcher.results(driver.batch)[0]
    check_against_reference(results, ref, board)
    slot = results_from_view([board], jax.device_get(view.read_tree(
        state, np.int32(0), np.arange(len(uci.moves) + 1, dtype=np.int32) % len(uci.moves),
        view.PV_LENGTH)))[0]
    check_against_reference(slot, ref, board)

    # the info line (UCI) and moveInfos (analysis) of the best move say the same
    info = thinking_infos(uci, time_ms=1, nodes=uci.root_visits, nps=1, eps=1, multipv=1,
                          score_type="WDL_mu", has_wdl=True, per_pv_counters=False,
                          draw_score=CONFIG.draw_score)[0]
    settings = EngineSettings(max_nodes=2048)
    parsed = parse_line(json.dumps({"id": "a", "initialFen": FEN, "moves": [],
                                    "overrideSettings": {"draw_score": CONFIG.draw_score},
                                    "includePVVisits": True}), settings)
    job = JobQueue().add(parsed.item)[0]
    response = report.analysis_response(job, slot, slot.pv_visits, False, 1.0)
    best = response["moveInfos"][0]
    i = int(ref["order"][0])
    assert best["move"] == info.pv[0] == board.uci(uci.moves[i])
    assert best["visits"] == ref["n"][i]
    assert best["q"] == pytest.approx(ref["q"][i], abs=1e-6)
    w = (1 + ref["wl"][i] - ref["d"][i]) / 2
    assert best["winrate"] == pytest.approx(w, abs=1e-6)
    assert best["drawrate"] == pytest.approx(ref["d"][i], abs=1e-6)
    assert best["prior"] == pytest.approx(ref["p"][i], abs=1e-6)
    assert best["scoreCp"] == info.score_cp
    assert best["pv"][:len(info.pv)] == info.pv[:len(best["pv"])]
    assert [m["move"] for m in response["moveInfos"]] == [
        board.uci(uci.moves[j]) for j in ref["order"] if ref["n"][j] > 0]
    # PV visits: the visits of each node along the best line, from the raw tree
    b, node, expected = board.copy(), 0, []
    for text in best["pv"]:
        move = chess.Move.from_uci(text)
        start, count = int(raw.edge_start[node]), int(raw.num_legal[node])
        moves = [int(x) for x in raw.edges.move[start:start + count]]
        node = int(raw.edges.child[start + moves.index(move_to_index(b, move))])
        expected.append(int(raw.visits[node]))
        b.push(move)
    assert best["pvVisits"] == expected and len(expected) >= 3
