"""The analysis engine's parts that need no search: query parsing and validation (every
field, errors naming the field and id), history truncation, the priority queue and
slots, response values, settings, line reading. The engine itself: test_analysis_engine."""

from __future__ import annotations

import io
import json
import math
import random

import chess
import numpy as np
import pytest

from zerochess.analysis.engine import _LineTooLong, read_lines
from zerochess.analysis.protocol import (
    MAX_MOVES,
    Action,
    Query,
    history_base,
    parse_line,
)
from zerochess.analysis.report import _values, winrate_lcb
from zerochess.analysis.scheduler import JobQueue, Slots
from zerochess.analysis.settings import EngineSettings
from zerochess.chess.history import root_history
from zerochess.errors import UserError
from zerochess.search.config import SearchConfig

SETTINGS = EngineSettings(max_nodes=1001)
FOOLS_MATE = ["f2f3", "e7e5", "g2g4", "d8h4"]


def parse(obj, settings=SETTINGS):
    line = obj if isinstance(obj, (str, bytes)) else json.dumps(obj)
    return parse_line(line, settings)


def error_of(obj, settings=SETTINGS):
    out = parse(obj, settings)
    assert out.item is None, out
    assert len(out.messages) == 1 and "error" in out.messages[0], out.messages
    return out.messages[0]


def query_of(obj, settings=SETTINGS) -> tuple[Query, list[dict]]:
    out = parse(obj, settings)
    assert isinstance(out.item, Query), out.messages
    return out.item, out.messages


# --- valid queries: every field ----------------------------------------------------------------

def test_defaults_analyse_the_last_position():
    q, warnings = query_of({"id": "a", "moves": ["e2e4", "c7c5"]})
    assert warnings == []
    assert q.id == "a" and [t.turn for t in q.turns] == [2]
    board = chess.Board()
    for m in ("e2e4", "c7c5"):
        board.push_uci(m)
    assert q.turns[0].board().fen() == board.fen()
    assert q.max_visits == 400 and q.pv_len == 15 and q.seed == 0
    assert q.config == SearchConfig() and q.perspective == "SIDETOMOVE"
    assert not q.include_policy and not q.include_pv_visits
    assert q.report_every is None and q.first_report_after is None
    assert q.turns[0].priority == 0 and q.move_filters == ()


def test_every_field_is_read():
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
    q, warnings = query_of({
        "id": "all", "initialFen": fen, "moves": ["f1c4", "g8f6", "d2d3"],
        "analyzeTurns": [3, 0, 1, 1], "priorities": [7, 1, 2, 9], "maxVisits": 33,
        "analysisPVLen": 4, "includePolicy": True, "includePVVisits": True,
        "overrideSettings": {"n_scl": 3, "selection": "alphazero", "cpuct": 2.5,
                             "reportAnalysisWinratesAs": "white"},
        "reportDuringSearchEvery": 0.5, "firstReportDuringSearchAfter": 0.1, "seed": 12,
        "rootFpuReductionMax": 0.0,
    })
    assert warnings == []
    # duplicates collapse (KataGo keeps a set of turns); the last priority given wins
    assert [(t.turn, t.priority) for t in q.turns] == [(0, 1), (1, 9), (3, 7)]
    board = chess.Board(fen)
    fens = [board.fen()]
    for m in ("f1c4", "g8f6", "d2d3"):
        board.push_uci(m)
        fens.append(board.fen())
    assert [t.board().fen() for t in q.turns] == [fens[0], fens[1], fens[3]]
    assert q.max_visits == 33 and q.pv_len == 4 and q.seed == 12
    assert q.include_policy and q.include_pv_visits
    assert q.report_every == 0.5 and q.first_report_after == 0.1
    assert q.perspective == "WHITE"
    assert q.config == SearchConfig(n_scl=3, selection="alphazero", cpuct=2.5,
                                    fpu_value_root=0.0, fpu_absolute_root=False)


