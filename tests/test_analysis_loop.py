"""The analysis engine's main loop in-process, over a stand-in batch (no search, no jax
programs): end of input, quitting without waiting, a failing device run, a client that
goes away. The real batch is tested through a subprocess in test_analysis_engine."""

from __future__ import annotations

import io
import json
import os
import threading
import time

import chess
import numpy as np

from zerochess.analysis.engine import Engine
from zerochess.analysis.settings import EngineSettings
from zerochess.analysis.slots import SlotReport
from zerochess.search.results import SearchResult
from zerochess.search.view import PV_LENGTH


class StandInBatch:
    """B slots whose 'search' puts every simulation on the first legal move."""

    supports_move_filters = False

    def __init__(self, slots: int, fail_runs: int = 0, step_seconds: float = 0.0):
        self.boards: list[chess.Board | None] = [None] * slots
        self.sims = np.zeros(slots, np.int64)
        self.fail_runs = fail_runs
        self.step_seconds = step_seconds
        self.resets = 0
        self.cleared = 0

    def __len__(self) -> int:
        return len(self.boards)

    def reset(self, slots, boards, configs, seeds, move_filters=None):
        for slot, board in zip(slots, boards, strict=True):
            self.boards[slot] = board
            self.sims[slot] = 0
            self.resets += 1

    def run(self, counts):
        if self.fail_runs:
            self.fail_runs -= 1
            raise RuntimeError("device lost")
        time.sleep(self.step_seconds * int(np.max(counts)))
        self.sims += np.asarray(counts)
        return self.sims.copy()

    def report(self, slot: int, need_pv_visits: bool = False) -> SlotReport:
        board = self.boards[slot]
        moves = list(board.legal_moves)
        n = len(moves)
        visits = np.zeros(n, np.int64)
        visits[0] = self.sims[slot]
        q = np.where(visits > 0, 0.1, np.nan).astype(np.float32)
        result = SearchResult(
            board=board, moves=moves, visits=visits, q=q, wl=np.full(n, 0.1, np.float32),
            d=np.full(n, 0.5, np.float32), prior=np.full(n, 1 / n, np.float32),
            policy=np.full(n, 1 / n, np.float32), pvs=[[] for _ in moves], best_index=0,
            root_visits=int(self.sims[slot]) + 1, root_q=0.1,
            root_wdl=np.array([0.3, 0.5, 0.2]), raw_wdl=np.array([0.3, 0.5, 0.2]),
            nodes_used=int(self.sims[slot]) + 1, dropped_simulations=0,
            mates=np.zeros(n, bool))
        return SlotReport(result, np.ones((n, 1 + PV_LENGTH), np.int64))

    def clear_cache(self):
        self.cleared += 1


def serve(lines: list[dict | str], slots: int = 2, settings: EngineSettings | None = None,
          batch: StandInBatch | None = None) -> tuple[list[dict], int, StandInBatch]:
    batch = batch or StandInBatch(slots)
    out = io.BytesIO()
    engine = Engine(settings or EngineSettings(slots=slots), batch_factory=lambda: batch,
                    output=out, log=io.StringIO())
    data = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines).encode()
    code = engine.serve(io.BytesIO(data))
    return [json.loads(x) for x in out.getvalue().splitlines()], code, batch


def test_end_of_input_finishes_every_queued_turn():
    queries = [{"id": f"q{i}", "moves": ["e2e4"], "analyzeTurns": [0, 1], "maxVisits": 5 + i}
               for i in range(5)]
    out, code, batch = serve(queries, slots=2)
    assert code == 0 and batch.resets == 10
    finals = [m for m in out if m.get("isDuringSearch") is False]
    assert sorted((m["id"], m["turnNumber"]) for m in finals) == sorted(
        (f"q{i}", t) for i in range(5) for t in (0, 1))
    for m in finals:
        assert m["rootInfo"]["visits"] == 5 + int(m["id"][1:])


def test_actions_are_acknowledged_and_a_terminated_turn_still_ends_once():
    out, _, batch = serve([{"id": "a", "action": "clear_cache"},
                           {"id": "q", "moves": [], "maxVisits": 10**6},
                           {"id": "t", "action": "terminate", "terminateId": "q"}], slots=1)
    assert [m["field"] for m in out if "warning" in m] == ["maxVisits"]  # clamped to the tree
    out = [m for m in out if "warning" not in m]
    assert out[0] == {"id": "a", "action": "clear_cache"} and batch.cleared == 1
    assert {"id": "t", "action": "terminate", "terminateId": "q"} in out
    [final] = [m for m in out if m.get("id") == "q"]
    assert final["isDuringSearch"] is False
    assert final.get("noResults") or final["rootInfo"]["visits"] < 10**6


