"""The search-contempt experiments: each writes ``results/<name>/<run>/`` with the resolved
config, the versions, a CSV, PNG plots and ``summary.md``."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from zerochess.errors import ConfigError, quote

if TYPE_CHECKING:
    from zerochess.experiments.common import Experiment

EXPERIMENTS: tuple[str, ...] = (
    "contempt_wdl", "temperature_wdl", "repeat_rate", "contempt_vs_temperature", "odds",
    "train_efficiency", "odds_table1", "misevaluation", "puzzles",
)
"""The registered experiments: module ``zerochess.experiments.<name>`` defines ``EXPERIMENT``."""


def get_experiment(name: str) -> Experiment:
    """The experiment registered as ``name`` (``ConfigError`` naming the choices if none)."""
    if name not in EXPERIMENTS:
        raise ConfigError(
            f"unknown experiment {quote(name)}; choose one of {', '.join(EXPERIMENTS)}")
    return importlib.import_module(f"{__name__}.{name}").EXPERIMENT


def run_experiment(name: str, scale: str = "tiny", out_dir: str | Path | None = None,
                   seed: int | None = None, config_path: str | Path | None = None,
                   progress: bool = True, force: bool = False) -> Path:
    """Run experiment ``name`` at ``scale``; returns its run folder. ``force`` resumes a
    folder whose run had other versions (recorded in its ``versions.yaml``)."""
    return get_experiment(name).execute(scale, out_dir, seed, config_path, progress, force)


__all__ = ["EXPERIMENTS", "get_experiment", "run_experiment"]