def test_first_report_defaults_to_the_interval_and_priority_applies_to_all_turns():
    q, _ = query_of({"id": "r", "moves": ["e2e4"], "analyzeTurns": [0, 1], "priority": -3,
                     "reportDuringSearchEvery": 2})
    assert q.first_report_after == 2.0 and {t.priority for t in q.turns} == {-3}
    q, _ = query_of({"id": "r", "moves": [], "firstReportDuringSearchAfter": 1.5})
    assert q.first_report_after == 1.5 and q.report_every is None


def test_engine_defaults_come_from_settings():
    settings = EngineSettings(max_visits=50, analysis_pv_len=3, seed=9,
                              report_analysis_winrates_as="black",
                              search={"cpuct": 3.0, "n_scl": 4})
    q, _ = query_of({"id": "d", "moves": []}, settings)
    assert (q.max_visits, q.pv_len, q.seed, q.perspective) == (50, 3, 9, "BLACK")
    assert q.config == SearchConfig(cpuct=3.0, n_scl=4)
    q, _ = query_of({"id": "d", "moves": [], "overrideSettings": {"n_scl": None}}, settings)
    assert q.config == SearchConfig(cpuct=3.0)


def test_override_max_visits_and_the_field_wins():
    q, _ = query_of({"id": "m", "moves": [], "overrideSettings": {"maxVisits": 20}})
    assert q.max_visits == 20
    q, _ = query_of({"id": "m", "moves": [], "overrideSettings": {"maxVisits": 20},
                     "maxVisits": 30})
    assert q.max_visits == 30


def test_unknown_fields_and_override_keys_warn_and_the_query_runs():
    q, warnings = query_of({"id": "w", "moves": [], "komi": 7.5, "rules": "chinese",
                            "overrideSettings": {"cpuctt": 2, "cpuct": 2.0}})
    assert q.config.cpuct == 2.0
    fields = sorted(w["field"] for w in warnings)
    assert fields == ["komi", "overrideSettings", "rules"]
    assert all(w["id"] == "w" and "warning" in w for w in warnings)
    assert any("cpuctt" in w["warning"] for w in warnings)
    quiet = EngineSettings(warn_unused_fields=False)
    assert query_of({"id": "w", "moves": [], "komi": 7.5}, quiet)[1] == []


def test_max_visits_beyond_the_tree_is_clamped_with_a_warning():
    q, warnings = query_of({"id": "c", "moves": [], "maxVisits": 5000})
    assert q.max_visits == SETTINGS.tree_nodes == 1001
    assert [w["field"] for w in warnings] == ["maxVisits"]


def test_empty_analyze_turns_warns_and_has_no_turns():
    q, warnings = query_of({"id": "e", "moves": ["e2e4"], "analyzeTurns": []})
    assert q.turns == () and [w["field"] for w in warnings] == ["analyzeTurns"]


def test_startpos_epd_and_castling_notations():
    q, _ = query_of({"id": "s", "initialFen": "startpos", "moves": []})
    assert q.turns[0].board() == chess.Board()
    # e1h1 (king takes rook) is read as castling, as python-chess does
    fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"
    q, _ = query_of({"id": "s", "initialFen": fen, "moves": ["e1h1"]})
    assert q.turns[0].board().piece_at(chess.G1) == chess.Piece(chess.KING, chess.WHITE)


# --- errors: one per bad query, naming the field and the id ---------------------------------

