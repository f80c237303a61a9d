"""Parallel batch expansion over spawn-context worker processes (no jax import)."""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np

from zerochess.chess.rules import Expansion, expand_batch
from zerochess.chess.state import PositionArrays
from zerochess.errors import ConfigError

MIN_ROWS_PER_WORKER = 32  # chunks smaller than this are not worth the IPC; small batches run inline


def _worker_main(conn: multiprocessing.connection.Connection) -> None:
    """Worker loop: ``(fields, move_index)`` in, ``("ok", result)`` or ``("err", exc)`` out."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and closes us
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        fields, move_index, mate_check = msg
        try:
            reply: tuple[str, Any] = ("ok", expand_batch(PositionArrays(*fields), move_index,
                                                         mate_check))
        except Exception as exc:  # forwarded to the caller
            reply = ("err", exc)
        try:
            conn.send(reply)
        except Exception as exc:  # e.g. an unpicklable exception
            conn.send(("err", RuntimeError(f"expander worker failed: {exc!r}")))


@contextlib.contextmanager
def _main_module_hidden() -> Iterator[None]:
    """Temporarily hide ``__main__``'s file/spec so spawned children do not re-import it."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__}
    try:
        main.__dict__.pop("__file__", None)
        main.__dict__["__spec__"] = None
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


def _shutdown(procs: list[Any], conns: list[multiprocessing.connection.Connection]) -> None:
    """Ask the workers to exit, then make sure they do; close the pipes."""
    for conn in conns:
        with contextlib.suppress(Exception):
            conn.send(None)
    for proc in procs:
        proc.join(timeout=2.0)
        if proc.is_alive():
            proc.terminate()
            proc.join(timeout=2.0)
    for conn in conns:
        with contextlib.suppress(Exception):
            conn.close()


class Expander:
    """Callable ``(parent PositionArrays [n], move_index int [n], mate_check bool [n] | None)
    -> Expansion``.

    Args:
      num_workers: worker processes; 0 runs inline in this process. ``None`` uses
        ``os.cpu_count()`` when it is > 1, else 0.

    Batches are split into at most ``num_workers`` contiguous chunks of at least
    ``MIN_ROWS_PER_WORKER`` rows; a batch too small for two chunks runs inline. The
    workers start with the first batch that needs them (a search that only ever expands
    a few leaves per step never starts them).
    Errors raised by ``expand_batch`` in a worker (e.g. ``ValueError`` for an
    illegal index) are re-raised in the caller. Thread-safe (calls are serialised).
    """

    def __init__(self, num_workers: int | None = None) -> None:
        if num_workers is None:
            cpus = os.cpu_count() or 1
            num_workers = cpus if cpus > 1 else 0
        if num_workers < 0:
            raise ConfigError(f"num_workers must be >= 0, got {num_workers}")
        self.num_workers = num_workers
        self._lock = threading.Lock()
        self._procs: list[Any] = []
        self._conns: list[multiprocessing.connection.Connection] = []
        self._closed = False
        self._finalizer: Any = None

    def _start(self) -> None:
        """Start the worker processes (on the first batch big enough to need them)."""
        ctx = multiprocessing.get_context("spawn")
        try:
            with _main_module_hidden():
                for i in range(self.num_workers):
                    parent_end, child_end = ctx.Pipe(duplex=True)
                    proc = ctx.Process(target=_worker_main, args=(child_end,),
                                       name=f"zerochess-expander-{i}", daemon=True)
                    proc.start()
                    child_end.close()
                    self._procs.append(proc)
                    self._conns.append(parent_end)
        finally:
            # Runs on close(), garbage collection or interpreter exit, whichever is first.
            self._finalizer = weakref.finalize(self, _shutdown, self._procs, self._conns)

    def __call__(self, parent: PositionArrays, move_index: Any,
                 mate_check: Any = None) -> Expansion:
        """Expand every row; see ``rules.expand_batch`` for shapes and errors."""
        move_index = np.asarray(move_index).reshape(-1)
        n = move_index.shape[0]
        if mate_check is not None:
            mate_check = np.asarray(mate_check, bool).reshape(-1)
            if not mate_check.any():
                mate_check = None
        chunks = min(self.num_workers, n // MIN_ROWS_PER_WORKER)
        if self.num_workers == 0 or chunks < 2:
            return expand_batch(parent, move_index, mate_check)
        if self._closed:
            raise RuntimeError("Expander is closed (or a previous call was interrupted)")
        fields = tuple(np.ascontiguousarray(f) for f in parent)
        bounds = np.linspace(0, n, chunks + 1).astype(int)
        with self._lock:
            if self._finalizer is None:
                self._start()
            try:
                parts = self._exchange(fields, move_index, mate_check, bounds)
            except BaseException:
                # Pipes may hold unread replies now; never reuse them.
                self.close()
                raise
        errors = [p for p in parts if p[0] == "err"]
        if errors:
            raise errors[0][1]
        return Expansion.concatenate([p[1] for p in parts])

    def _exchange(
        self, fields: tuple[np.ndarray, ...], move_index: np.ndarray,
        mate_check: np.ndarray | None, bounds: np.ndarray
    ) -> list[tuple[str, Any]]:
        used = len(bounds) - 1
        for w in range(used):
            a, b = int(bounds[w]), int(bounds[w + 1])
            try:
                self._conns[w].send((tuple(f[a:b] for f in fields), move_index[a:b],
                                     None if mate_check is None else mate_check[a:b]))
            except OSError as exc:  # broken pipe: the worker is gone
                self._raise_dead(w, exc)
        parts = []
        for w in range(used):
            conn, proc = self._conns[w], self._procs[w]
            ready = multiprocessing.connection.wait([conn, proc.sentinel])
            try:
                if conn not in ready and not conn.poll():
                    raise EOFError
                parts.append(conn.recv())
            except (EOFError, OSError) as exc:
                self._raise_dead(w, exc)
        return parts

    def _raise_dead(self, w: int, exc: BaseException) -> None:
        proc = self._procs[w]
        proc.join(timeout=1.0)
        raise RuntimeError(f"expander worker {proc.name} died (exit code {proc.exitcode})") from exc

    def close(self) -> None:
        """Stop the worker processes (idempotent)."""
        self._closed = True
        if self._finalizer is not None:
            self._finalizer()

    def __enter__(self) -> Expander:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
