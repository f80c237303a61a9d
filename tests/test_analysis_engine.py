"""``zerochess analysis`` through a subprocess (``zerochess.analysis.Client``).

References (``analysis_support``): python-chess for positions, legality, FENs and Zobrist
keys; the library's ``Searcher`` run on one position alone (no slots, no refills, no
chunks) for what each search must return; a plain-Python walk of that reference tree for
PV visits. Timing checks are one-sided with wide margins (the CI machine is small and
shared). The fuzz tests are in ``test_analysis_fuzz``.

One engine serves the whole module (it compiles once); each test uses its own ids and
waits for its own results. The last test closes the engine's input.
"""

from __future__ import annotations

import importlib.util
import io
import json
import re
import time
from pathlib import Path

import chess
import chess.pgn
import chess.polyglot
import jax
import numpy as np
import pytest
from test_certainty import is_mated_within

import zerochess
from zerochess.analysis import AnalysisError, Client
from zerochess.analysis.settings import READY
from zerochess.analysis.slots import SlotBatch
from zerochess.neural import load_model
from zerochess.program_store import LOAD_MESSAGE
from zerochess.search import Searcher
from zerochess.search.config import SearchConfig

from analysis_support import (
    FOOLS_MATE,
    ITALIAN,
    STALEMATE,
    assert_matches,
    board_at,
    check_response,
    finals,
    reference_search,
    tree_pv_visits,
    wait_until,
)

pytestmark = pytest.mark.tier2  # an engine subprocess (README, Tests)

SLOTS = 4
NODES = 4097  # long searches are possible (partial reports, terminate, blockers)
MATE2_VISITS = 1500  # enough for certainty propagation to prove the rooks' mate in two


# --- fixtures --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def engine_process():
    client = Client(slots=SLOTS, max_nodes=NODES, max_visits=64, workers=0,
                    env={"JAX_LOG_COMPILES": "1"}, wait_ready=False)
    yield client
    client.kill()


@pytest.fixture(scope="module")
def reference_searcher():
    # two shards: a SlotBatch over it is sharded (the default for networks on a CPU)
    return Searcher(load_model("builtin"), max_nodes=NODES, num_workers=0, shards=2)


@pytest.fixture(scope="module")
def reference(reference_searcher):
    """Search one position alone with the library (the engine must give the same)."""
    search = reference_search(reference_searcher)
    search(chess.Board(), 2)  # compile while the engine compiles
    return search


@pytest.fixture(scope="module")
def slot_batch(reference_searcher):
    """A SlotBatch of 16 trees over two shards (compiled while the engine compiles)."""
    slots = SlotBatch(reference_searcher, 16)
    slots.warm_up()
    return slots


@pytest.fixture(scope="module")
def engine(engine_process, reference, slot_batch):
    engine_process.wait_ready(timeout=900)
    return engine_process


# --- helpers ---------------------------------------------------------------------------------

def start_blockers(client: Client, tag: str, priority: int = 0) -> list[str]:
    """Fill every slot with a long search and wait until all of them have started (with
    a high ``priority`` no later query pre-empts them)."""
    ids = [client.submit(id=f"{tag}-block{i}", maxVisits=NODES, reportDuringSearchEvery=0.05,
                         priority=priority) for i in range(SLOTS)]
    wait_until(lambda: all(any(r.data.get("isDuringSearch") for r in client.messages(i))
                           for i in ids), what="blockers started")
    return ids


# --- queries: every field --------------------------------------------------------------------

def test_turns_match_the_library_search_of_each_position(engine, reference):
    moves = ["e8g8", "e1g1", "d7d6", "c1g5"]
    fen = "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/2NP1N2/PPP2PPP/R1BQK2R b KQkq - 0 5"
    [r0, r2, r4] = engine.analyse(id="turns", initialFen=fen, moves=moves,
                                  analyzeTurns=[4, 0, 2], maxVisits=48, seed=5,
                                  includePolicy=True, includePVVisits=True, analysisPVLen=3,
                                  timeout=300)
    assert [r["turnNumber"] for r in (r0, r2, r4)] == [0, 2, 4]
    for resp, turn in ((r0, 0), (r2, 2), (r4, 4)):
        board = board_at(moves, fen, turn)
        check_response(resp, board, 48, pv_len=3, policy=True, pv_visits=True)
        ref, tree = reference(board, 48, seed=5, tree=True)
        assert_matches(resp, ref, pv_len=3)
        for m in resp["moveInfos"]:
            assert m["pvVisits"] == tree_pv_visits(board, tree, m["pv"])
    assert len(finals(engine, "turns")) == 3


