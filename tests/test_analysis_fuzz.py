"""Fuzz of ``zerochess analysis``: hostile input lines mixed with valid queries.

Through the real engine (a subprocess, the built-in evaluator): random bytes, truncated
JSON, wrong types, out-of-range and huge numbers, NaN/Infinity, illegal moves (first and
later in a game), 1 MB lines, deep nesting, non-objects, missing ids, bad actions and
random mutations of valid queries, mixed with valid queries. Properties:

- the engine never crashes and never writes a line that is not JSON or an internal error;
- every bad line gets exactly one error, in input order, with the query's id when it had a
  string id, naming the bad field where there is one (and nothing else: no results);
- every valid query gets one final response per requested turn, each checked with
  python-chess (FEN, hash, legal moves, PVs, visit sums), and a few per corpus equal the
  library's search of the position alone (``analysis_support.reference_search``);
- a mutated query gets either exactly one error and nothing else, or its results;
- warnings go to exactly the queries with unknown fields.

``test_fuzz_sample`` (default run): 3 corpora of 100 lines. ``test_fuzz_ten_thousand_lines``
(``-m slow``): 40 corpora of 260 lines = 10,400 lines through one engine. Corpora are drawn
by hypothesis, derandomized (reproducible).
"""

from __future__ import annotations

import itertools
import json
import random

import chess
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from zerochess.analysis import Client
from zerochess.neural import load_model
from zerochess.search import Searcher

from analysis_support import (
    FOOLS_MATE,
    ITALIAN,
    STALEMATE,
    assert_matches,
    board_at,
    check_response,
    finals,
    reference_search,
)

pytestmark = pytest.mark.tier2  # an engine subprocess (README, Tests)

SLOTS = 4
NODES = 257  # a clamped maxVisits (huge numbers in mutants) stays cheap


@pytest.fixture(scope="module")
def engine_process():
    client = Client(slots=SLOTS, max_nodes=NODES, max_visits=9, workers=0, wait_ready=False)
    yield client
    client.kill()


@pytest.fixture(scope="module")
def reference():
    """Search one position alone with the library (the engine must give the same)."""
    # two shards, as the engine's batch of slots on a CPU
    searcher = Searcher(load_model("builtin"), max_nodes=NODES, num_workers=0, shards=2)
    search = reference_search(searcher)
    search(chess.Board(), 2)  # compile while the engine compiles
    return search


@pytest.fixture(scope="module")
def engine(engine_process, reference):
    engine_process.wait_ready(timeout=900)
    yield engine_process
    assert engine_process.close(timeout=300) == 0  # and it still exits cleanly


def _games(seed: int = 7) -> list[tuple[str | None, list[str]]]:
    """Positions for valid queries: random legal games (python-chess) and special cases."""
    rng = random.Random(seed)
    games: list[tuple[str | None, list[str]]] = [(None, FOOLS_MATE), (STALEMATE, []),
                                                  (ITALIAN, ["g8f6", "d2d3"])]
    for plies in (6, 15, 30, 45):
        board = chess.Board()
        moves = []
        for _ in range(plies):
            legal = list(board.legal_moves)
            if not legal:
                break
            move = rng.choice(legal)
            moves.append(move.uci())
            board.push(move)
        games.append((None, moves))
    return games


