"""The search-contempt experiments: each writes ``results/<name>/<run>/`` with the resolved
config, the versions, a CSV, PNG plots and ``summary.md``.

``run_experiment(name, scale="tiny" | "small" | "full", out_dir=None, seed=None,
config_path=None)``; scales: tiny (< 5 minutes on 2 CPU cores), small, full (the
paper's: 1000 nodes per move, 100 games per point).
"""

from __future__ import annotations

from pathlib import Path

from zerochess.experiments import (
    contempt_vs_temperature,
    contempt_wdl,
    odds,
    repeat_rate,
    temperature_wdl,
)
from zerochess.experiments.common import SCALES, Experiment
from zerochess.experiments.common import run_experiment as _run
from zerochess.selfplay.config import GameConfigError

EXPERIMENTS: dict[str, Experiment] = {
    m.EXPERIMENT.name: m.EXPERIMENT
    for m in (contempt_wdl, temperature_wdl, repeat_rate, contempt_vs_temperature, odds)
}


def get_experiment(name: str) -> Experiment:
    if name not in EXPERIMENTS:
        raise GameConfigError(
            f"unknown experiment {name!r}; choose one of {', '.join(EXPERIMENTS)}")
    return EXPERIMENTS[name]


def run_experiment(name: str, scale: str = "tiny", out_dir: str | Path | None = None,
                   seed: int | None = None, config_path: str | Path | None = None,
                   progress: bool = True) -> Path:
    """Run experiment ``name`` at ``scale``; returns its run folder."""
    return _run(get_experiment(name), scale, out_dir, seed, config_path, progress)


__all__ = ["EXPERIMENTS", "SCALES", "Experiment", "get_experiment", "run_experiment"]