def test_a_game_with_history_repetition_and_castling(engine, reference):
    moves = ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8", "e2e4", "d7d5",
             "e4d5", "d8d5", "b1c3", "d5a5", "f1c4", "g8f6", "g1f3", "c8g4", "e1g1"]
    [resp] = engine.analyse(id="hist", moves=moves, maxVisits=40, timeout=300)
    board = board_at(moves)
    check_response(resp, board, 40)
    assert_matches(resp, reference(board, 40))


def test_override_settings_are_applied_per_query(engine, reference):
    board = chess.Board(ITALIAN)
    cases = [
        ({"n_scl": 2, "cpuct": 2.5}, SearchConfig(n_scl=2, cpuct=2.5), {}),
        ({"selection": "alphazero", "policy_temperature": 1.0},
         SearchConfig(selection="alphazero", policy_temperature=1.0), {}),
        ({"draw_score": -0.3, "fpu_absolute": True, "fpu_value": -1.0},
         SearchConfig(draw_score=-0.3, fpu_absolute=True, fpu_value=-1.0), {}),
        ({}, SearchConfig(fpu_value_root=0.0), {"rootFpuReductionMax": 0.0}),
    ]
    ids = [engine.submit(id=f"ovr{k}", initialFen=ITALIAN, maxVisits=60, seed=3,
                         overrideSettings=o, **extra)
           for k, (o, _, extra) in enumerate(cases)]
    responses = [engine.wait(i, timeout=300)[0] for i in ids]
    plain = reference(board, 60, seed=3)
    for resp, (_, config, _) in zip(responses, cases, strict=True):
        check_response(resp, board, 60)
        ref = reference(board, 60, config, seed=3)
        assert_matches(resp, ref)
        # the settings change the search, so matching `ref` shows they were applied
        assert not (np.array_equal(ref.visits, plain.visits)
                    and np.allclose(ref.q, plain.q, equal_nan=True))


def test_seed_drives_the_random_choices(engine, reference):
    noisy = {"dirichlet_epsilon": 0.25, "dirichlet_alpha": 0.3}
    config = SearchConfig(**noisy)
    a = engine.submit(id="seed1", maxVisits=40, seed=1, overrideSettings=noisy)
    b = engine.submit(id="seed2", maxVisits=40, seed=2, overrideSettings=noisy)
    r1, r2 = engine.wait(a, timeout=300)[0], engine.wait(b, timeout=300)[0]
    assert_matches(r1, reference(chess.Board(), 40, config, seed=1))
    assert_matches(r2, reference(chess.Board(), 40, config, seed=2))
    assert [m["prior"] for m in r1["moveInfos"]] != [m["prior"] for m in r2["moveInfos"]]


def test_perspective_white_flips_black_to_move_values(engine):
    a = engine.submit(id="pov-stm", initialFen=ITALIAN, maxVisits=30)
    b = engine.submit(id="pov-white", initialFen=ITALIAN, maxVisits=30,
                      overrideSettings={"reportAnalysisWinratesAs": "WHITE"})
    stm, white = engine.wait(a, timeout=300)[0], engine.wait(b, timeout=300)[0]
    for x, y in zip([stm["rootInfo"], *stm["moveInfos"]], [white["rootInfo"],
                                                           *white["moveInfos"]], strict=True):
        loss = 1 - x["winrate"] - x["drawrate"]
        assert y["winrate"] == pytest.approx(loss, abs=1e-6)
        assert y["drawrate"] == pytest.approx(x["drawrate"], abs=1e-7)
        assert y["q"] == pytest.approx(-x["q"], abs=1e-6)
        assert y["scoreCp"] == -x["scoreCp"]
    assert white["rootInfo"]["rawWdl"] == stm["rootInfo"]["rawWdl"][::-1]