GAMES = _games()
# per field, values that must be refused (wrong type, out of range, illegal, unsupported)
BAD_VALUES = {
    "moves": [None, "e2e4", 5, [5], ["e2e5"], [["e2e4"]], {"a": 1}, ["e2e4", "e2e4"]],
    "initialFen": [None, 5, "e2e4", "x" * 300, "8/8/8/8/8/8/8/8 w - - 0 1", ["startpos"]],
    "analyzeTurns": [0, [3], [-1], ["1"], [1.0], [True], None, {}],
    "maxVisits": [None, True, -1, 0, 2**53, 10**30, 1.5, "3", [3]],
    "analysisPVLen": [0, 1001, "5", 2.0, None],
    "includePolicy": [1, "true", None, []],
    "includePVVisits": [0, "false", None, {}],
    "reportDuringSearchEvery": [0, -1, 1e7, "1", None, True],
    "firstReportDuringSearchAfter": [0, 1e300, "1", []],
    "priority": [2**63, -(2**63), 1.5, "high", None, True],
    "priorities": [[1, 2, 3], "1", None],  # without analyzeTurns: refused whatever the value
    "seed": [-1, 2**63, 0.5, "1", None],
    "rootFpuReductionMax": [2.5, -0.1, "x", None],
    "rootPolicyTemperature": [1.0, 0, 200],
    "overrideSettings": [[], "x", 3, None, {"cpuct": "x"}, {"cpuct": -1}, {"n_scl": 0},
                         {"selection": 1}, {"cpuct": 1e300}, {"maxVisits": 0},
                         {"policy_temperature": 0}, {"draw_score": 3}, {"n_scl": 1.5}],
    "avoidMoves": [None, {}, [{"moves": ["e2e4"], "untilDepth": 0}], [{"moves": "e2e4"}],
                   [{"untilDepth": 2}], [5], [{"moves": ["g1f3", "g1h3", "g1e2", "b1c3", "b1a3",
                   "f1e2", "f1d3", "f1c4", "f1b5", "f1a6", "d1e2", "d1f3", "d1g4", "d1h5",
                   "e1e2", "a2a3", "a2a4", "b2b3", "b2b4", "c2c3", "c2c4", "d2d3", "d2d4",
                   "f2f3", "f2f4", "g2g3", "g2g4", "h2h3", "h2h4"]}]],  # avoids every move
    "allowMoves": [None, [{"moves": ["e2e4"]}], [{}, {}]],  # e2e4: illegal there
}


@st.composite
def valid_query(draw, index: str) -> dict:
    fen, moves = draw(st.sampled_from(GAMES))
    n = draw(st.integers(0, len(moves)))
    query: dict = {"id": f"ok-{index}", "moves": moves[:n], "maxVisits": draw(st.integers(1, 9))}
    if fen:
        query["initialFen"] = fen
    if draw(st.booleans()):
        turns = draw(st.lists(st.integers(0, n), min_size=1, max_size=3))
        query["analyzeTurns"] = turns
        if draw(st.booleans()):
            query["priorities"] = draw(st.lists(st.integers(-5, 5), min_size=len(turns),
                                                max_size=len(turns)))
    elif draw(st.booleans()):
        query["priority"] = draw(st.integers(-5, 5))
    for flag in ("includePolicy", "includePVVisits"):
        if draw(st.booleans()):
            query[flag] = draw(st.booleans())
    if draw(st.booleans()):
        query["analysisPVLen"] = draw(st.integers(1, 20))
    if draw(st.booleans()):
        query["seed"] = draw(st.integers(0, 2**63 - 1))
    if draw(st.booleans()):
        query["overrideSettings"] = draw(st.fixed_dictionaries({}, optional={
            "cpuct": st.floats(0.1, 4.0), "n_scl": st.one_of(st.none(), st.integers(1, 6)),
            "selection": st.sampled_from(["puct", "alphazero"]),
            "fpu_value": st.floats(0.0, 1.0), "draw_score": st.floats(-0.5, 0.5),
            "policy_temperature": st.floats(0.5, 2.5),
            "dirichlet_epsilon": st.floats(0.0, 0.5),
        }))
    if draw(st.integers(0, 9)) == 0:
        query["someUnknownField"] = draw(st.integers())
    return query


