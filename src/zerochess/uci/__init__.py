"""``zerochess uci``: an lc0-compatible UCI engine over the zerochess search."""

from __future__ import annotations

from typing import TextIO


def run_uci(stdin: TextIO | None = None, stdout: TextIO | None = None,
            timeline: str | None = None) -> int:
    """Speak UCI on ``stdin``/``stdout`` (default: the process's) until ``quit``/EOF;
    ``timeline``: append one JSON record per search to this file (``uci.timeline``)."""
    from zerochess.uci.engine import run_uci as _run

    return _run(stdin, stdout, timeline=timeline)


__all__ = ["run_uci"]