def test_game_over_positions_and_mate_scores(engine):
    mated, stale, mate1 = (
        engine.submit(id="over-mate", moves=FOOLS_MATE),
        engine.submit(id="over-stale", initialFen=STALEMATE, includePolicy=True),
        engine.submit(id="mate-in-1", moves=FOOLS_MATE[:3], maxVisits=60),
    )
    [m] = engine.wait(mated, timeout=120)
    check_response(m, board_at(FOOLS_MATE), 1)
    assert m["rootInfo"]["gameOver"] == "checkmate" and m["rootInfo"]["scoreMate"] == 0
    assert m["rootInfo"]["winrate"] == 0 and m["turnNumber"] == 4
    [s] = engine.wait(stale, timeout=120)
    assert s["rootInfo"]["gameOver"] == "stalemate" and s["rootInfo"]["drawrate"] == 1
    assert s["policy"] == {}
    [r] = engine.wait(mate1, timeout=300)
    check_response(r, board_at(FOOLS_MATE[:3]), 60)
    best = r["moveInfos"][0]
    assert best["move"] == "d8h4" and best["scoreMate"] == 1 and "scoreCp" not in best
    assert all("scoreCp" in m for m in r["moveInfos"][1:])


def test_a_proven_deeper_mate_is_scored_as_mate(engine):
    # two rooks: a quiet rook move, then mate on the back rank (no mate in one); certainty
    # propagation proves it, and the score is lc0's "mate 2" with exact values
    fen = "7k/8/8/8/8/8/R7/1R4K1 w - - 0 1"
    qid = engine.submit(id="mate-in-2", initialFen=fen, moves=[], maxVisits=MATE2_VISITS)
    [r] = engine.wait(qid, timeout=300)
    best = r["moveInfos"][0]
    board = chess.Board(fen)
    board.push_uci(best["move"])
    assert is_mated_within(board, 1)  # every reply is mated at once (python-chess)
    assert best["scoreMate"] == 2 and "scoreCp" not in best
    assert best["winrate"] == 1 and best["drawrate"] == 0


def test_unknown_field_warns_and_runs(engine):
    qid = engine.submit(id="warn", maxVisits=3, komi=7.5, overrideSettings={"cpuctt": 1})
    [resp] = engine.wait(qid, timeout=120)
    warnings = [r.data for r in engine.messages(qid) if "warning" in r.data]
    assert sorted(w["field"] for w in warnings) == ["komi", "overrideSettings"]
    assert resp["rootInfo"]["visits"] == 3


def test_errors_name_the_field_and_the_id(engine):
    cases = {
        "e-move": ({"moves": ["e2e4", "e2e4"]}, "moves", "illegal move e2e4 at index 1"),
        "e-fen": ({"initialFen": "rnbqkbnr/pppppppp/8 w", "moves": []}, "initialFen", "FEN"),
        "e-type": ({"moves": [], "maxVisits": "many"}, "maxVisits", "integer"),
        "e-range": ({"moves": [], "analysisPVLen": 0}, "analysisPVLen", "must be >= 1"),
        "e-turn": ({"moves": ["e2e4"], "analyzeTurns": [2]}, "analyzeTurns", "turn number 2"),
        "e-allow": ({"moves": [], "allowMoves": [{"moves": ["e2e4", "e2e5"]}]}, "allowMoves",
                    "['e2e5'] are not legal"),
        "e-avoid": ({"moves": [], "avoidMoves": [{"moves": [m.uci() for m in
                                                            chess.Board().legal_moves]}]},
                    "avoidMoves", "excludes every legal move"),
        "e-rpt": ({"moves": [], "rootPolicyTemperature": 2.0}, "rootPolicyTemperature",
                  "not supported yet"),
    }
    for qid, (fields, _, _) in cases.items():
        engine.send_raw(json.dumps({"id": qid, **fields}))
    for qid, (_, field, text) in cases.items():
        with pytest.raises(AnalysisError) as err:
            engine.wait(qid, timeout=60)
        assert err.value.field == field and text in err.value.message["error"]
        assert err.value.message["id"] == qid
        assert len(engine.messages(qid)) == 1  # one error, nothing else
    before = len(engine.received)
    engine.send_raw("this is not json")
    engine.send_raw("")
    engine.send_raw('["not", "an", "object"]')
    engine.version()
    new = [r.data for r in engine.received[before:]]
    errors = [m for m in new if "error" in m]
    assert len(errors) == 2 and all("id" not in e for e in errors)


