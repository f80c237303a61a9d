"""``zerochess puzzles [--scale tiny|small|full] [--out DIR] [--seed N] [--config FILE]
[--rules host|device] [--estimate]``: mine tactical puzzles from search-contempt and PUCT
self-play, validate them with Stockfish and write Lichess's puzzle CSV."""

from __future__ import annotations

import argparse

from zerochess.cli import experiment
from zerochess.cli.runs import add_run_options, path_arg


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("puzzles", help="mine tactical puzzles from self-play (Lichess CSV)",
                       description="Play SC and PUCT self-play at equal nodes, mine puzzles "
                       "(a move a deep search finds clearly best and a shallow search misses), "
                       "check each with Stockfish, and write results/puzzles/SCALE-seedSEED/"
                       "puzzles.csv in Lichess's puzzle format with summary.md. Needs "
                       "Stockfish (apt-get install stockfish). See experiments/README.md.")
    p.add_argument("--scale", default="tiny", help="tiny (minutes on a CPU), small, full")
    add_run_options(p, "results/puzzles/<scale>-seed<seed>", "override the seed")
    p.add_argument("--config", type=path_arg,
                   help="YAML overrides of configs/experiment_puzzles.yaml")
    p.add_argument("--estimate", action="store_true",
                   help="print the expected self-play time on this machine and play nothing")
    p.set_defaults(run=run, name="puzzles")


def run(args: argparse.Namespace) -> int:
    args.name = "puzzles"
    return experiment.run(args)