BAD_FIELDS = [
    ({"moves": ["e2e5"]}, "moves", "illegal move e2e5 at index 0"),
    ({"moves": ["e2e4", "e7e5", "e1e3"]}, "moves", "at index 2"),
    ({"moves": ["e2e4", "zz"]}, "moves", "invalid move 'zz' at index 1"),
    ({"moves": ["0000"]}, "moves", "illegal move 0000 at index 0"),
    ({"moves": "e2e4"}, "moves", "must be a list"),
    ({"moves": [1]}, "moves", "index 0"),
    ({"moves": ["e2e4"] * (MAX_MOVES + 1)}, "moves", "too many moves"),
    ({"moves": [*FOOLS_MATE, "e2e4"]}, "moves", "illegal move e2e4 at index 4"),
    ({"initialFen": "not a fen", "moves": []}, "initialFen", "not a fen"),
    ({"initialFen": "8/8/8/8/8/8/8/8 w - - 0 1", "moves": []}, "initialFen", "no white king"),
    ({"initialFen": 3, "moves": []}, "initialFen", "FEN string"),
    ({"initialFen": "x" * 10_000, "moves": []}, "initialFen", "not a FEN"),
    ({"moves": [], "analyzeTurns": [1]}, "analyzeTurns", "invalid turn number 1"),
    ({"moves": [], "analyzeTurns": [-1]}, "analyzeTurns", "out of range"),
    ({"moves": [], "analyzeTurns": 0}, "analyzeTurns", "list of integers"),
    ({"moves": [], "analyzeTurns": [True]}, "analyzeTurns", "list of integers"),
    ({"moves": [], "analyzeTurns": [0.0]}, "analyzeTurns", "list of integers"),
    ({"moves": [], "maxVisits": 0}, "maxVisits", "maxVisits must be >= 1, got 0"),
    ({"moves": [], "maxVisits": "10"}, "maxVisits", "integer"),
    ({"moves": [], "maxVisits": 10.0}, "maxVisits", "integer"),
    ({"moves": [], "maxVisits": True}, "maxVisits", "integer"),
    ({"moves": [], "maxVisits": 2**51}, "maxVisits", "maxVisits must be <= 1,125,899,906,842,624"),
    ({"moves": [], "analysisPVLen": 0}, "analysisPVLen", "must be >= 1"),
    ({"moves": [], "analysisPVLen": 1001}, "analysisPVLen", "must be <= 1,000"),
    ({"moves": [], "includePolicy": 1}, "includePolicy", "true or false"),
    ({"moves": [], "includePVVisits": "yes"}, "includePVVisits", "true or false"),
    ({"moves": [], "reportDuringSearchEvery": 0}, "reportDuringSearchEvery", "[0.001, "),
    ({"moves": [], "reportDuringSearchEvery": "1"}, "reportDuringSearchEvery", "number"),
    ({"moves": [], "firstReportDuringSearchAfter": 2e6}, "firstReportDuringSearchAfter",
     "1e+06]"),
    ({"moves": [], "priority": 2**62 + 1}, "priority", "priority must be <="),
    ({"moves": [], "priority": "high"}, "priority", "integer"),
    ({"moves": [], "priority": 1, "priorities": [1], "analyzeTurns": [0]}, "priority", "both"),
    ({"moves": [], "priorities": [1]}, "priorities", "analyzeTurns"),
    ({"moves": ["e2e4"], "analyzeTurns": [0, 1], "priorities": [1]}, "priorities", "one entry"),
    ({"moves": [], "seed": -1}, "seed", "seed must be in [0, 2**63), got -1"),
    ({"moves": [], "seed": 2**63}, "seed", "seed must be in [0, 2**63)"),
    ({"moves": [], "rootFpuReductionMax": 3}, "rootFpuReductionMax", "must be in [0, 2], got 3"),
    ({"moves": [], "rootPolicyTemperature": 1.5}, "rootPolicyTemperature", "not supported yet"),
    ({"moves": [], "rootPolicyTemperature": 0}, "rootPolicyTemperature", "[0.01, 100]"),
    ({"moves": [], "overrideSettings": []}, "overrideSettings", "object"),
    ({"moves": [], "overrideSettings": {"cpuct": "x"}}, "overrideSettings", "cpuct must be"),
    ({"moves": [], "overrideSettings": {"cpuct": -1}}, "overrideSettings",
     "cpuct must be in [0, 100], got -1"),
    ({"moves": [], "overrideSettings": {"cpuct": 1e39}}, "overrideSettings", "cpuct must be"),
    ({"moves": [], "overrideSettings": {"fpu_absolute": 1}}, "overrideSettings", "true/false"),
    ({"moves": [], "overrideSettings": {"n_scl": 0}}, "overrideSettings", "n_scl"),
    ({"moves": [], "overrideSettings": {"n_scl": 2**40}}, "overrideSettings", "n_scl"),
    ({"moves": [], "overrideSettings": {"n_scl": 2.5}}, "overrideSettings", "n_scl"),
    ({"moves": [], "overrideSettings": {"selection": "greedy"}}, "overrideSettings",
     "selection"),
    ({"moves": [], "overrideSettings": {"draw_score": 2}}, "overrideSettings", "draw_score"),
    ({"moves": [], "overrideSettings": {"maxVisits": 0}}, "overrideSettings",
     "maxVisits must be >= 1"),
    ({"moves": [], "overrideSettings": {"reportAnalysisWinratesAs": "RED"}},
     "overrideSettings", "SIDETOMOVE"),
    ({"moves": [], "avoidMoves": {"moves": ["e2e4"]}}, "avoidMoves", "list of objects"),
    ({"moves": [], "avoidMoves": [{"untilDepth": 1}]}, "avoidMoves", "list of objects"),
    ({"moves": [], "avoidMoves": [{"moves": ["e2e9"]}]}, "avoidMoves", "invalid move"),
    ({"moves": [], "avoidMoves": [{"moves": ["e2e4"], "untilDepth": 0}]}, "avoidMoves",
     "untilDepth must be >= 1"),
    ({"moves": [], "avoidMoves": [{"moves": ["e2e4"], "player": "W"}]}, "avoidMoves",
     "player"),
    ({"moves": [], "allowMoves": [{"moves": ["e2e4"]}, {"moves": ["d2d4"]}]}, "allowMoves",
     "at most one"),
    ({"moves": [], "allowMoves": [], "avoidMoves": []}, "allowMoves", "both"),
    ({}, "moves", "required"),
]