# --- actions ---------------------------------------------------------------------------------

def test_avoid_and_allow_moves_restrict_the_search(engine):
    """avoidMoves / allowMoves (KataGo semantics): the avoided root moves get no visits
    (and are not listed), only allowed moves are searched; an avoid entry with untilDepth
    2 also keeps the reply out of every PV's second move."""
    [plain] = engine.analyse(id="f-plain", moves=[], maxVisits=40, timeout=300)
    visits = {m["move"]: m["visits"] for m in plain["moveInfos"]}
    top = sorted(visits, key=visits.get, reverse=True)[:2]
    assert all(visits[m] > 0 for m in top)
    [avoid] = engine.analyse(id="f-avoid", moves=[], maxVisits=40, timeout=300,
                             avoidMoves=[{"moves": top, "untilDepth": 1}])
    searched = {m["move"]: m["visits"] for m in avoid["moveInfos"]}
    assert not set(top) & set(searched) and sum(searched.values()) == sum(visits.values())
    allowed = ["a2a3", "h2h4", "b1c3"]
    [allow] = engine.analyse(id="f-allow", moves=[], maxVisits=40, timeout=300,
                             allowMoves=[{"moves": allowed, "untilDepth": 1}])
    searched = {m["move"]: m["visits"] for m in allow["moveInfos"]}
    assert set(searched) <= set(allowed) and sum(searched.values()) == sum(visits.values())
    replies = ["e7e5", "d7d5", "g8f6", "c7c5", "e7e6"]
    [deep] = engine.analyse(id="f-deep", moves=[], maxVisits=60, timeout=300,
                            avoidMoves=[{"moves": top, "untilDepth": 1},
                                        {"moves": replies, "untilDepth": 2}])
    infos = deep["moveInfos"]
    assert not set(top) & {m["move"] for m in infos}
    assert any(len(m["pv"]) > 1 for m in infos)
    assert all(m["pv"][1] not in replies for m in infos if len(m["pv"]) > 1)


def test_actions_are_acknowledged_by_echo(engine):
    reply = engine.version()
    assert reply["version"] == zerochess.__version__ and reply["action"] == "query_version"
    assert isinstance(reply["git_hash"], str) and reply["git_hash"]
    assert set(reply) == {"id", "action", "version", "git_hash"}
    reply = engine.clear_cache()
    assert reply == {"id": reply["id"], "action": "clear_cache"}
    models = engine.action("query_models")["models"]
    assert models[0]["name"] == "builtin" and models[0]["slots"] == SLOTS
    assert models[0]["maxNodes"] == NODES
    reply = engine.terminate("nobody", turn_numbers=[3])
    assert reply == {"id": reply["id"], "action": "terminate", "terminateId": "nobody",
                     "turnNumbers": [3]}
    engine.send_raw('{"id": "echo", "action": "terminate_all", "custom": {"x": [1, 2]}}')
    wait_until(lambda: engine.messages("echo"), what="the echo")
    assert engine.messages("echo")[0].data == {"id": "echo", "action": "terminate_all",
                                                "custom": {"x": [1, 2]}}


def test_clear_cache_keeps_results_reproducible(engine):
    first = engine.analyse(id="cc1", maxVisits=20)[0]
    engine.clear_cache()
    second = engine.analyse(id="cc2", maxVisits=20)[0]
    assert first["moveInfos"] == second["moveInfos"]


# --- scheduling ------------------------------------------------------------------------------

def test_results_come_back_out_of_order(engine):
    slow = engine.submit(id="ooo-slow", maxVisits=400)
    fast = engine.submit(id="ooo-fast", maxVisits=5)
    engine.wait(slow, timeout=300)
    engine.wait(fast, timeout=300)
    order = [r.data["id"] for r in engine.received
             if r.data.get("id") in (slow, fast) and r.data.get("isDuringSearch") is False]
    assert order == [fast, slow]


