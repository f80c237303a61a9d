"""One ``go``: the search thread, its stoppers, ``info`` lines and ``bestmove`` (see
``docs/UCI.md``). ``engine.UciEngine`` starts one ``SearchJob`` per ``go``."""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from typing import Any, Protocol

import chess
import chess.polyglot
import numpy as np

from zerochess.search.results import SearchResult
from zerochess.uci.info import (
    ThinkingInfo,
    format_info,
    ponder_infos,
    thinking_infos,
    verbose_move_stats,
)
from zerochess.uci.protocol import GoParams, PositionSpec
from zerochess.uci.stoppers import (
    HINT_NEED_MORE_TIME,
    HINT_NORMAL,
    IterationStats,
    StoppersHints,
)
from zerochess.uci.time_manager import make_search_stopper


class JobOwner(Protocol):
    """What a ``SearchJob`` uses of the engine that starts it (``engine.UciEngine``)."""

    options: Any  # the engine's ``OptionValues``
    out: Any  # its output: ``send(line)`` and ``log(...)``
    timeline: Any  # its ``NullTimeline`` or ``Timeline``

    @property
    def driver(self) -> Any: ...

    def error(self, message: str) -> None: ...

INFO_INTERVAL_MS = 5000  # lc0 kUciInfoMinimumFrequencyMs
INFO_CHECK_MS = 100  # lc0's watchdog wakes at least this often
# `stop` is answered at the next step boundary, from a fresh read of the tree; a step still
# running this long after `stop` (a large batch, a busy machine) is not waited for: the
# watchdog answers from the latest root picture, as lc0 answers without the batch in flight
STOP_GRACE_S = 0.02
RESIGN_Q = -0.98  # lc0's hard-coded "may resign" threshold for smart pruning


def search_seed(seed: int, board: chess.Board) -> int:
    """The seed of a search: a function of the Seed option and the position (with its
    ply), so a replayed game repeats and different positions draw independently."""
    key = chess.polyglot.zobrist_hash(board)
    words = [seed, key & 0xFFFFFFFF, key >> 32, board.ply()]
    state = np.random.SeedSequence(words).generate_state(2, np.uint32)
    return int((int(state[0]) << 31) ^ int(state[1]))


class SearchJob:
    """One ``go``: runs on its own thread until it has printed ``bestmove`` (or is aborted)."""

    def __init__(self, engine: JobOwner, go: GoParams, position: PositionSpec | None,
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
        self._wake_watchdog.set()

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
        """lc0's watchdog: answers at the time stoppers' deadline, or ``STOP_GRACE_S`` after
        ``stop``, from the latest root picture, between two steps or not (a step may end
        after it)."""
        while not (self._answered or self.aborted.is_set() or self.done.is_set()):
            now = time.perf_counter()
            if self._stop_time is not None and now >= self._stop_time + STOP_GRACE_S:
                with self._lock:
                    if not self._answered and self.stop_requested.is_set():
                        self._mark_stop()
                        self._answer(self._last, read=False)
                continue
            deadline = None if self.waits_for_stop else self._deadline
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
            if self._stop_time is not None:
                wait = min(wait, self._stop_time + STOP_GRACE_S - now)
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

__all__ = ["INFO_CHECK_MS", "INFO_INTERVAL_MS", "RESIGN_Q", "SearchJob", "search_seed"]