def test_quit_without_waiting_stops_open_searches():
    batch = StandInBatch(2, step_seconds=0.002)
    read_fd, write_fd = os.pipe()
    out = io.BytesIO()
    engine = Engine(EngineSettings(slots=2, quit_without_waiting=True),
                    batch_factory=lambda: batch, output=out, log=io.StringIO())
    thread = threading.Thread(target=engine.serve, args=(os.fdopen(read_fd, "rb"),))
    thread.start()
    with os.fdopen(write_fd, "wb") as stdin:
        for i in range(4):
            stdin.write(json.dumps({"id": f"q{i}", "moves": [], "maxVisits": 10**6,
                                    "reportDuringSearchEvery": 0.01}).encode() + b"\n")
        stdin.flush()
        deadline = time.monotonic() + 30
        while b"isDuringSearch\":true" not in out.getvalue():
            assert time.monotonic() < deadline
            time.sleep(0.01)
    thread.join(timeout=30)
    assert not thread.is_alive()
    finals = [json.loads(x) for x in out.getvalue().splitlines()
              if b"isDuringSearch\":false" in x]
    assert sorted(m["id"] for m in finals) == ["q0", "q1", "q2", "q3"]
    stopped = [m["rootInfo"]["visits"] for m in finals if not m.get("noResults")]
    assert len(stopped) == 2 and max(stopped) > 1 and max(stopped) < 10**6
    assert sum(bool(m.get("noResults")) for m in finals) == 2


def test_a_failing_run_fails_its_turns_and_the_engine_goes_on():
    out, code, _ = serve([{"id": "a", "moves": [], "maxVisits": 4},
                          {"id": "later", "moves": [], "maxVisits": 4}],
                         batch=StandInBatch(1, fail_runs=1))
    assert code == 0
    # "a" was in the failed run: an error naming it, then its one final response
    a = [m for m in out if m.get("id") == "a"]
    assert "internal error" in a[0]["error"] and len(a) == 2
    assert a[1] == {"id": "a", "turnNumber": 0, "isDuringSearch": False, "noResults": True}
    [later] = [m for m in out if m.get("id") == "later"]
    assert later["rootInfo"]["visits"] == 4


class ClosedOutput(io.RawIOBase):
    def write(self, data):
        raise BrokenPipeError

    def writable(self):
        return True


def test_a_client_that_goes_away_stops_the_engine():
    read_fd, write_fd = os.pipe()
    engine = Engine(EngineSettings(slots=1), batch_factory=lambda: StandInBatch(1),
                    output=ClosedOutput(), log=io.StringIO())
    done = []
    thread = threading.Thread(target=lambda: done.append(
        engine.serve(os.fdopen(read_fd, "rb"))), daemon=True)
    thread.start()
    with os.fdopen(write_fd, "wb") as stdin:
        stdin.write(b'{"id": "q", "moves": [], "maxVisits": 100000}\n')
        stdin.flush()
        thread.join(timeout=30)
        assert done == [0]  # returned with the input still open


class RecordingBatch(StandInBatch):
    """A stand-in that records which slots each run gave simulations to."""

    def __init__(self, slots: int):
        super().__init__(slots, step_seconds=0.0002)  # the lows need several runs
        self.runs: list[np.ndarray] = []

    def run(self, counts):
        self.runs.append(np.asarray(counts).copy())
        return super().run(counts)


def test_lower_priorities_idle_while_a_higher_one_searches():
    """Priority inside the batch: while a turn of a higher priority is in a slot, the
    slots of lower priorities get no simulations (they keep their trees and go on
    afterwards); equal priorities share every run."""
    batch = RecordingBatch(3)
    queries = [{"id": "low1", "moves": [], "maxVisits": 400, "priority": 0},
               {"id": "low2", "moves": [], "maxVisits": 400, "priority": 0},
               {"id": "high", "moves": ["e2e4"], "maxVisits": 300, "priority": 5}]
    out, code, _ = serve(queries, slots=3, batch=batch)
    assert code == 0
    finals = [m["id"] for m in out if m.get("isDuringSearch") is False]
    assert finals[0] == "high" and sorted(finals) == ["high", "low1", "low2"]
    visits = {m["id"]: m["rootInfo"]["visits"] for m in out
              if m.get("isDuringSearch") is False}
    assert visits == {"low1": 400, "low2": 400, "high": 300}
    high_slot = next(i for i, b in enumerate(batch.boards) if b is not None and b.move_stack)
    shared = 0
    for counts in batch.runs:
        others = np.delete(counts, high_slot)
        if counts[high_slot] > 0:
            assert not others.any(), counts  # lower priorities idle meanwhile
        elif (others > 0).all():
            shared += 1  # the two equal priorities run together
    assert shared >= 1


def _serve_live(settings: EngineSettings, batch: StandInBatch):
    """An engine serving a pipe in a thread: (send(dict), close(), output bytes, engine)."""
    read_fd, write_fd = os.pipe()
    out = io.BytesIO()
    engine = Engine(settings, batch_factory=lambda: batch, output=out, log=io.StringIO())
    thread = threading.Thread(target=engine.serve, args=(os.fdopen(read_fd, "rb"),))
    thread.start()
    stdin = os.fdopen(write_fd, "wb")

    def send(query: dict) -> None:
        stdin.write(json.dumps(query).encode() + b"\n")
        stdin.flush()

    def close() -> list[dict]:
        stdin.close()
        thread.join(timeout=60)
        assert not thread.is_alive()
        return [json.loads(x) for x in out.getvalue().splitlines()]

    return send, close, out, engine