def test_priorities_decide_which_positions_take_free_slots(engine):
    blockers = start_blockers(engine, "prio", priority=100)
    lines = [{"id": f"p-low{i}", "moves": [], "maxVisits": 30} for i in range(5)]
    lines.insert(2, {"id": "p-high", "moves": [], "maxVisits": 30, "priority": 5})
    lines.append({"id": "p-turns", "moves": ["e2e4", "e7e5"], "analyzeTurns": [0, 1, 2],
                  "priorities": [-1, 10, -1], "maxVisits": 30})
    lines += [{"id": "stop", "action": "terminate", "terminateId": b} for b in blockers]
    engine.send_raw("\n".join(json.dumps(x) for x in lines))
    names = ["p-low0", "p-low1", "p-high", "p-low2", "p-low3", "p-low4", "p-turns"]
    wait_until(lambda: sum(len(finals(engine, n)) for n in names) == 9, what="9 finals")
    done = [(r.data["id"], r.data["turnNumber"]) for r in engine.received
            if r.data.get("id") in names and r.data.get("isDuringSearch") is False]
    # four slots free at once: they take the four best (priority, then arrival), and
    # inside the batch only the highest priority searches: turn 1 of p-turns (10) alone,
    # then p-high (5) alone (each freed slot takes the next low); then the four lows of
    # priority 0 together (equal budgets finish in the same run), then p-low4, and the
    # two turns of priority -1 last
    assert done[:2] == [("p-turns", 1), ("p-high", 0)]
    assert set(done[2:6]) == {("p-low0", 0), ("p-low1", 0), ("p-low2", 0), ("p-low3", 0)}
    assert done[6] == ("p-low4", 0)
    assert set(done[7:9]) == {("p-turns", 0), ("p-turns", 2)}
    for b in blockers:
        [final] = finals(engine, b)
        assert 1 < final["rootInfo"]["visits"] < NODES  # terminated: partial results


def test_partial_reports_at_the_interval_and_terminate_returns_partial(engine):
    every, first = 0.25, 0.6
    sent = time.monotonic()
    qid = engine.submit(id="partial", maxVisits=NODES, reportDuringSearchEvery=every,
                        firstReportDuringSearchAfter=first, includePVVisits=True)
    wait_until(lambda: sum(r.data.get("isDuringSearch") is True
                           for r in engine.messages(qid)) >= 4, what="4 partial reports")
    engine.terminate(qid)
    [final] = engine.wait(qid, timeout=60)
    msgs = engine.messages(qid)
    partial = [r for r in msgs if r.data.get("isDuringSearch") is True]
    assert msgs[-1].data is final and len(finals(engine, qid)) == 1
    # the k-th report is due at first + k * every (KataGo keeps the cadence: a late report
    # does not push the later ones back), never earlier; none is skipped for long
    times = np.array([r.time - sent for r in partial])
    due = first + every * np.arange(len(times))
    assert np.all(times >= due), (times, due)
    gaps = np.diff(times)
    assert gaps.mean() <= 3 * every, gaps
    visits = [r.data["rootInfo"]["visits"] for r in partial] + [final["rootInfo"]["visits"]]
    assert visits == sorted(visits) and 1 < visits[0] and visits[-1] < NODES
    board = chess.Board()
    for r in partial:
        check_response({**r.data, "isDuringSearch": False}, board, r.data["rootInfo"]["visits"],
                       pv_visits=True)
    check_response(final, board, final["rootInfo"]["visits"], pv_visits=True)


def test_terminate_queued_turns_gives_no_results(engine):
    blockers = start_blockers(engine, "tq")
    qid = engine.submit(id="queued", moves=["d2d4", "d7d5"], analyzeTurns=[0, 1, 2],
                        maxVisits=10)
    engine.terminate(qid, turn_numbers=[0, 2])
    for b in blockers:
        engine.terminate(b)
    results = engine.wait(qid, timeout=120)
    assert [r.get("noResults") for r in results] == [True, None, True]
    assert results[0] == {"id": "queued", "turnNumber": 0, "isDuringSearch": False,
                          "noResults": True}
    check_response(results[1], board_at(["d2d4"]), 10)
    assert len(finals(engine, qid)) == 3


