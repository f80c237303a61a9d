"""What the run commands (``selfplay``, ``match``, ``experiment``) share: their common
options and the checks of overridden values."""

from __future__ import annotations

import argparse

from zerochess.errors import ConfigError

INTERRUPTED = "interrupted: finished games are saved; run the same command to resume"


def add_run_options(p: argparse.ArgumentParser, default_out: str, seed_help: str) -> None:
    """``--out``, ``--seed`` and ``--no-progress``; an interrupt prints how to resume."""
    p.add_argument("--out", help=f"output folder (default {default_out}); an existing one "
                   "is resumed")
    p.add_argument("--seed", type=int, help=seed_help)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--force", action="store_true", help="resume a folder whose run had other "
                   "versions (code commit, packages, model file); recorded in versions.yaml")
    p.set_defaults(interrupted=INTERRUPTED)


def checked_seed(value: int | None) -> int | None:
    """``--seed`` (None when not given); a negative seed is a ``ConfigError``."""
    if value is not None and value < 0:
        raise ConfigError(f"--seed must be >= 0, got {value}")
    return value


def positive(value: int, name: str) -> int:
    if value < 1:
        raise ConfigError(f"{name} must be >= 1, got {value}")
    return value