def _wait_for(out: io.BytesIO, needle: bytes) -> None:
    deadline = time.monotonic() + 30
    while needle not in out.getvalue():
        assert time.monotonic() < deadline, needle
        time.sleep(0.005)


def test_a_higher_priority_preempts_a_searching_lower_one_which_starts_over():
    """One slot, busy with a long low-priority search: a high-priority query takes the
    slot at once and is answered first; the low one goes back to the queue, starts over
    (a second reset of its slot) and still ends with exactly its visits.
    With ``preempt_lower_priorities`` off the high one waits for the slot."""
    for preempt in (True, False):
        batch = StandInBatch(1, step_seconds=0.001)
        send, close, out, engine = _serve_live(
            EngineSettings(slots=1, max_nodes=4001, preempt_lower_priorities=preempt), batch)
        send({"id": "low", "moves": [], "maxVisits": 1500, "reportDuringSearchEvery": 0.02})
        _wait_for(out, b'"isDuringSearch":true')
        send({"id": "high", "moves": ["e2e4"], "maxVisits": 100, "priority": 3})
        msgs = close()
        finals = [m for m in msgs if m.get("isDuringSearch") is False]
        assert {m["id"]: m["rootInfo"]["visits"] for m in finals} == {"low": 1500, "high": 100}
        assert [m["id"] for m in finals] == (["high", "low"] if preempt else ["low", "high"])
        assert engine.preempted == (1 if preempt else 0)
        assert batch.resets == (3 if preempt else 2)  # the low search started twice


def test_a_query_terminated_before_its_search_ran_gets_no_results():
    """KataGo answers a query terminated before any analysis with ``noResults`` (its only
    fields: id, turnNumber, isDuringSearch false, noResults true), not with a final
    analysis of the root's one visit and no moves: also when the turn was already in a
    slot, its root evaluated, but no simulation had run (issue 26, item 21)."""
    from zerochess.analysis.protocol import parse_line

    batch = StandInBatch(1)
    out = io.BytesIO()
    settings = EngineSettings(slots=1)
    engine = Engine(settings, batch_factory=lambda: batch, output=out, log=io.StringIO())
    query = parse_line(json.dumps({"id": "q", "moves": ["e2e4"], "analyzeTurns": [0, 1],
                                   "maxVisits": 50}), settings).item
    engine.queue.add(query)
    engine._fill_slots()  # turn 0 starts in the slot (reset: root evaluated), turn 1 waits
    assert batch.resets == 1 and batch.sims.sum() == 0
    engine._act(parse_line(json.dumps({"id": "t", "action": "terminate", "terminateId": "q"}),
                           settings).item)
    answers = [json.loads(x) for x in out.getvalue().splitlines()]
    finals = sorted((m for m in answers if m.get("id") == "q"), key=lambda m: m["turnNumber"])
    assert finals == [{"id": "q", "turnNumber": t, "isDuringSearch": False, "noResults": True}
                      for t in (0, 1)]
    assert engine.slots.busy == 0


def test_start_up_counts_and_logs_programs_and_a_compile_while_serving():
    """The log says each program compiled at start-up (with its time), then how many were
    compiled and loaded (the line tests/test_uci_start_process.py reads after ``zerochess
    warmup analysis``); a program compiled while serving is logged too: a query waited."""
    from zerochess import program_store

    batch = StandInBatch(1)

    def build():
        program_store.jit._tell("compiled", "zerochess.search.loop.select/state", 2.5)
        program_store.jit._tell("loaded", "zerochess.search.view.read_trees", 0.01)
        return batch

    log = io.StringIO()
    engine = Engine(EngineSettings(slots=1), batch_factory=build, output=io.BytesIO(), log=log)
    lines = log.getvalue().splitlines()
    assert lines[0] == "compiled program 1 (select/state) in 2.5 s"
    assert lines[1].startswith("ready in ")
    assert lines[1].endswith(" s (1 programs compiled, 1 loaded from the cache)")
    assert dict(engine.programs) == {"compiled": 1, "loaded": 1}

    def run(counts):
        program_store.jit._tell("compiled", "zerochess.search.step.network", 3.0)
        return StandInBatch.run(batch, counts)

    batch.run = run
    engine.serve(io.BytesIO(b'{"id":"q","moves":[],"maxVisits":3}\n'))
    assert "compiled program 2 (network) in 3.0 s" in log.getvalue().splitlines()
    program_store.jit._tell("compiled", "zerochess.elsewhere", 1.0)  # after: not heard
    assert engine.programs["compiled"] == 2