@st.composite
def bad_line(draw, index: str) -> tuple[bytes, str | None, str | None]:
    """(line, id the error must carry (None: none), field it must name (None: unchecked))."""
    qid = f"bad-{index}"
    kind = draw(st.sampled_from(["bytes", "truncated", "field", "moves", "later", "deep",
                                 "huge", "constant", "nonobject", "noid", "action", "long"]))
    base = {"id": qid, "moves": ["e2e4", "e7e5"], "maxVisits": 3}
    if kind == "bytes":
        raw = draw(st.binary(min_size=1, max_size=300)).replace(b"\n", b" ")
        try:
            obj = json.loads(raw)
        except ValueError:
            obj = None
        if not raw.strip() or isinstance(obj, dict):
            raw = b"\x00" + raw
        return raw, None, None
    if kind == "truncated":
        text = json.dumps(base | {"includePolicy": True})
        return text[:draw(st.integers(1, len(text) - 1))].encode(), None, None
    if kind == "field":
        field = draw(st.sampled_from(sorted(BAD_VALUES)))
        value = draw(st.sampled_from(BAD_VALUES[field]))
        if field == "priorities":
            return json.dumps(base | {"priorities": value}).encode(), qid, field
        return json.dumps(base | {field: value}).encode(), qid, field
    if kind == "moves":
        board = chess.Board()
        legal = {m.uci() for m in board.legal_moves}
        uci = draw(st.sampled_from(["e2e5", "a1a8", "e1g1", "e7e5", "a2a5", "g1g3", "0000",
                                    "e2e4q", "e9e4", "zz", "e2", "E2E4"]))
        assert uci not in legal
        return json.dumps({"id": qid, "moves": [uci]}).encode(), qid, "moves"
    if kind == "later":  # a legal game, then one illegal move: the error names its index
        fen, moves = draw(st.sampled_from([g for g in GAMES if g[1]]))
        k = draw(st.integers(1, len(moves)))
        board = board_at(moves[:k], fen)
        legal = {m.uci() for m in board.legal_moves}
        uci = draw(st.sampled_from([u for u in ("e2e4", "e7e5", "e1g1", "e8c8", "a7a8q", "h2h1",
                                                "d1d8", "g8f6", "b1c3") if u not in legal]))
        obj = {"id": qid, "moves": [*moves[:k], uci, *moves[k:]]}
        if fen:
            obj["initialFen"] = fen
        return json.dumps(obj).encode(), qid, "moves"
    if kind == "constant":  # not JSON numbers, though Python's json would read them
        value = draw(st.sampled_from(["NaN", "Infinity", "-Infinity", "-1e400", "1e309"]))
        field = draw(st.sampled_from(["maxVisits", "priority", "seed", "reportDuringSearchEvery"]))
        return f'{{"id":"{qid}","moves":[],"{field}":{value}}}'.encode(), None, None
    if kind == "deep":
        depth = draw(st.sampled_from([1000, 100_000]))
        opener = draw(st.sampled_from(["[", '{"a":']))
        tail = draw(st.sampled_from(["", "1"]))
        return (opener * depth + tail).encode(), None, None
    if kind == "huge":
        which = draw(st.integers(0, 3))
        if which == 0:
            return f'{{"id":"{qid}","moves":[],"maxVisits":1e999}}'.encode(), None, None
        if which == 1:
            return (f'{{"id":"{qid}","moves":[],"seed":' + "7" * 5000 + "}").encode(), None, None
        if which == 2:
            return json.dumps(base | {"maxVisits": 2**70}).encode(), qid, "maxVisits"
        return json.dumps(base | {"priority": -(2**64)}).encode(), qid, "priority"
    if kind == "nonobject":
        return draw(st.sampled_from([b"[]", b"3", b'"s"', b"null", b"true", b"[{}]"])), None, None
    if kind == "noid":
        value = draw(st.sampled_from([None, 3, [], {}, True]))
        obj = {"moves": []} if value is None else {"id": value, "moves": []}
        return json.dumps(obj).encode(), None, "id"
    if kind == "action":
        obj = draw(st.sampled_from([
            ({"id": qid, "action": "dance"}, "action"),
            ({"id": qid, "action": 7}, "action"),
            ({"id": qid, "action": "terminate"}, "terminateId"),
            ({"id": qid, "action": "terminate_all", "turnNumbers": "1"}, "turnNumbers"),
        ]))
        return json.dumps(obj[0]).encode(), qid, obj[1]
    # ~1 MB lines
    which = draw(st.integers(0, 2))
    if which == 0:
        return b"x" * 2**20, None, None
    if which == 1:
        return json.dumps({"id": qid, "moves": ["e2e4", "e7e5"] * 70_000}).encode(), qid, "moves"
    big_id = "I" * 2**20
    return json.dumps({"id": big_id, "moves": 5}).encode(), big_id, "moves"




JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=8)
MUTABLE = sorted(set(BAD_VALUES) - {"priorities"}) + ["action", "terminateId", "turnNumbers"]


@st.composite
def mutant(draw, index: str) -> dict:
    """A valid query with one field set to an arbitrary JSON value: it may or may not be
    valid (the engine must give either exactly one error or the results)."""
    query = draw(valid_query(index))
    query["id"] = f"mut-{index}"
    query.pop("priorities", None)
    query[draw(st.sampled_from(MUTABLE))] = draw(JSON)
    return query


def expected_turns(query: dict) -> list[int]:
    turns = query.get("analyzeTurns")
    return sorted(set(turns)) if isinstance(turns, list) else [len(query["moves"])]


def check_finals(client: Client, query: dict) -> None:
    """One final response per requested turn, each right by python-chess."""
    turns = expected_turns(query)
    results = client.wait(query["id"], timeout=600, turns=len(turns)) if turns else []
    assert [r["turnNumber"] for r in results] == turns
    assert len(finals(client, query["id"])) == len(turns)
    visits = min(query.get("maxVisits", 9), NODES)
    for r in results:
        board = board_at(query["moves"], query.get("initialFen"), r["turnNumber"])
        check_response(r, board, visits, pv_len=query.get("analysisPVLen", 15),
                       policy=query.get("includePolicy", False),
                       pv_visits=query.get("includePVVisits", False))


