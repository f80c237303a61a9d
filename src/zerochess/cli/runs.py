"""What the run commands (``selfplay``, ``match``, ``experiment``) share: their common
options and the checks of overridden values."""

from __future__ import annotations

import argparse

from zerochess.errors import ConfigError
from zerochess.validation import as_seed

INTERRUPTED = ("interrupted: finished games and the moves of the games in play are saved; run "
               "the same command to resume")


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Help that shows each option's default where it has a value and the help text does
    not already say it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if ("default" in text or default is None or default is False or default == []
                or default is argparse.SUPPRESS or not action.option_strings):
            return text
        return f"{text} (default: {default})"


def path_arg(text: str) -> str:
    """An argparse ``type`` for a path: an empty or blank value is refused (it would
    otherwise mean "the default" or the current folder without a word)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a path, got {text!r}")
    return text


def add_run_options(p: argparse.ArgumentParser, default_out: str, seed_help: str) -> None:
    """``--out``, ``--seed`` and ``--no-progress``; an interrupt (Ctrl-C, or a SIGTERM, e.g.
    from ``timeout`` or a batch scheduler) saves what was played and prints how to
    resume."""
    p.add_argument("--out", type=path_arg,
                   help=f"output folder (default {default_out}); an existing one "
                   "is resumed")
    p.add_argument("--seed", type=int, help=seed_help)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--force", action="store_true", help="resume a folder whose run had other "
                   "versions (code commit, packages, model file); recorded in versions.yaml")
    add_rules_option(p)
    p.set_defaults(interrupted=INTERRUPTED, stop_on_sigterm=True)


def add_rules_option(p: argparse.ArgumentParser) -> None:
    """``--rules host|device``: where the searches' chess rules run."""
    p.add_argument("--rules", choices=("host", "device"), default=None,
                   help="where the searches' chess rules run: host (python-chess workers) or "
                   "device (the JAX rules: one compiled program per search). Default: device "
                   "on an accelerator, host on a CPU. Both give the same games")


def checked_seed(value: int | None) -> int | None:
    """``--seed`` (None when not given), in [0, 2**63) (``ConfigError`` otherwise)."""
    return None if value is None else as_seed(value, "--seed")


def positive(value: int, name: str, maximum: int | None = None) -> int:
    if value < 1:
        raise ConfigError(f"{name} must be >= 1, got {value}")
    if maximum is not None and value > maximum:
        raise ConfigError(f"{name} must be <= {maximum:,}, got {value:,}")
    return value
