"""``zerochess match --config FILE [--out DIR] [--seed N]``: W/D/L, Elo +- 95%, LOS."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from zerochess.cli.runs import add_run_options, checked_seed, path_arg, positive


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("match", help="a match: config vs config or a UCI engine",
                       description="A match from a YAML config (zerochess.games.config."
                       "MatchConfig): colours alternate, openings paired; prints W/D/L, "
                       "score, Elo with a 95% interval and LOS.")
    p.add_argument("--config", required=True, type=path_arg,
                   help="YAML file (e.g. configs/match_example.yaml)")
    add_run_options(p, "results/match/<name>", "override the config's seed")
    p.add_argument("--games", type=int, help="override the config's number of games (e.g. a "
                   "short run of a long match config)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from zerochess.games import MatchConfig, run_match  # jax: loaded when it runs

    config = MatchConfig.load(args.config)
    if args.seed is not None:
        config = dataclasses.replace(config, seed=checked_seed(args.seed))
    if args.games is not None:
        config = dataclasses.replace(config, games=positive(args.games, "--games"))
    out = Path(args.out) if args.out else Path("results") / "match" / config.name
    report = run_match(config, out, progress=not args.no_progress, force=args.force,
                       rules=args.rules)
    print(report.text())
    print(f"games: {out / 'games.pgn'}")
    return 0