@pytest.mark.parametrize(("fields", "field", "text"), BAD_FIELDS)
def test_bad_field_gives_one_error_naming_it(fields, field, text):
    err = error_of({"id": "bad", **fields})
    assert err["field"] == field and err["id"] == "bad"
    assert text in err["error"]


@pytest.mark.parametrize(("line", "text"), [
    ("not json", "could not parse input line as json request"),
    ('{"id": "x", "moves": []', "could not parse"),
    ('{"id": "x", "moves": [], "maxVisits": NaN}', "NaN is not valid JSON"),
    ('{"id": "x", "moves": [], "maxVisits": 1e999}', "out of range"),
    ('{"id": "x", "moves": [], "maxVisits": ' + "9" * 5000 + "}", "could not parse"),
    ("[" * 100_000, "could not parse"),
    ('{"a":' * 50_000, "could not parse"),
    (b'{"id": "x\xff", "moves": []}', "not valid UTF-8"),
    ("[1, 2]", "not an object"),
    ("null", "not an object"),
    ('{"moves": []}', "string \"id\""),
    ('{"id": 5, "moves": []}', "string \"id\""),
])
def test_unreadable_line_gives_an_error_without_id(line, text):
    err = error_of(line)
    assert "id" not in err and text in err["error"]
    assert len(json.dumps(err)) < 1000  # bad input is quoted, not echoed whole


def test_actions_are_read_and_echoed():
    for name in ("query_version", "query_models", "clear_cache", "terminate_all"):
        out = parse({"id": "a", "action": name, "extra": [1]})
        assert isinstance(out.item, Action) and out.item.name == name and out.messages == []
        assert out.item.echo == {"id": "a", "action": name, "extra": [1]}
    out = parse({"id": "t", "action": "terminate", "terminateId": "q", "turnNumbers": [1, 2]})
    assert out.item.terminate_id == "q" and out.item.turn_numbers == {1, 2}
    assert out.item.echo["turnNumbers"] == [1, 2]
    assert parse({"id": "t", "action": "terminate_all"}).item.turn_numbers is None


