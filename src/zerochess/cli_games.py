"""CLI subcommands for games: ``selfplay``, ``match``, ``experiment``.

``zerochess.cli`` calls :func:`add_subcommands`; each subcommand sets ``func(args) -> int``.
Bad input (unknown config key, missing file, unknown experiment, bad scale) prints one
line ``error: ...`` on stderr and returns 2, without a traceback. Standalone:
``python -m zerochess.cli_games selfplay --config configs/selfplay_tiny.yaml``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from zerochess.selfplay.config import GameConfigError

SCALE_CHOICES = ("tiny", "small", "full")
# the names in zerochess.experiments.EXPERIMENTS (kept here so `--help` imports no jax)
EXPERIMENT_NAMES = ("contempt_wdl", "temperature_wdl", "repeat_rate",
                    "contempt_vs_temperature", "odds")


def _guard(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Run ``fn``; user errors become ``error: ...`` and exit status 2."""

    def wrapped(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except GameConfigError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("interrupted: finished games are saved; run the same command to resume",
                  file=sys.stderr)
            return 130

    wrapped.__name__ = fn.__name__
    wrapped.__doc__ = fn.__doc__
    return wrapped


@_guard
def cmd_selfplay(args: argparse.Namespace) -> int:
    """``selfplay --config FILE [--out DIR] [--seed N]``: writes DIR/games.pgn."""
    import dataclasses

    from zerochess.selfplay import SelfPlayConfig, run_selfplay

    config = SelfPlayConfig.load(args.config)
    if args.seed is not None:
        config = dataclasses.replace(config, seed=_seed(args.seed))
    if args.games is not None:
        config = dataclasses.replace(config, games=_positive(args.games, "--games"))
    out = Path(args.out) if args.out else Path("results") / "selfplay" / config.name
    report = run_selfplay(config, out, progress=not args.no_progress)
    s = report.stats.summary()
    print(f"{len(report.rows)} games in {out / 'games.pgn'} ({report.played} played now; "
          f"{s['positions_per_s']:.1f} positions/s, {s['nodes_per_s']:.0f} nodes/s, "
          f"{s['games_per_hour']:.0f} games/hour)")
    return 0


@_guard
def cmd_match(args: argparse.Namespace) -> int:
    """``match --config FILE [--out DIR] [--seed N]``: W/D/L, Elo +- 95%, LOS."""
    import dataclasses

    from zerochess.match import MatchConfig, run_match

    config = MatchConfig.load(args.config)
    if args.seed is not None:
        config = dataclasses.replace(config, seed=_seed(args.seed))
    out = Path(args.out) if args.out else Path("results") / "match" / config.name
    report = run_match(config, out, progress=not args.no_progress)
    print(report.text())
    print(f"games: {out / 'games.pgn'}")
    return 0


@_guard
def cmd_experiment(args: argparse.Namespace) -> int:
    """``experiment NAME [--scale tiny|small|full] [--out DIR] [--seed N] [--config FILE]``."""
    from zerochess.experiments import get_experiment, run_experiment

    get_experiment(args.name)
    if args.scale not in SCALE_CHOICES:
        raise GameConfigError(f"unknown scale {args.scale!r}; choose one of "
                              f"{', '.join(SCALE_CHOICES)}")
    seed = _seed(args.seed) if args.seed is not None else None
    out = run_experiment(args.name, args.scale, args.out, seed, args.config,
                         progress=not args.no_progress)
    print((out / "summary.md").read_text())
    print(f"results: {out}")
    return 0


def _seed(value: int) -> int:
    if value < 0:
        raise GameConfigError(f"--seed must be >= 0, got {value}")
    return value


def _positive(value: int, name: str) -> int:
    if value < 1:
        raise GameConfigError(f"{name} must be >= 1, got {value}")
    return value


def add_subcommands(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``selfplay``, ``match`` and ``experiment`` to a CLI's subparsers."""
    p = subparsers.add_parser("selfplay", help="batched self-play from a YAML config",
                              description="Batched self-play from a YAML config (keys: "
                              "zerochess.selfplay.config). Writes DIR/games.pgn and games.csv; "
                              "an existing DIR is resumed.")
    p.add_argument("--config", required=True, help="YAML file (e.g. configs/selfplay_tiny.yaml)")
    p.add_argument("--out", help="output folder (default results/selfplay/<name>); an "
                   "existing one is resumed")
    p.add_argument("--seed", type=int, help="override the config's seed")
    p.add_argument("--games", type=int, help="override the config's number of games")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_selfplay)

    p = subparsers.add_parser("match", help="a match: config vs config or a UCI engine",
                              description="A match from a YAML config (zerochess.match.match): "
                              "colours alternate, openings paired; prints W/D/L, score, Elo "
                              "with a 95% interval and LOS.")
    p.add_argument("--config", required=True, help="YAML file (e.g. configs/match_example.yaml)")
    p.add_argument("--out", help="output folder (default results/match/<name>); resumed")
    p.add_argument("--seed", type=int, help="override the config's seed")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_match)

    p = subparsers.add_parser("experiment", help="a search-contempt experiment",
                              description="Run a search-contempt experiment; writes "
                              "results/NAME/SCALE-seedSEED/ (config, versions, CSV, PNG, "
                              "summary.md). See experiments/README.md.")
    p.add_argument("name", help=f"one of: {', '.join(EXPERIMENT_NAMES)}")
    p.add_argument("--scale", default="tiny", help="tiny (minutes on a CPU), small, full "
                   "(the paper's scale)")
    p.add_argument("--out", help="output folder (default results/<name>/<scale>-seed<seed>)")
    p.add_argument("--seed", type=int, help="override the seed")
    p.add_argument("--config", help="YAML overrides (e.g. configs/experiment_contempt_wdl.yaml)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_experiment)


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one ``error: ...`` line (exit status 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)


def main(argv: Sequence[str] | None = None) -> int:
    """Standalone entry point (``python -m zerochess.cli_games ...``)."""
    parser = _Parser(prog="zerochess", description="zerochess games: self-play, matches, "
                     "experiments")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    add_subcommands(sub)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
