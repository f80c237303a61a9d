"""``zerochess uci``: an lc0-compatible UCI engine on stdin/stdout (docs/UCI.md)."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("uci", help="run as a UCI engine (lc0-compatible options)",
                       description="Speak UCI on stdin/stdout; load it in a GUI as "
                       "`zerochess uci`. See docs/UCI.md.")
    p.add_argument("--timeline", metavar="FILE",
                   help="append one JSON record per search to FILE: where its time went "
                        "(go to first playout, rate, deadline to bestmove; zerochess bench --uci)")
    p.add_argument("--warmup", action="store_true",
                   help="compile (once per machine) what the engine runs at its default "
                        "settings, then exit (zerochess warmup uci)")
    p.set_defaults(run=run, exit_at_once=True)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "warmup", False):
        from zerochess.cli import warmup

        return warmup.run(argparse.Namespace(parts=["uci"]))
    from zerochess.uci import run_uci  # jax: loaded only when it runs

    timeline = getattr(args, "timeline", None)
    if timeline:
        from zerochess.errors import InputFileError

        try:
            with open(timeline, "a", encoding="utf-8"):
                pass
        except OSError as err:
            raise InputFileError(f"--timeline {timeline!r}: cannot write: {err.strerror}") \
                from None
    return run_uci(timeline=timeline)