def test_terminate_all_ends_every_open_turn_once(engine):
    ids = [engine.submit(id=f"all{i}", moves=["e2e4"], analyzeTurns=[0, 1], maxVisits=NODES,
                         reportDuringSearchEvery=0.05) for i in range(3)]
    wait_until(lambda: any(r.data.get("isDuringSearch") for i in ids
                           for r in engine.messages(i)), what="a search started")
    engine.terminate_all()
    for i in ids:
        results = engine.wait(i, timeout=120)
        assert [r["turnNumber"] for r in results] == [0, 1]
        assert len(finals(engine, i)) == 2
        for r in results:
            assert r.get("noResults") or r["rootInfo"]["visits"] < NODES
    assert any(not r.get("noResults") for i in ids for r in finals(engine, i))
    assert any(r.get("noResults") for i in ids for r in finals(engine, i))


# --- the slot batch in-process --------------------------------------------------------------

def test_slot_batch_refills_single_trees_of_a_sharded_batch(reference_searcher, slot_batch):
    """In-process: SlotBatch over two shards; each refilled tree searches like its
    position alone, and refilling one slot leaves the others untouched."""
    searcher, slots = reference_searcher, slot_batch
    assert len(slots.batch.shards) == 2 and slots.shard_size == 8
    a = chess.Board()
    a.push_uci("d2d4")
    b = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3")
    c = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    jobs = {3: (a, SearchConfig(), 1, 40), 12: (b, SearchConfig(n_scl=2), 2, 60),
            8: (c, SearchConfig(dirichlet_epsilon=0.25), 3, 25)}
    slots.reset(list(jobs), [j[0] for j in jobs.values()], [j[1] for j in jobs.values()],
                [j[2] for j in jobs.values()])
    done = np.zeros(16, np.int64)
    for chunk in (7, 7, 100):  # resumable in chunks, per-tree budgets
        counts = np.zeros(16, np.int64)
        for slot, (_, _, _, sims) in jobs.items():
            counts[slot] = min(chunk, sims - done[slot])
        done = slots.run(counts)
    # (the warm-up leaves every slot fresh)
    assert done.tolist() == [jobs[i][3] if i in jobs else 0 for i in range(16)]
    # refill slot 12 with a new position: the trees of the other slots are untouched
    before = slots.report(3)
    slots.reset([12], [c], [SearchConfig()], [9])
    after = slots.report(3)
    assert np.array_equal(before.result.visits, after.result.visits)
    assert slots.simulations()[12] == 0 and slots.report(12).result.root_visits == 1
    counts = np.zeros(16, np.int64)
    counts[12] = 30
    slots.run(counts)
    jobs[12] = (c, SearchConfig(), 9, 30)
    for slot, (board, config, seed, sims) in jobs.items():
        batch = searcher.init([board], [config], seed=[seed])
        batch = searcher.run(batch, sims)
        ref = searcher.results(batch)[0]
        got = slots.report(slot)
        res = got.result
        assert res.board.fen() == board.fen() and res.root_visits == sims + 1
        assert np.array_equal(res.visits, ref.visits)
        np.testing.assert_allclose(res.q, ref.q, atol=1e-6)
        np.testing.assert_allclose(res.prior, ref.prior, atol=1e-7)
        assert res.pvs == ref.pvs and res.best_move == ref.best_move
        tree = jax.device_get(batch.state.tree)
        for i, move in enumerate(res.moves):
            line = [move, *res.pvs[i]]
            if res.visits[i] == 0:
                assert got.pv_visits[i].tolist() == [0] * len(got.pv_visits[i])
                continue
            expected = tree_pv_visits(board, tree, [m.uci() for m in line])
            assert got.pv_visits[i][:len(line)].tolist() == expected
            assert not got.pv_visits[i][len(line):].any()


# --- the PGN example -------------------------------------------------------------------------

PGN = """[Event "Scholar"]
[Result "1-0"]

1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0

[Event "From a FEN"]
[FEN "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3"]
[SetUp "1"]
[Result "*"]

3... Nf6 {a comment stays} 4. Ng5 *
"""


