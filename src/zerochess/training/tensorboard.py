"""Optional TensorBoard logging of a training run's metrics (``zerochess train
--tensorboard DIR``; ``run_training(..., tensorboard=DIR)``)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from zerochess.errors import UserError

SKIP = ("generation", "games_total", "opponent")


class TensorBoardLog:
    """Scalars of metric rows into a TensorBoard event folder."""

    def __init__(self, log_dir: str | Path) -> None:
        try:
            from tensorboardX import SummaryWriter
        except ImportError:
            raise UserError("TensorBoard logging needs tensorboardX: pip install "
                            "'zerochess[tensorboard]' (or tensorboardX)") from None
        self.log_dir = Path(log_dir)
        self._writer = SummaryWriter(logdir=str(self.log_dir))

    def row(self, series: str, row: dict[str, Any]) -> None:
        """Write the numeric fields of one metrics row (``games_total`` is the step)."""
        step = int(row["games_total"])
        prefix = f"{series}/{row['opponent']}" if "opponent" in row else series
        for key, value in row.items():
            if key in SKIP or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            if math.isfinite(value):
                self._writer.add_scalar(f"{prefix}/{key}", value, step)
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()


__all__ = ["TensorBoardLog"]
