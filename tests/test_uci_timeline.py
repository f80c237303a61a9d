"""``zerochess uci --timeline``: the figures ``zerochess bench --uci`` derives from a
search's record (checked by plain arithmetic on hand-made records), the input checks of
both commands, and a real search's record (in-process, builtin network)."""

from __future__ import annotations

import io
import json
import threading
import time

import pytest

from zerochess.cli import main
from zerochess.uci import timeline as tl


def test_records_marks_spans_and_samples(tmp_path):
    path = tmp_path / "t.jsonl"
    t = tl.Timeline(str(path))
    t0 = time.perf_counter()
    t.begin(t0, go={"movetime": 100}, fen="x")
    t.mark("tree", t0 + 0.010)
    t.mark("tree", t0 + 0.050)  # the first time counts
    t.add_span("run", 0.040)
    t.add_span("run", 0.020)
    t.sample(0, t0 + 0.020)
    t.sample(16, t0 + 0.030)
    t.sample(48, t0 + 0.070)
    t.mark("first_playout", t0 + 0.030)
    t.mark("stop", t0 + 0.100)
    t.mark("bestmove", t0 + 0.102)
    t.end(nodes=49, playouts=48, reused=1)
    [rec] = tl.read(str(path))
    assert rec["go"] == {"movetime": 100} and rec["nodes"] == 49
    assert rec["marks"]["tree"] == pytest.approx(10.0, abs=1e-3)
    assert rec["spans"]["run"] == [pytest.approx(60.0), 2]
    d = tl.derived(rec)
    assert d["to_tree"] == pytest.approx(10.0, abs=1e-3)
    assert d["to_first_playout"] == pytest.approx(30.0, abs=1e-3)
    # 32 playouts between the first sample with playouts (30 ms) and the last (70 ms)
    assert d["steady_nps"] == pytest.approx(32 / 0.040, rel=1e-6)
    assert d["deadline_to_bestmove"] == pytest.approx(2.0, abs=1e-3)
    assert d["stop_to_bestmove"] == pytest.approx(2.0, abs=1e-3)
    assert d["span_run"] == pytest.approx(60.0)
    # a second record; medians over both
    t.begin(time.perf_counter(), go={"movetime": 100})
    t.end(nodes=9)
    summary = tl.summarize(tl.read(str(path)))
    assert summary["searches"] == 2 and summary["nodes"] == 29  # median of 49 and 9


def test_null_timeline_records_nothing():
    t = tl.NullTimeline()
    t.begin(0.0)
    with t.span("x"):
        t.mark("y")
    t.end(nodes=1)
    assert not t.enabled


def test_bad_settings_are_one_line_errors(tmp_path, capsys):
    for argv, what in ((["bench", "--uci", "--movetimes", "0"], "--movetimes"),
                       (["bench", "--uci", "--games", "0"], "--games"),
                       (["bench", "--uci", "--tree-nodes", "-5"], "--tree-nodes"),
                       (["bench", "--uci", "--tree-nodes", str(2**31)], "--tree-nodes"),
                       (["uci", "--timeline", str(tmp_path / "no" / "dir" / "t.jsonl")],
                        "--timeline")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and what in err and "Traceback" not in err


def test_a_search_writes_its_record(tmp_path):
    """The engine in-process (builtin network, a small tree): ``go movetime 300`` writes
    one record whose marks are in order and whose counts match the last info line."""
    from zerochess.neural import load_model
    from zerochess.uci.driver import SearchDriver
    from zerochess.uci.engine import UciEngine

    lines: list[str] = []
    done = threading.Event()

    class Out(io.StringIO):
        def write(self, text: str) -> int:
            for line in text.splitlines():
                lines.append(line)
                if line.startswith("bestmove"):
                    done.set()
            return len(text)

    def factory(options):  # tests/test_uci_driver.py's shapes: its compiled programs
        driver = SearchDriver(load_model("builtin"), 2048,
                              searcher_kwargs={"leaves_per_step": 16, "cache_size": 4096})
        driver.warmup()
        return driver

    path = tmp_path / "t.jsonl"
    engine = UciEngine(Out(), driver_factory=factory, timeline=tl.Timeline(str(path)))
    for line in ("setoption name MoveOverheadMs value 0",
                 "setoption name SmartPruningFactor value 0", "isready",
                 "position startpos moves e2e4", "go movetime 300"):
        engine.handle(line)
    assert done.wait(60)
    engine.handle("quit")
    [rec] = tl.read(str(path))
    marks = rec["marks"]
    assert marks["thread"] <= marks["tree"] <= marks["first_playout"] <= marks["bestmove"]
    assert 300 <= marks["bestmove"] < 300 + 250  # the deadline, answered soon after
    last = [x.split() for x in lines if x.startswith("info depth")][-1]
    assert rec["nodes"] == int(last[last.index("nodes") + 1])
    assert rec["playouts"] == rec["nodes"] - rec["reused"] and rec["playouts"] > 0
    assert json.loads(json.dumps(rec)) == rec


def test_stop_is_not_held_up_by_a_long_step():
    """``stop`` during a step that runs long (here each step boundary is made 0.6 s late) is
    answered from the latest root picture within ``STOP_GRACE_S`` plus the answer's own
    time, as lc0 answers without the batch in flight; waiting for the step would take
    ~0.6 s. The move answered is a legal one the search saw."""
    import chess

    from zerochess.neural import load_model
    from zerochess.uci.driver import SearchDriver
    from zerochess.uci.engine import UciEngine
    from zerochess.uci.search_job import STOP_GRACE_S

    lines: list[tuple[float, str]] = []
    done = threading.Event()

    class Out(io.StringIO):
        def write(self, text: str) -> int:
            for line in text.splitlines():
                lines.append((time.perf_counter(), line))
                if line.startswith("bestmove"):
                    done.set()
            return len(text)

    def factory(options):  # the shapes of the test above: its compiled programs
        driver = SearchDriver(load_model("builtin"), 2048,
                              searcher_kwargs={"leaves_per_step": 16, "cache_size": 4096})
        driver.warmup()
        search = driver.search

        def slow_search(limit, time_left, on_step):
            def late(res):
                time.sleep(0.6)
                return on_step(res)
            return search(limit, time_left, late)

        driver.search = slow_search
        return driver

    engine = UciEngine(Out(), driver_factory=factory)
    for line in ("isready", "position startpos moves e2e4", "go infinite"):
        engine.handle(line)
    t_go = time.perf_counter()
    while not any(x.startswith("info depth") for _, x in lines):  # it searches
        assert time.perf_counter() - t_go < 60, lines
        time.sleep(0.01)
    time.sleep(0.25)  # inside a late step boundary
    assert not done.is_set()
    stop_at = time.perf_counter()
    engine.handle("stop")
    assert done.wait(10)
    at, text = next((t, x) for t, x in lines if x.startswith("bestmove"))
    engine.handle("quit")
    assert at - stop_at < STOP_GRACE_S + 0.2, at - stop_at
    board = chess.Board()
    board.push_uci("e2e4")
    assert chess.Move.from_uci(text.split()[1]) in board.legal_moves
