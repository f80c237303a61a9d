"""``zerochess analysis``: a KataGo-style JSON analysis engine with continuous batching."""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

from zerochess import program_store
from zerochess.analysis import report
from zerochess.analysis.protocol import Action, Parsed, Query, error_message, parse_line
from zerochess.analysis.scheduler import Job, JobQueue, Slots
from zerochess.analysis.settings import READY, EngineSettings, from_args
from zerochess.errors import UserError

MAX_CHUNK_STEPS = 1024
MAX_FIXED_SHARE = 0.2  # a run's fixed cost is at most this share of its time
_EOF = object()


class _LineTooLong:
    def __init__(self, size: int):
        self.size = size


def read_lines(stream: IO[bytes], max_bytes: int) -> Iterator[bytes | _LineTooLong]:
    """Lines of a binary stream; a line over ``max_bytes`` is skipped (never held whole)."""
    while True:
        line = stream.readline(max_bytes + 1)
        if not line:
            return
        if len(line) > max_bytes and not line.endswith(b"\n"):
            size = len(line)
            while True:
                rest = stream.readline(1 << 20)
                size += len(rest)
                if not rest or rest.endswith(b"\n"):
                    break
            yield _LineTooLong(size)
            continue
        yield line


class Writer:
    """One JSON object per line on the output, from any thread."""

    def __init__(self, stream: IO[bytes]):
        self._stream = stream
        self._lock = threading.Lock()
        self.broken = False

    def write(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        with self._lock:
            if self.broken:
                return
            try:
                self._stream.write(data)
                self._stream.flush()
            except (BrokenPipeError, ValueError, OSError):
                self.broken = True  # the client went away: the engine winds down


def git_hash() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent,
                             capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return "<omitted>"
    text = out.stdout.strip()
    return text if out.returncode == 0 and len(text) == 40 else "<omitted>"


class Engine:
    """The analysis engine over a ``SlotBatch`` (see docs/DESIGN.md).

    Args:
      settings: engine settings (slots, tree size, defaults of every query).
      batch_factory: builds the device batch (a ``SlotBatch``: ``reset``, ``run``,
        ``report``, ``clear_cache``); default: from ``settings``. Called again to start
        afresh if a run fails.
      output: binary stream for the responses (default stdout).
      log: text stream for the log (default stderr).
    """

    def __init__(self, settings: EngineSettings, batch_factory: Callable[[], Any] | None = None,
                 output: IO[bytes] | None = None, log: IO[str] | None = None):
        self.settings = settings
        self.log = log if log is not None else sys.stderr
        self.writer = Writer(output if output is not None else sys.stdout.buffer)
        self._batch_factory = batch_factory or (lambda: self._build_batch(settings))
        # programs compiled or loaded from the store (``zerochess warmup analysis`` fills
        # it), counted from here on: at start-up, and while serving (a compile then is
        # logged: a query waited for it)
        self.programs: Counter[str] = Counter()
        start = time.perf_counter()
        with program_store.listening(self._heard):
            self.batch = self._batch_factory()
            self.queue = JobQueue()
            self.slots = Slots(len(self.batch))
            self.inbox: queue.Queue = queue.Queue()
            self._eof = False
            self.preempted = 0  # turns sent back to the queue by a higher priority
            self._step_seconds = 0.01  # running estimate of one device step
            self._call_seconds = 0.0  # a run's fixed cost (dispatch, pipeline fill and drain)
            calibrate = getattr(self.batch, "calibrate", None)
            if calibrate is not None:
                self._call_seconds, self._step_seconds = calibrate()
                self._log(f"one run costs {1e3 * self._call_seconds:.1f} ms + "
                          f"{1e3 * self._step_seconds:.1f} ms per step")
        self._log(f"ready in {time.perf_counter() - start:.1f} s "
                  f"({self.programs['compiled']} programs compiled, "
                  f"{self.programs['loaded']} loaded from the cache)")
        self._version = None

    # --- setup ---------------------------------------------------------------------------

    def _build_batch(self, settings: EngineSettings):
        from zerochess.analysis.slots import SlotBatch, make_searcher
        from zerochess.neural import load_model
        from zerochess.search.api import check_tree_memory
        from zerochess.search.sizes import tree_size_bucket

        # the tree size rounded up to a bucket, so that nearby --max-visits / --max-nodes
        # share compiled programs (zerochess.search.sizes); queries are still limited to
        # settings.tree_nodes visits
        nodes = tree_size_bucket(settings.tree_nodes)
        # before loading or allocating anything: the slots' trees must fit
        check_tree_memory(settings.slots, nodes, "max_nodes")
        try:
            model = load_model(settings.model)
        except FileNotFoundError as err:
            raise UserError(f"model file not found: {err.filename or settings.model}") from None
        except ValueError as err:
            raise UserError(str(err)) from None
        searcher = make_searcher(model, nodes, settings.leaves_per_step,
                                 settings.workers, settings.nn_cache_size,
                                 settings.cache_history_length)  # ConfigError: a UserError
        self._log(f"compiling for {settings.slots} slots of {settings.tree_nodes} nodes "
                  f"(model {settings.model})")
        batch = SlotBatch(searcher, settings.slots)
        batch.warm_up()
        return batch

    def _heard(self, event: str, name: str, seconds: float) -> None:
        """A program compiled or loaded (``program_store.listening``): counted; a compile
        is logged, as ``zerochess uci``'s ``info string compiled program`` lines."""
        self.programs[event] += 1
        if event == "compiled":
            self._log(f"compiled program {self.programs['compiled']} "
                      f"({name.rpartition('.')[2]}) in {seconds:.1f} s")

    def _log(self, text: str) -> None:
        try:
            print(text, file=self.log, flush=True)
        except (OSError, ValueError):
            pass

    # --- input ---------------------------------------------------------------------------

    def read(self, stream: IO[bytes]) -> None:
        """Reader thread: parse lines, answer bad ones, queue the rest; then signal EOF."""
        try:
            for line in read_lines(stream, self.settings.max_line_bytes):
                if self.writer.broken:
                    break
                if isinstance(line, _LineTooLong):
                    self.writer.write(error_message(
                        f"input line too long: {line.size} bytes (at most "
                        f"{self.settings.max_line_bytes})"))
                    continue
                if not line.strip():
                    continue
                parsed = self.parse(line)
                for message in parsed.messages:
                    self.writer.write(message)
                if parsed.item is not None:
                    self.inbox.put(parsed.item)
        except Exception as err:  # never lose the loop to a bug in parsing
            self._log(f"reader failed: {err!r}\n{traceback.format_exc()}")
        finally:
            self.inbox.put(_EOF)

    def parse(self, line: bytes) -> Parsed:
        try:
            parsed = parse_line(line, self.settings)
        except Exception as err:  # a bug, not the client's fault: answer and go on
            self._log(traceback.format_exc())
            return Parsed(None, [error_message(f"internal error reading this line: {err!r}")])
        query = parsed.item
        if isinstance(query, Query) and query.move_filters:
            field = "allowMoves" if query.move_filters[0].allow else "avoidMoves"
            if not self.batch.supports_move_filters:  # a test double without them
                return Parsed(None, [error_message(
                    f"not supported yet: {field} needs move filters in the search core",
                    field, query.id)])
            from zerochess.analysis.slots import check_move_filters  # jax: imported late

            try:  # the filters must fit every analysed position (e.g. allowed moves legal)
                check_move_filters(query.move_filters, [t.board() for t in query.turns])
            except UserError as err:
                return Parsed(None, [error_message(str(err), field, query.id)])
        return parsed

    # --- main loop -----------------------------------------------------------------------

    def serve(self, stream: IO[bytes]) -> int:
        reader = threading.Thread(target=self.read, args=(stream,), name="analysis-reader",
                                  daemon=True)
        reader.start()
        self._log(READY)
        with program_store.listening(self._heard):
            return self._serve()

    def _serve(self) -> int:
        while True:
            idle = self.slots.busy == 0 and len(self.queue) == 0
            if idle and self._eof:
                break
            self._take_input(block=idle)
            if self.writer.broken:
                break
            if self._eof and self.settings.quit_without_waiting:
                self._terminate(None, None)
            self._preempt()
            self._fill_slots()
            if self.slots.busy:
                self._step()
        return 0

    def _take_input(self, block: bool) -> None:
        while True:
            try:
                item = self.inbox.get(block=block, timeout=None)
            except queue.Empty:
                return
            block = False
            if item is _EOF:
                self._eof = True
            elif isinstance(item, Action):
                self._act(item)
            else:
                self.queue.add(item)

    def _act(self, action: Action) -> None:
        echo = dict(action.echo)
        if action.name == "query_version":
            from zerochess import __version__

            if self._version is None:
                self._version = git_hash()
            echo.update(version=__version__, git_hash=self._version)
        elif action.name == "query_models":
            echo["models"] = [{"name": self.settings.model, "slots": len(self.batch),
                               "maxNodes": self.settings.tree_nodes,
                               "leavesPerStep": self.settings.leaves_per_step}]
        elif action.name == "clear_cache":
            self.batch.clear_cache()
        else:
            self._terminate(action.terminate_id, action.turn_numbers)
        self.writer.write(echo)

    def _terminate(self, query_id: str | None, turns: frozenset[int] | None) -> None:
        """Queued jobs end with noResults; searching ones stop with what they have. A job
        in a slot whose search has not run a simulation yet has nothing to report but the
        root's own evaluation: it ends with noResults too, as KataGo answers a query
        terminated before any analysis (``{"id", "turnNumber", "isDuringSearch": false,
        "noResults": true}``), not with a "final" analysis of one visit and no moves."""
        for job in self.queue.remove(lambda j: j.matches(query_id, turns)):
            self.writer.write(report.no_results_response(job))
        for slot, job in self.slots.active():
            if job.matches(query_id, turns):
                job.terminated = True
                if job.simulations == 0:
                    self.slots.release(slot)
                    self.writer.write(report.no_results_response(job))
                else:
                    self._finish(slot)

    def _preempt(self) -> None:
        """With no free slot, queued turns of a higher priority take the slots of
        searching turns of a lower one (``Slots.preemptible``: the least work lost); those
        go back to the queue, keep their place there, and start over when a slot frees
        (their partial reports, if any, then count from the new start)."""
        head = self.queue.peek()
        if (not self.settings.preempt_lower_priorities or head is None or self.slots.free()
                or self.slots.preemptible(head.priority) is None):
            return  # the usual case, checked without looking further into the queue
        for job in self.queue.first(len(self.slots)):
            slot = self.slots.preemptible(job.priority)
            if slot is None:
                return
            self.queue.requeue(self.slots.release(slot))  # ranks below ``job``
            self.preempted += 1

    def _fill_slots(self) -> None:
        """Start queued jobs in the free slots: one ``reset`` for all of them (one host
        round trip and one device write, whatever their number)."""
        while True:
            free = self.slots.free()
            starts: list[tuple[int, Job, Any]] = []
            while free and len(self.queue):
                job = self.queue.pop()
                try:
                    board = job.spec.board()
                    if not any(board.generate_legal_moves()):
                        self.writer.write(report.game_over_response(job, board))
                        continue
                except Exception as err:
                    self._fail(job, err)
                    continue
                starts.append((free.pop(0), job, board))
            if not starts:
                return
            try:
                self._reset(starts)
            except Exception:  # one bad job must not fail the others: start them one by one
                started = []
                for start in starts:
                    try:
                        self._reset([start])
                    except Exception as err:
                        self._fail(start[1], err)
                    else:
                        started.append(start)
                starts = started
            now = time.monotonic()
            finished = 0
            for slot, job, _ in starts:
                job.start(slot, now)
                self.slots.assign(slot, job)
                if job.remaining == 0:
                    self._finish(slot)
                    finished += 1
            if not finished:
                return

    def _reset(self, starts: list[tuple[int, Job, Any]]) -> None:
        self.batch.reset([slot for slot, _, _ in starts], [board for _, _, board in starts],
                         [job.query.config for _, job, _ in starts],
                         [job.query.seed for _, job, _ in starts],
                         [job.query.move_filters for _, job, _ in starts])

    def _chunk_steps(self, now: float) -> int:
        """Steps until the next event: a due partial report or the chunk length (so that
        new queries, terminations and reports wait at most about ``chunk_seconds``), but
        never so few that a run's fixed cost exceeds ``MAX_FIXED_SHARE`` of its time (on
        an accelerator one step can cost less than the dispatch around it)."""
        horizon = self.settings.chunk_seconds
        for _, job in self.slots.active():
            if job.next_report is not None:
                horizon = min(horizon, job.next_report - now)
        fixed, step = self._call_seconds, max(self._step_seconds, 1e-6)
        floor = fixed * (1 - MAX_FIXED_SHARE) / (MAX_FIXED_SHARE * step)
        return int(np.clip(max((horizon - fixed) / step, floor), 1, MAX_CHUNK_STEPS))

    def _step(self) -> None:
        active = list(self.slots.active())
        steps = self._chunk_steps(time.monotonic())
        counts = np.zeros(len(self.batch), np.int64)
        # Priority holds inside the batch too: only the searches of the highest priority
        # among the slots run (the others idle: they take no network rows, so a small
        # network batch runs and an urgent query is answered at about idle-engine speed).
        top = max(job.priority for _, job in active)
        for slot, job in active:
            if job.priority == top:
                counts[slot] = min(steps, job.remaining)
        start = time.monotonic()
        try:
            done = self.batch.run(counts)
        except Exception as err:  # the batch state is lost: fail its jobs, keep serving
            self._log(traceback.format_exc())
            for slot, job in active:
                self.slots.release(slot)
                self._fail(job, err)
            self.batch = self._batch_factory()
            return
        elapsed = time.monotonic() - start
        if counts.max() > 0:
            per_step = max(elapsed - self._call_seconds, 0.1 * elapsed) / counts.max()
            self._step_seconds = 0.7 * self._step_seconds + 0.3 * per_step
        now = time.monotonic()
        for slot, job in active:
            job.simulations = int(done[slot])
            if job.remaining == 0:
                self._finish(slot)
            elif job.report_due(now):
                job.reported(now)
                try:
                    self._report(slot, job, during=True)
                except Exception as err:  # drop this job, not the engine
                    self.slots.release(slot)
                    self._fail(job, err)

    def _report(self, slot: int, job: Job, during: bool) -> None:
        out = self.batch.report(slot, need_pv_visits=job.query.include_pv_visits)
        self.writer.write(report.analysis_response(job, out.result, out.pv_visits, during,
                                                   self.settings.lcb_stdevs))

    def _finish(self, slot: int) -> None:
        job = self.slots.release(slot)
        try:
            self._report(slot, job, during=False)
        except Exception as err:
            self._fail(job, err)

    def _fail(self, job: Job, err: Exception) -> None:
        """An unexpected failure of one job: say so, and still end the turn."""
        self._log(f"job {job.query.id!r} turn {job.turn} failed: {err!r}\n"
                  f"{traceback.format_exc()}")
        self.writer.write(error_message(f"internal error analysing turn {job.turn}: {err!r}",
                                        None, job.query.id))
        self.writer.write(report.no_results_response(job))


def run(settings: EngineSettings, stdin: IO[bytes] | None = None) -> int:
    engine = Engine(settings)
    return engine.serve(stdin if stdin is not None else sys.stdin.buffer)


def run_from_args(args: argparse.Namespace) -> int:
    """``zerochess analysis`` (the CLI hook)."""
    settings = from_args(args)
    try:
        return run(settings)
    finally:
        try:
            sys.stdout.flush()
        except (BrokenPipeError, OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())


__all__ = ["READY", "Engine", "Writer", "read_lines", "run", "run_from_args"]