def test_pgn_example_writes_evals_that_pgn_readers_parse(engine, tmp_path):
    spec = importlib.util.spec_from_file_location(
        "annotate_pgn", Path(__file__).resolve().parents[1] / "examples" / "annotate_pgn.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    source = tmp_path / "in.pgn"
    source.write_text(PGN)
    games = example.read_games(source)
    example.annotate(games, engine, visits=12)
    text = "\n\n".join(str(g) for g in games)
    evals = re.findall(r"\[%eval ([^\]]*)\]", text)
    assert len(evals) == (7 - 1) + 2  # every move but the mate (its position has no moves)
    assert all(re.fullmatch(r"-?\d+\.\d\d|#-?\d+", e) for e in evals), evals
    assert "a comment stays" in text
    reread = [chess.pgn.read_game(io.StringIO(part)) for part in text.split("\n\n\n")]
    for k, game in enumerate(reread):
        by_turn = {r["turnNumber"]: r for r in finals(engine, f"game{k}")}
        for turn, node in enumerate(game.mainline(), start=1):
            response = by_turn[turn]
            board = node.board()
            if not any(board.legal_moves):
                assert node.eval() is None and response["rootInfo"]["gameOver"] == "checkmate"
                continue
            best = response["moveInfos"][0]
            white = node.eval().white()
            # reportAnalysisWinratesAs WHITE: the engine's scores are White's already
            if "scoreMate" in best:
                assert white.mate() == best["scoreMate"]
            else:
                assert white.score() == best["scoreCp"]
            stm = engine.analyse(id=f"pgn-check-{k}-{turn}", moves=[
                m.uci() for m in board.move_stack], maxVisits=12,
                **({"initialFen": game.headers["FEN"]} if "FEN" in game.headers else {}))[0]
            sign = 1 if board.turn == chess.WHITE else -1
            key = "scoreMate" if "scoreMate" in best else "scoreCp"
            assert stm["moveInfos"][0][key] * sign == best[key]


# --- no recompilation, then closing stdin ----------------------------------------------------

def test_refilling_slots_never_recompiles(engine):
    queries = [
        {"id": "nc1", "moves": ["e2e4"], "maxVisits": 17, "overrideSettings": {"n_scl": 3}},
        {"id": "nc2", "initialFen": ITALIAN, "moves": [], "maxVisits": 5, "seed": 99,
         "includePolicy": True, "includePVVisits": True,
         "overrideSettings": {"selection": "alphazero", "dirichlet_epsilon": 0.3}},
        {"id": "nc3", "moves": FOOLS_MATE, "analyzeTurns": [0, 1, 2, 3, 4]},
        {"id": "nc4", "initialFen": STALEMATE, "moves": []},
        {"id": "nc5", "moves": [], "maxVisits": 1},
        {"id": "nc6", "moves": ["d2d4", "g8f6", "c2c4"], "analyzeTurns": [1, 3],
         "maxVisits": 33, "priorities": [4, -4], "reportDuringSearchEvery": 0.01},
    ] * 2
    ids = []
    for k, q in enumerate(queries):
        ids.append(engine.submit({**q, "id": f"{q['id']}-{k}"}))
    engine.terminate(ids[-1])
    for qid in ids:
        engine.wait(qid, timeout=300)
    lines = engine.stderr.splitlines()
    ready = lines.index(READY)
    # a program compiled, or loaded from disk (zerochess.program_store), logs a line
    compiles = ("Compiling ", LOAD_MESSAGE)
    assert any(c in line for line in lines[:ready] for c in compiles)  # the probe works
    after = [line for line in lines[ready:] if any(c in line for c in compiles)]
    assert after == []


def test_closing_stdin_finishes_queued_work_and_exits(engine):
    ids = [engine.submit(id=f"eof{i}", maxVisits=20 + i, moves=["e2e4"]) for i in range(6)]
    assert engine.close(timeout=300) == 0
    for qid in ids:
        [r] = finals(engine, qid)
        assert r["rootInfo"]["visits"] == 20 + int(qid[3:])
