"""``zerochess uci``: an lc0-compatible UCI engine over the zerochess search.

Modules: ``protocol`` (command parsing), ``options`` (lc0 option table and the mapping to
``SearchConfig``), ``stoppers`` and ``time_manager`` (lc0's stoppers; legacy, smooth,
alphazero and simple managers), ``scores`` (cp / mate / WDL conversions), ``info``
(info lines, VerboseMoveStats, ponder rewrite), ``driver`` (the seam to the search
core), ``engine`` (command dispatch, ``run_uci``), ``search_job`` (one ``go``: the search
thread), ``timeline`` (where a search's time goes).
"""

from __future__ import annotations

from typing import TextIO


def run_uci(stdin: TextIO | None = None, stdout: TextIO | None = None,
            timeline: str | None = None) -> int:
    """Speak UCI on ``stdin``/``stdout`` (default: the process's) until ``quit``/EOF;
    ``timeline``: append one JSON record per search to this file (``uci.timeline``)."""
    from zerochess.uci.engine import run_uci as _run

    return _run(stdin, stdout, timeline=timeline)


__all__ = ["run_uci"]