@pytest.mark.parametrize(("request_", "field"), [
    ({"id": "a", "action": "explode"}, "action"),
    ({"id": "a", "action": 3}, "action"),
    ({"id": "a", "action": "terminate"}, "terminateId"),
    ({"id": "a", "action": "terminate", "terminateId": 4}, "terminateId"),
    ({"id": "a", "action": "terminate", "terminateId": "q", "turnNumbers": "1"}, "turnNumbers"),
    ({"id": "a", "action": "terminate_all", "turnNumbers": [1.5]}, "turnNumbers"),
])
def test_bad_actions_name_the_field(request_, field):
    err = error_of(request_)
    assert err["field"] == field and err["id"] == "a"


# --- history: a turn keeps just enough of the game --------------------------------------------

def _random_game(rng: random.Random, plies: int, shuffle_pieces: bool = False) -> list[chess.Move]:
    board = chess.Board()
    moves = []
    for _ in range(plies):
        legal = list(board.legal_moves)
        if not legal:
            break
        # prefer quiet piece moves now and then, so that positions repeat
        quiet = [m for m in legal if not board.is_capture(m)
                 and board.piece_type_at(m.from_square) in (chess.KNIGHT, chess.KING)]
        move = rng.choice(quiet if quiet and shuffle_pieces and rng.random() < 0.8 else legal)
        board.push(move)
        moves.append(move)
    return moves


@pytest.mark.parametrize("seed", range(2))
def test_truncated_history_gives_the_same_search_inputs(seed):
    """A turn keeps the game from ``history_base`` on: what the search reads of the game
    (network history planes, repetition flags and keys, game end) is unchanged."""
    rng = random.Random(seed)
    moves = _random_game(rng, 240, shuffle_pieces=seed % 2 == 0)
    uci = [m.uci() for m in moves]
    turns = list(range(0, len(uci) + 1, 3))
    q, _ = query_of({"id": "h", "moves": uci, "analyzeTurns": turns})
    specs = {spec.turn: spec for spec in q.turns}
    assert sorted(specs) == turns
    full = chess.Board()
    truncated_somewhere = False
    for t in range(len(uci) + 1):
        if t not in specs:
            if t < len(moves):
                full.push(moves[t])
            continue
        short = specs[t].board()
        truncated_somewhere |= len(short.move_stack) < t
        assert short.fen() == full.fen()
        a, b = root_history(full), root_history(short)
        for x, y in zip(a, b, strict=True):
            assert np.array_equal(x, y), (t, len(short.move_stack))
        assert full.outcome(claim_draw=True) == short.outcome(claim_draw=True)
        assert full.is_repetition(2) == short.is_repetition(2)
        if t < len(moves):
            full.push(moves[t])
    assert truncated_somewhere


def test_history_base_bounds():
    clocks = list(range(300))  # no capture or pawn move in 300 plies
    assert history_base(299, clocks) == 0
    clocks = [0] * 300  # every ply irreversible: only the hash window is kept
    assert history_base(299, clocks) == 199
    assert history_base(50, clocks) == 0


# --- scheduler -------------------------------------------------------------------------------

def _query(qid: str, priorities: list[int]) -> Query:
    moves = ["e2e4", "e7e5", "g1f3"][:max(len(priorities) - 1, 0)]
    q, _ = query_of({"id": qid, "moves": moves, "analyzeTurns": list(range(len(priorities))),
                     "priorities": priorities})
    return q


def test_queue_orders_by_priority_then_arrival():
    queue = JobQueue()
    queue.add(_query("a", [0, 0]))
    queue.add(_query("b", [5]))
    queue.add(_query("c", [0, 9, -1]))
    order = []
    while (job := queue.pop()) is not None:
        order.append((job.query.id, job.turn))
    assert order == [("c", 1), ("b", 0), ("a", 0), ("a", 1), ("c", 0), ("c", 2)]


