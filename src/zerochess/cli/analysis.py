"""``zerochess analysis``: the KataGo-style JSON analysis engine on stdin/stdout."""

from __future__ import annotations

import argparse

from zerochess.analysis.settings import add_arguments


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("analysis", help="KataGo-style JSON analysis engine on stdin/stdout",
                       description="JSON queries in, JSON responses out (docs/ANALYSIS.md).")
    add_arguments(p)
    p.set_defaults(run=run, exit_at_once=True)


def run(args: argparse.Namespace) -> int:
    from zerochess.analysis.engine import run_from_args  # jax: loaded only when it runs

    return run_from_args(args)
