"""``zerochess uci``: an lc0-compatible UCI engine on stdin/stdout (docs/UCI.md)."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("uci", help="run as a UCI engine (lc0-compatible options)",
                       description="Speak UCI on stdin/stdout; load it in a GUI as "
                       "`zerochess uci`. See docs/UCI.md.")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from zerochess.uci import run_uci  # jax: loaded only when it runs

    return run_uci()