def test_queue_removal_keeps_order():
    queue = JobQueue()
    queue.add(_query("a", [0, 0, 0]))
    queue.add(_query("b", [1]))
    removed = queue.remove(lambda j: j.matches("a", frozenset({0, 2})))
    assert [(j.query.id, j.turn) for j in removed] == [("a", 0), ("a", 2)]
    assert [(j.query.id, j.turn) for j in iter(queue.pop, None)] == [("b", 0), ("a", 1)]
    assert len(queue) == 0
    queue.add(_query("c", [0]))
    assert [j.query.id for j in queue.remove(lambda j: j.matches(None, None))] == ["c"]


def test_slots_and_report_cadence():
    slots = Slots(3)
    q = _query("a", [0, 0])
    q = Query(**{**q.__dict__, "report_every": 1.0, "first_report_after": 0.5})
    jobs = JobQueue().add(q)
    slots.assign(1, jobs[0])
    with pytest.raises(RuntimeError):
        slots.assign(1, jobs[1])
    assert slots.free() == [0, 2] and slots.busy == 1
    job = jobs[0]
    job.start(1, now=10.0)
    assert not job.report_due(10.4) and job.report_due(10.5)
    job.reported(10.6)
    assert job.next_report == 11.5  # on the cadence
    job.reported(14.0)  # a stall: no burst of overdue reports
    assert job.next_report == 15.0
    assert job.budget == q.max_visits - 1 == job.remaining
    job.simulations = 5
    assert job.remaining == job.budget - 5
    job.terminated = True
    assert job.remaining == 0
    assert slots.release(1) is job and slots.busy == 0


# --- values ---------------------------------------------------------------------------------

def _lc0_wdl_mu_cp(w: float, d: float) -> int:
    """lc0's ScoreType WDL_mu written out (search/classic/search.cc, default
    WDLCalibrationElo 0): 100 mu of the logistic fit, truncated toward zero."""
    loss = 1.0 - w - d
    a, b = math.log(1 / loss - 1), math.log(1 / w - 1)
    return math.trunc(100 * (a - b) / (a + b))


def test_score_cp_is_lc0s_default_score_type():
    for w, d in ((0.4, 0.4), (0.203, 0.582), (0.1, 0.3), (0.6, 0.35), (0.02, 0.9)):
        values = _values(w, d, 0.0, flip=False)
        assert values["scoreCp"] == _lc0_wdl_mu_cp(w, d), (w, d)
        # the other side's view: W and L swap, the score changes sign
        assert _values(w, d, 0.0, flip=True)["scoreCp"] == -values["scoreCp"]
    # a draw score moves q, not WDL_mu (which reads W, D, L)
    plain, scored = _values(0.2, 0.6, 0.0, False), _values(0.2, 0.6, 0.3, False)
    assert scored["q"] != plain["q"] and scored["scoreCp"] == plain["scoreCp"]
    # no draws (a network without a WDL spread): lc0 falls back to 45 tan(1.56728 (W - L))
    fallback = math.trunc(45 * math.tan(1.56728071628 * 0.4))
    assert _values(0.7, 0.0, 0.0, False)["scoreCp"] == fallback


def test_lcb_matches_katagos_formula_with_bernoulli_variance():
    # KataGo getSelfUtilityLCBAndRadius with unit weights and utility range radius 1,
    # scaled by 1/2 to winrate units (getHackedLCBForWinrate), variance 4 w (1 - w)
    for w, n in ((0.6, 10), (0.5, 1), (0.95, 400), (0.0, 3)):
        weight, weight_sq = float(n), float(n)
        ess = weight * weight / weight_sq
        prior = weight / ess**3
        mean = 2 * w - 1
        sq_avg = max(mean**2 + 4 * w * (1 - w), mean**2 + 1e-8)
        sq_avg = (sq_avg * weight + (sq_avg + 1.0) * prior) / (weight + prior)
        weight += prior
        weight_sq += prior * prior
        ess = weight * weight / weight_sq
        radius = 5.0 * math.sqrt((sq_avg - mean * mean) / ess) * 0.5
        assert winrate_lcb(w, n, 5.0) == pytest.approx(w - radius, rel=1e-12, abs=1e-12)
    assert winrate_lcb(0.6, 100, 5.0) > winrate_lcb(0.6, 10, 5.0)
    assert math.isnan(winrate_lcb(0.5, 0, 5.0))


