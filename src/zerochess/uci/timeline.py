"""Where one UCI search's time goes: ``zerochess uci --timeline FILE``."""

from __future__ import annotations

import contextlib
import json
import statistics
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any


class NullTimeline:
    """Records nothing (the default)."""

    enabled = False

    def begin(self, t_go: float, **fields: Any) -> None:
        pass

    def mark(self, name: str, t: float | None = None) -> None:
        pass

    @contextlib.contextmanager
    def span(self, name: str) -> Iterator[None]:
        yield

    def add_span(self, name: str, seconds: float) -> None:
        pass

    def sample(self, playouts: int, t: float | None = None) -> None:
        pass

    def end(self, **fields: Any) -> None:
        pass


class Timeline(NullTimeline):
    """Appends one JSON line per search to ``path`` (see docs/DESIGN.md)."""

    enabled = True

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._t0 = time.perf_counter()
        self._fields: dict[str, Any] = {}
        self._marks: dict[str, float] = {}
        self._spans: dict[str, list[float]] = {}
        self._samples: list[list[float]] = []
        with open(path, "a", encoding="utf-8"):
            pass  # fail at start-up (a clear OSError), not after the first search

    def _ms(self, t: float | None) -> float:
        return round(((time.perf_counter() if t is None else t) - self._t0) * 1000.0, 3)

    def begin(self, t_go: float, **fields: Any) -> None:
        with self._lock:
            self._t0 = t_go
            self._fields = dict(fields)
            self._marks, self._spans, self._samples = {}, {}, []

    def mark(self, name: str, t: float | None = None) -> None:
        with self._lock:
            self._marks.setdefault(name, self._ms(t))

    @contextlib.contextmanager
    def span(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add_span(name, time.perf_counter() - start)

    def add_span(self, name: str, seconds: float) -> None:
        with self._lock:
            total = self._spans.setdefault(name, [0.0, 0])
            total[0] += seconds * 1000.0
            total[1] += 1

    def sample(self, playouts: int, t: float | None = None) -> None:
        with self._lock:
            self._samples.append([self._ms(t), int(playouts)])

    def end(self, **fields: Any) -> None:
        with self._lock:
            record = {**self._fields, **fields, "marks": self._marks,
                      "spans": {k: [round(v[0], 3), int(v[1])] for k, v in self._spans.items()},
                      "samples": self._samples}
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(record, separators=(",", ":")) + "\n")


def read(path: str) -> list[dict[str, Any]]:
    """The records of a timeline file, in order."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def steady_rate(samples: Sequence[Sequence[float]]) -> float | None:
    """Playouts per second between the first sample with a playout and the last one."""
    live = [(t, n) for t, n in samples if n > 0]
    if len(live) < 2 or live[-1][0] <= live[0][0]:
        return None
    return (live[-1][1] - live[0][1]) * 1000.0 / (live[-1][0] - live[0][0])


def derived(record: dict[str, Any]) -> dict[str, float | None]:
    """One search's figures: ``to_tree`` (go to the tree ready), ``to_first_playout``,
    ``steady_nps``, ``deadline_to_bestmove`` (movetime searches: bestmove minus the
    movetime), ``stop_to_bestmove`` and the time of each span."""
    marks = record.get("marks", {})
    movetime = (record.get("go") or {}).get("movetime")
    out: dict[str, float | None] = {
        "to_tree": marks.get("tree"),
        "to_first_playout": marks.get("first_playout"),
        "steady_nps": steady_rate(record.get("samples", [])),
        "deadline_to_bestmove": (marks["bestmove"] - movetime
                                 if movetime is not None and "bestmove" in marks else None),
        "stop_to_bestmove": (marks["bestmove"] - marks["stop"]
                             if "bestmove" in marks and "stop" in marks else None),
        "bestmove": marks.get("bestmove"),
        "playouts": record.get("playouts"),
        "nodes": record.get("nodes"),
        "reused": record.get("reused"),
    }
    for name, (ms, _count) in record.get("spans", {}).items():
        out[f"span_{name}"] = ms
    return out


def summarize(records: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """Medians of :func:`derived` over ``records`` (None where no record has the figure)."""
    rows = [derived(r) for r in records]
    keys = sorted({k for row in rows for k in row})
    out: dict[str, float | None] = {"searches": float(len(rows))}
    for key in keys:
        values = [row[key] for row in rows if row.get(key) is not None]
        out[key] = round(float(statistics.median(values)), 3) if values else None
    return out


__all__ = ["NullTimeline", "Timeline", "derived", "read", "steady_rate", "summarize"]
