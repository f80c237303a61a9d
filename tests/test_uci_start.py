"""``zerochess uci`` starts like an engine (issue 38): ``uciok`` before anything is built,
the build on a thread of its own with ``info string`` progress, ``isready`` waiting only
for it, a rebuild after ``setoption`` never charged to a timed search, and the clock
starting at ``go``. In-process with stand-in drivers: nothing here compiles (the real
engine's start is tests/test_uci_start_process.py, tier 2)."""

from __future__ import annotations

import io
import threading
import time

import chess
import pytest

from zerochess import program_store
from zerochess.uci.engine import UciEngine, _Build
from zerochess.uci.info import ThinkingInfo, format_info
from zerochess.uci.options import OptionValues


class _Lines(io.StringIO):
    """The engine's output, line by line, with an event per line."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []
        self.changed = threading.Condition()

    def write(self, text: str) -> int:
        with self.changed:
            self.lines += text.splitlines()
            self.changed.notify_all()
        return len(text)

    def wait_for(self, prefix: str, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                found = [x for x in self.lines if x.startswith(prefix)]
                if found:
                    return found[0]
                left = deadline - time.monotonic()
                assert left > 0, (prefix, self.lines)
                self.changed.wait(left)


class _Searched(Exception):
    pass


class _Driver:
    """Enough of ``SearchDriver`` for a ``go`` to reach the search (``start`` records the
    call and stops there) or the time-trouble move (``policy_move``)."""

    max_nodes = 1000
    floor_ms = 50.0  # a minimal search costs 50 ms: with 1 s left there is time for one

    def __init__(self) -> None:
        self.calls: list[str] = []

    def prepare(self, multipv: int) -> None:
        pass

    def policy_move(self, board):
        self.calls.append("policy_move")
        return next(iter(board.legal_moves))

    def start(self, board, config, seed, allow=None):
        self.calls.append("start")
        raise _Searched("the search started")


def test_uciok_at_once_and_isready_waits_for_the_background_build():
    release, entered = threading.Event(), threading.Event()
    built: list[OptionValues] = []

    def factory(options):
        entered.set()
        assert release.wait(10)
        built.append(options)
        return _Driver()

    out = _Lines()
    engine = UciEngine(out, driver_factory=factory, background=True)
    t0 = time.perf_counter()
    engine.handle("uci")
    assert out.lines[-1] == "uciok" and time.perf_counter() - t0 < 5
    assert entered.wait(10)  # the build started right after uciok, on its own thread
    answered = threading.Event()
    waiter = threading.Thread(target=lambda: (engine.handle("isready"), answered.set()))
    waiter.start()
    assert not answered.wait(0.3) and "readyok" not in out.lines  # waits for the build
    release.set()
    assert answered.wait(10) and out.lines[-1] == "readyok"
    waiter.join()
    assert len(built) == 1  # isready used the background build, no second one
    engine.handle("isready")
    assert len(built) == 1 and out.lines[-1] == "readyok"
    engine.close()


def test_isready_right_after_uci_starts_the_build_without_settling(monkeypatch):
    """The background build waits ``BUILD_SETTLE_S`` for options sent after ``uciok``;
    an ``isready`` (no option comes before it is answered) ends that wait at once."""
    from zerochess.uci import engine as uci_engine

    monkeypatch.setattr(uci_engine, "BUILD_SETTLE_S", 5.0)
    started: list[float] = []
    out = _Lines()
    engine = UciEngine(out, driver_factory=lambda options: started.append(
        time.perf_counter()) or _Driver(), background=True)
    engine.handle("uci")
    t0 = time.perf_counter()
    engine.handle("isready")
    assert out.lines[-1] == "readyok" and len(started) == 1
    assert started[0] - t0 < 2.0, started[0] - t0  # not the 5 s settle
    engine.close()


def test_setoption_rebuilds_in_the_background_once():
    keys: list[int] = []

    def factory(options):
        keys.append(int(options["Threads"]))
        return _Driver()

    out = _Lines()
    engine = UciEngine(out, driver_factory=factory, background=True)
    engine.handle("uci")
    engine.handle("isready")
    engine.handle("setoption name Threads value 3")  # a new driver: built at once
    deadline = time.monotonic() + 10
    while keys != [0, 3] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert keys == [0, 3]
    engine.handle("setoption name DrawScore value 0.1")  # per-search data: no build
    engine.handle("isready")
    assert keys == [0, 3] and out.lines[-1] == "readyok"
    engine.close()


def test_options_sent_right_after_uciok_are_built_once():
    """A GUI's setoption lines right after uciok: one build, of the driver they ask for
    (the defaults' build, started at uci, gives way before it begins)."""
    keys: list[tuple[int, int]] = []

    def factory(options):
        keys.append((int(options["Threads"]), int(options["MinibatchSize"])))
        return _Driver()

    out = _Lines()
    engine = UciEngine(out, driver_factory=factory, background=True)
    for line in ("uci", "setoption name Threads value 2", "setoption name MinibatchSize value 8",
                 "isready"):
        engine.handle(line)
    assert out.lines[-1] == "readyok" and keys == [(2, 8)]
    engine.close()


def _rebuild_then_go(background: bool) -> tuple[_Lines, list[_Driver]]:
    drivers: list[_Driver] = []

    def factory(options):
        if drivers:
            time.sleep(1.5)  # a rebuild that costs more than the whole clock
        drivers.append(_Driver())
        return drivers[-1]

    out = _Lines()
    engine = UciEngine(out, driver_factory=factory, background=background)
    for line in ("uci", "isready", "setoption name Threads value 4",
                 "position startpos", "go wtime 1000 btime 1000"):
        engine.handle(line)
    out.wait_for("bestmove")
    engine.close()
    return out, drivers


def test_a_rebuild_without_isready_is_not_charged_to_the_search():
    """setoption Threads, then go with 1 s on the clock and no isready: the 1.5 s rebuild
    would leave no time (the policy move); the search gets its clock instead."""
    for background in (False, True):
        out, drivers = _rebuild_then_go(background)
        assert len(drivers) == 2
        assert drivers[1].calls == ["start"], (background, drivers[1].calls, out.lines)
        assert not any("time trouble" in x for x in out.lines)
        assert any("not charged to the clock" in x for x in out.lines)


def test_the_clock_starts_at_go_not_at_position():
    out = _Lines()
    engine = UciEngine(out, driver_factory=lambda options: _Driver())
    engine.handle("isready")
    engine.handle("position startpos")
    time.sleep(0.3)
    before_go = time.perf_counter()
    engine.handle("go wtime 1000 btime 1000")
    assert engine.clock_start >= before_go
    out.wait_for("bestmove")
    # a second go on the same position starts from zero again
    time.sleep(0.2)
    before_go = time.perf_counter()
    engine.handle("go wtime 1000 btime 1000")
    assert engine.clock_start >= before_go
    engine.close()


def test_build_progress_lines():
    """The build says each stage, each program compiled (with its time), and when it is
    ready; loads are counted, not listed."""
    out = _Lines()

    def make(options, progress):
        progress("the search's steps")
        program_store.jit._tell("compiled", "zerochess.search.loop.select/state", 2.5)
        program_store.jit._tell("loaded", "zerochess.search.view.read_trees", 0.01)
        return _Driver()

    from zerochess.uci.engine import _Output

    build = _Build(("k",), make, OptionValues(), _Output(out))
    assert build.result() is not None
    assert out.lines[0] == "info string preparing the search: the search's steps ..."
    assert out.lines[1] == "info string compiled program 1 (select/state) in 2.5 s"
    assert out.lines[2].startswith("info string ready in ")
    assert out.lines[2].endswith("(1 programs compiled, 1 loaded from the cache)")
    assert all(x.startswith("info string ") for x in out.lines)


def test_a_search_without_playouts_never_shows_seldepth_below_depth():
    line = format_info(ThinkingInfo(depth=0, seldepth=0, time=5, nodes=601))
    assert line.startswith("info depth 1 seldepth 1 time 5 nodes 601")
    assert format_info(ThinkingInfo(depth=3, seldepth=7)).startswith("info depth 3 seldepth 7")


def test_warmup_refuses_a_cache_that_is_off(monkeypatch, capsys):
    from zerochess import compile_cache
    from zerochess.cli import main

    monkeypatch.setattr(compile_cache, "enable", lambda *a, **k: None)
    assert main(["warmup", "uci"]) == 2
    assert "the compilation cache is off" in capsys.readouterr().err


def test_a_bare_warmup_command_parses_and_a_bad_part_is_named(monkeypatch, capsys):
    """`zerochess warmup` with no part (the README's line) reaches the command: argparse's
    nargs="*" with choices refused it on Python 3.11 ("invalid choice: []", exit 2)."""
    from zerochess import compile_cache
    from zerochess.cli import main

    monkeypatch.setattr(compile_cache, "enable", lambda *a, **k: None)
    assert main(["warmup"]) == 2  # parsed; then refused only because the cache is off
    err = capsys.readouterr().err
    assert "the compilation cache is off" in err and "invalid choice" not in err
    assert main(["warmup", "uci", "bogus"]) == 2
    assert ("unknown part 'bogus' (choose from uci, analyse, analysis, search"
            in capsys.readouterr().err)


def test_warmup_has_an_analysis_part_named_in_its_help(monkeypatch, capsys):
    """`zerochess warmup analysis` parses and reaches the command (refused here only
    because the cache is off: nothing compiles); the part list and the help name it."""
    from zerochess import compile_cache
    from zerochess.cli import build_parser, main
    from zerochess.cli.warmup import PARTS

    monkeypatch.setattr(compile_cache, "enable", lambda *a, **k: None)
    assert main(["warmup", "analysis"]) == 2
    assert "the compilation cache is off" in capsys.readouterr().err
    assert "analysis" in PARTS
    with pytest.raises(SystemExit):
        build_parser().parse_args(["warmup", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "PART only these (uci, analyse, analysis, search; default all)" in help_text
    assert "`zerochess analysis`" in help_text
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    assert "analyse, analysis and" in " ".join(capsys.readouterr().out.split())


def test_warmup_analysis_starts_the_engine_at_the_commands_defaults(monkeypatch):
    """The part builds the engine with the settings `zerochess analysis` gets with no
    flags (the library defaults), serves it one query of the default size and drops the
    answer; an engine that answers no analysis fails the part. A stand-in engine: nothing
    compiles (the real one: tests/test_uci_start_process.py, tier 2)."""
    from zerochess.analysis import engine as engine_module
    from zerochess.analysis.protocol import Query, parse_line
    from zerochess.analysis.settings import EngineSettings
    from zerochess.cli import warmup

    made = []

    class _Rules:
        closed = False

        def close(self):
            self.closed = True

    class _Engine:
        answer = b'{"id":"warmup","moveInfos":[]}\n'

        def __init__(self, settings, output, log):
            self.settings, self.output, self.log, self.served = settings, output, log, None
            self.batch = type("B", (), {"searcher": type("S", (), {"rules": _Rules()})()})()
            made.append(self)

        def serve(self, stream):
            self.served = stream.read()
            self.log.write("compiling for 16 slots\nready in 1.0 s\n")
            self.output.write(self.answer)
            return 0

    monkeypatch.setattr(engine_module, "Engine", _Engine)
    said = []
    warmup.warm_analysis(said.append)
    [engine] = made
    assert engine.settings == EngineSettings()
    assert said == ["  analysis: compiling for 16 slots", "  analysis: ready in 1.0 s"]
    assert engine.batch.searcher.rules.closed
    query = parse_line(engine.served, engine.settings).item
    assert isinstance(query, Query) and [t.turn for t in query.turns] == [0]
    assert query.max_visits == EngineSettings().max_visits == 400
    assert query.turns[0].board() == chess.Board()
    _Engine.answer = b'{"error":"bad"}\n'
    with pytest.raises(RuntimeError, match="did not answer the warm-up query"):
        warmup.warm_analysis(said.append)


def test_warmup_names_what_the_search_part_compiled():
    """The search part runs under jax.jit, not the program store: the fresh-clone walk's
    warm-up printed "search: ready in 308.9 s (0 programs compiled, 0 loaded)"."""
    from zerochess.cli.warmup import part_line

    assert part_line("search", 308.94, {}, 120, 151) == (
        "search: ready in 308.9 s (31 new entries in jax's compilation cache)")
    assert part_line("uci", 230.0, {"compiled": 16}, 0, 40) == (
        "uci: ready in 230.0 s (16 programs compiled, 0 loaded)")