# --- settings and input lines ----------------------------------------------------------------

def test_settings_file_and_errors(tmp_path):
    path = tmp_path / "a.yaml"
    path.write_text("slots: 8\nmax_visits: 100\nsearch: {cpuct: 2.0}\n")
    s = EngineSettings.from_file(path, slots=4)
    assert s.slots == 4 and s.max_visits == 100 and s.tree_nodes == 401
    assert s.search == SearchConfig(cpuct=2.0)
    path.write_text("slotz: 8\n")
    with pytest.raises(UserError, match="slotz"):
        EngineSettings.from_file(path)
    path.write_text("search: {cpuctt: 2}\n")
    with pytest.raises(UserError, match="cpuctt"):
        EngineSettings.from_file(path)
    with pytest.raises(UserError, match="not found"):
        EngineSettings.from_file(tmp_path / "missing.yaml")
    with pytest.raises(UserError, match="max_nodes"):
        EngineSettings(max_visits=500, max_nodes=100)
    assert EngineSettings(max_nodes=100).max_visits == 100
    with pytest.raises(UserError, match="slots"):
        EngineSettings(slots=0)
    with pytest.raises(UserError, match="report_analysis_winrates_as"):
        EngineSettings(report_analysis_winrates_as="RED")


def test_read_lines_skips_overlong_lines_without_holding_them():
    data = b"a\n" + b"x" * 5000 + b"\n" + b"b\r\n" + b"y" * 3000 + b"\nc"
    out = list(read_lines(io.BytesIO(data), max_bytes=2048))
    assert out[0] == b"a\n" and out[2] == b"b\r\n" and out[4] == b"c"
    assert isinstance(out[1], _LineTooLong) and out[1].size == 5001
    assert isinstance(out[3], _LineTooLong) and out[3].size == 3001


def test_the_evaluation_cache_is_on_and_reaches_the_searcher(monkeypatch):
    """The engine's Searcher gets the settings' cache (on by default), and a second search
    of a position the cache has seen is answered from it."""
    import chess

    from zerochess.analysis import slots
    from zerochess.neural import load_model

    assert EngineSettings().nn_cache_size > 0 and EngineSettings().cache_history_length == 7
    searcher = slots.make_searcher(load_model("resnet:1x8"), 17, workers=0, cache_size=512,
                                   cache_history_length=EngineSettings().cache_history_length)
    assert searcher.cache_size == 512 and searcher.cache_history_length == 7
    board = chess.Board()
    first = searcher.search([board], num_simulations=8, seed=1)[0]
    second = searcher.search([board], num_simulations=8, seed=1)[0]
    assert first.cache_hits == 0 and second.cache_hits > 0
    assert list(first.visits) == list(second.visits)  # the full-input key: equal results
    off = slots.make_searcher(load_model("resnet:1x8"), 17, workers=0)
    assert off.cache_size == 0


@pytest.mark.parametrize("values, text", [
    ({"nn_cache_size": -1}, "nn_cache_size must be >= 0"),
    ({"cache_history_length": 8}, "cache_history_length must be <= 7"),
])
def test_bad_cache_settings_are_refused(values, text):
    with pytest.raises(UserError, match=text):
        EngineSettings(**values)


def test_a_cache_larger_than_memory_is_refused_before_allocating():
    from zerochess.errors import ConfigError
    from zerochess.neural import load_model
    from zerochess.search import Searcher

    with pytest.raises(ConfigError, match=r"cache_size 2,000,000,000 needs .* entries fit here"):
        Searcher(load_model("resnet:1x8"), max_nodes=17, cache_size=2_000_000_000)
