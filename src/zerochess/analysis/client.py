"""``Client``: drive a ``zerochess analysis`` engine subprocess from Python. Example::

    from zerochess.analysis import Client

    with Client(slots=8) as engine:
        [final] = engine.analyse(moves=["e2e4", "e7e5"], maxVisits=200)
        final["moveInfos"][0]["move"], final["rootInfo"]["winrate"]
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import IO, Any

from zerochess.analysis.settings import READY


class AnalysisError(RuntimeError):
    """The engine answered a query or action with an error."""

    def __init__(self, message: dict[str, Any]):
        super().__init__(message.get("error", message))
        self.message = message
        self.field = message.get("field")


class Received:
    """One line from the engine: ``data`` (the JSON object) and ``time`` (monotonic)."""

    __slots__ = ("data", "time")

    def __init__(self, data: dict[str, Any], when: float):
        self.data = data
        self.time = when

    def __repr__(self) -> str:
        return f"Received({self.data!r}, {self.time:.3f})"


class Client:
    """A ``zerochess analysis`` subprocess with JSON in and out.

    Args:
      *args: extra engine flags (e.g. ``"--max-nodes", "1601"``).
      model, slots, leaves_per_step, config, max_visits, max_nodes, workers: engine flags.
      command: the engine command line instead of ``python -m zerochess.analysis``.
      env: environment variables added to this process's environment.
      wait_ready: block until the engine has compiled and says it is ready.
      timeout: seconds to wait for readiness.
    """

    def __init__(self, *args: str, model: str | None = None, slots: int | None = None,
                 leaves_per_step: int | None = None, config: str | None = None,
                 max_visits: int | None = None, max_nodes: int | None = None,
                 workers: int | None = None, command: Sequence[str] | None = None,
                 env: dict[str, str] | None = None, wait_ready: bool = True,
                 timeout: float | None = 900.0):
        flags: list[str] = []
        for flag, value in (("--model", model), ("--slots", slots),
                            ("--leaves-per-step", leaves_per_step), ("--config", config),
                            ("--max-visits", max_visits), ("--max-nodes", max_nodes),
                            ("--workers", workers)):
            if value is not None:
                flags += [flag, str(value)]
        cmd = list(command) if command is not None else [sys.executable, "-m",
                                                         "zerochess.analysis"]
        self.process = subprocess.Popen(
            [*cmd, *flags, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
        self.received: list[Received] = []
        self.stderr_lines: list[str] = []
        self._cond = threading.Condition()
        self._write_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._expected: dict[str, int] = {}
        self._ready = False
        self._stdout_done = False
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True, name="analysis-stdout"),
            threading.Thread(target=self._read_stderr, daemon=True, name="analysis-stderr"),
        ]
        for t in self._threads:
            t.start()
        if wait_ready:
            self.wait_ready(timeout)

    # --- plumbing ------------------------------------------------------------------------

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            try:
                data = json.loads(raw)
            except ValueError:
                data = {"_unparsable": raw.decode("utf-8", "replace")}
            if not isinstance(data, dict):
                data = {"_unparsable": raw.decode("utf-8", "replace")}
            with self._cond:
                self.received.append(Received(data, time.monotonic()))
                self._cond.notify_all()
        with self._cond:
            self._stdout_done = True
            self._cond.notify_all()

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            with self._cond:
                self.stderr_lines.append(line)
                if line.strip() == READY:
                    self._ready = True
                self._cond.notify_all()

    def _wait_for(self, predicate, timeout: float | None, what: str):
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                value = predicate()
                if value:
                    return value
                if self._stdout_done and self.process.poll() is not None:
                    raise RuntimeError(f"the engine exited (code {self.process.returncode}) "
                                       f"while waiting for {what}; stderr:\n{self.stderr}")
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError(f"timed out waiting for {what}")
                self._cond.wait(timeout=1.0 if left is None else min(left, 1.0))

    @property
    def stderr(self) -> str:
        with self._cond:
            return "\n".join(self.stderr_lines)

    def wait_ready(self, timeout: float | None = None) -> None:
        """Block until the engine has compiled its programs and reads queries."""
        self._wait_for(lambda: self._ready, timeout, "the engine to start")

    def send_raw(self, line: str | bytes) -> None:
        """Write ``line`` as it is (a newline is added if missing): for protocol tests."""
        data = line.encode() if isinstance(line, str) else line
        if not data.endswith(b"\n"):
            data += b"\n"
        stdin: IO[bytes] | None = self.process.stdin
        assert stdin is not None
        with self._write_lock:
            stdin.write(data)
            stdin.flush()

    # --- queries -------------------------------------------------------------------------

    def submit(self, query: dict[str, Any] | None = None, **fields: Any) -> str:
        """Send a query (``query`` and/or keyword fields; ``moves`` defaults to [] and
        ``id`` to a fresh one); returns its id."""
        request = {**(query or {}), **fields}
        request.setdefault("moves", [])
        qid = request.setdefault("id", f"q{next(self._ids)}")
        turns = request.get("analyzeTurns")
        count = len(set(turns)) if isinstance(turns, list) and all(
            isinstance(t, int) for t in turns) else 1
        with self._cond:
            self._expected[qid] = self._expected.get(qid, 0) + count
        self.send_raw(json.dumps(request))
        return qid

    def messages(self, query_id: str) -> list[Received]:
        """Every line received so far for ``query_id`` (responses, errors, warnings)."""
        with self._cond:
            return [r for r in self.received if r.data.get("id") == query_id]

    def wait(self, query_id: str, timeout: float | None = None, turns: int | None = None
             ) -> list[dict[str, Any]]:
        """The final responses (``isDuringSearch`` false) of every turn of a query, in turn
        order. Raises AnalysisError if the engine rejected the query.

        ``turns``: how many final responses to wait for (default: the number of turns
        of the query if it was sent with ``submit``, else 1).
        """
        expected = turns if turns is not None else self._expected.get(query_id, 1)

        def finals():
            mine = [r.data for r in self.received if r.data.get("id") == query_id]
            errors = [m for m in mine if "error" in m]
            if errors:
                return ("error", errors[0])
            done = [m for m in mine if "turnNumber" in m and m.get("isDuringSearch") is False]
            if len(done) >= expected:
                return ("ok", sorted(done, key=lambda m: m["turnNumber"]))
            return None

        kind, value = self._wait_for(finals, timeout, f"the results of {query_id!r}")
        if kind == "error":
            raise AnalysisError(value)
        return value

    def analyse(self, query: dict[str, Any] | None = None, timeout: float | None = None,
                **fields: Any) -> list[dict[str, Any]]:
        """``submit`` then ``wait``: the final response of every requested turn."""
        return self.wait(self.submit(query, **fields), timeout)

    def responses(self, timeout: float | None = None, start: int = 0) -> Iterator[dict[str, Any]]:
        """Every line from the engine in arrival order (from line ``start``), as it comes;
        ends when the engine closes its output (or raises TimeoutError after ``timeout``
        seconds without a line)."""
        index = start
        while True:
            def more(i=index):
                return len(self.received) > i or self._stdout_done

            self._wait_for(more, timeout, "a response")
            with self._cond:
                if index >= len(self.received):
                    return
                item = self.received[index]
            index += 1
            yield item.data

    # --- actions -------------------------------------------------------------------------

    def action(self, name: str, timeout: float | None = 60.0, **fields: Any) -> dict[str, Any]:
        """Send a special action and wait for its acknowledgement (the echoed request)."""
        qid = f"action{next(self._ids)}"
        self.send_raw(json.dumps({"id": qid, "action": name, **fields}))

        def ack():
            for r in self.received:
                if r.data.get("id") == qid and ("action" in r.data or "error" in r.data):
                    return r.data
            return None

        reply = self._wait_for(ack, timeout, f"the {name} acknowledgement")
        if "error" in reply:
            raise AnalysisError(reply)
        return reply

    def version(self) -> dict[str, Any]:
        return self.action("query_version")

    def clear_cache(self) -> dict[str, Any]:
        return self.action("clear_cache")

    def terminate(self, query_id: str, turn_numbers: Sequence[int] | None = None
                  ) -> dict[str, Any]:
        fields: dict[str, Any] = {"terminateId": query_id}
        if turn_numbers is not None:
            fields["turnNumbers"] = list(turn_numbers)
        return self.action("terminate", **fields)

    def terminate_all(self, turn_numbers: Sequence[int] | None = None) -> dict[str, Any]:
        fields = {} if turn_numbers is None else {"turnNumbers": list(turn_numbers)}
        return self.action("terminate_all", **fields)

    # --- shutdown ------------------------------------------------------------------------

    def close(self, timeout: float | None = 600.0) -> int:
        """Close the engine's input (it finishes the queued work) and wait for it to exit."""
        stdin = self.process.stdin
        if stdin is not None and not stdin.closed:
            try:
                stdin.close()
            except OSError:
                pass
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise
        for t in self._threads:
            t.join(timeout=10)
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.close()
        else:
            self.kill()


__all__ = ["AnalysisError", "Client", "Received"]
