"""``zerochess selfplay --config FILE [--out DIR] [--seed N] [--games N]``: writes
DIR/games.pgn and games.csv; an existing DIR is resumed."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from zerochess.cli.runs import add_run_options, checked_seed, path_arg, positive


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("selfplay", help="batched self-play from a YAML config",
                       description="Batched self-play from a YAML config (keys: "
                       "zerochess.games.config). Writes DIR/games.pgn and games.csv; "
                       "an existing DIR is resumed.")
    p.add_argument("--config", required=True, type=path_arg,
                   help="YAML file (e.g. configs/selfplay_tiny.yaml)")
    add_run_options(p, "results/selfplay/<name>", "override the config's seed")
    p.add_argument("--games", type=int, help="override the config's number of games")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from zerochess.games import SelfPlayConfig, run_selfplay  # jax: loaded when it runs
    from zerochess.games.config import MAX_GAMES

    config = SelfPlayConfig.load(args.config)
    if args.seed is not None:
        config = dataclasses.replace(config, seed=checked_seed(args.seed))
    if args.games is not None:
        config = dataclasses.replace(config, games=positive(args.games, "--games", MAX_GAMES))
    out = Path(args.out) if args.out else Path("results") / "selfplay" / config.name
    report = run_selfplay(config, out, progress=not args.no_progress, force=args.force,
                          rules=args.rules)
    print(summary_line(len(report.rows), out / "games.pgn", report.played,
                       report.stats.summary()))
    return 0


def summary_line(games: int, pgn: Path, played: int, s: dict) -> str:
    """The closing lines: games in the folder, games played now, and the rates of this run
    with its compile time named (a first run on device rules compiles for minutes on a
    CPU, which the overall rates include)."""
    line = f"{games} games in {pgn} ({played} played now"
    if not played:
        return line + ")"
    line += f" in {s['seconds']:.0f} s"
    if s.get("compile_seconds", 0) >= 1:
        line += f", {s['compile_seconds']:.0f} s of it compiling"
    return (line + ")\n" f"  {s['positions_per_s']:.1f} positions/s, {s['nodes_per_s']:.0f} "
            f"nodes/s, {s['games_per_hour']:.0f} games/hour")  # two lines: 80 columns