def run_corpus(client: Client, reference, items: list, exact: int = 3) -> None:
    """Send valid queries, mutants (dicts) and bad lines (tuples) mixed, then check that the
    engine answered every bad line with exactly one error, in order, every valid query
    correctly, and every mutant with either one error or its results."""
    start = len(client.received)
    bad, valid, mutants, warn_ids = [], [], [], []
    payload = []
    for item in items:
        if isinstance(item, dict):
            is_mutant = item["id"].startswith("mut-")
            (mutants if is_mutant else valid).append(item)
            if "someUnknownField" in item and not is_mutant:  # a mutant may be refused
                warn_ids.append(item["id"])
            line = json.dumps(item).encode()
            payload.append(line + b"\r" if len(payload) % 5 == 0 else line)  # CRLF ends
        else:
            bad.append(item)
            payload.append(item[0])
        if len(payload) % 7 == 0:
            payload.append(b"   ")  # blank lines are skipped silently
    client.send_raw(b"\n".join(payload))
    # answered after every line before it was read (generous: a loaded CI machine)
    sentinel = client.action("query_version", timeout=600)
    for q in valid:
        check_finals(client, q)
    mutant_errors = {}
    for q in mutants:
        mine = [r.data for r in client.messages(q["id"])]
        errors = [m for m in mine if "error" in m]
        if errors:
            assert len(errors) == 1 and errors[0].get("field") in q, (q, mine)
            assert not [m for m in mine if "turnNumber" in m or "warning" in m], (q, mine)
            mutant_errors[q["id"]] = errors[0]
        else:
            check_finals(client, q)
    checked = 0
    for q in valid:
        if checked >= exact or "overrideSettings" in q:
            continue
        for r in finals(client, q["id"]):
            board = board_at(q["moves"], q.get("initialFen"), r["turnNumber"])
            if not any(board.legal_moves):
                continue
            assert_matches(r, reference(board, q["maxVisits"], seed=q.get("seed", 0)),
                           pv_len=q.get("analysisPVLen", 15))
            checked += 1
    window = [r.data for r in client.received[start:]]
    assert not any("_unparsable" in m for m in window)
    assert not any("internal error" in m.get("error", "") for m in window)
    end = next(i for i, m in enumerate(window) if m.get("id") == sentinel["id"])
    errors = [m for m in window[:end] if "error" in m and m.get("id") not in mutant_errors]
    assert len(errors) == len(bad)
    for err, (_, qid, field) in zip(errors, bad, strict=True):
        assert err.get("id") == qid
        if field is not None:
            assert err["field"] == field, (err, field)
    bad_ids = {qid for _, qid, _ in bad if qid is not None}
    assert not [m for m in window if m.get("id") in bad_ids and "error" not in m]
    mutant_ids = {q["id"] for q in mutants}
    warnings = [m for m in window if "warning" in m and m["id"] not in mutant_ids]
    assert sorted(w["id"] for w in warnings) == sorted(warn_ids)
    assert client.process.poll() is None  # alive


_RUNS = itertools.count()


def corpus(draw, size: int) -> list:
    """``size`` lines: about one in five a valid query, one in ten a mutant, the rest bad
    lines; ids unique in the engine's life."""
    run = next(_RUNS)
    items = []
    for i in range(size):
        kind = draw(st.integers(0, 9))
        if kind < 2:
            items.append(draw(valid_query(f"{run}.{i}")))
        elif kind == 2:
            items.append(draw(mutant(f"{run}.{i}")))
        else:
            items.append(draw(bad_line(f"{run}.{i}")))
    return items


# derandomized (reproducible); no shrinking: every example costs engine time, and a failure
# prints the whole corpus anyway
FUZZ = settings(deadline=None, derandomize=True, database=None,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck))


@settings(FUZZ, max_examples=3)
@given(data=st.data())
def test_fuzz_sample(engine, reference, data):
    run_corpus(engine, reference, corpus(data.draw, 100))


@pytest.mark.slow
@settings(FUZZ, max_examples=40)
@given(data=st.data())
def test_fuzz_ten_thousand_lines(engine, reference, data):
    run_corpus(engine, reference, corpus(data.draw, 260), exact=1)
