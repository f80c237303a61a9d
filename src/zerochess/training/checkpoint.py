"""orbax checkpoints of a training run: train state, replay buffer and loop metadata."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jax
import numpy as np
import orbax.checkpoint as ocp

from zerochess.errors import ConfigError
from zerochess.training.buffer import ReplayBuffer
from zerochess.training.examples import Examples, empty_examples
from zerochess.training.trainer import TrainState


class Checkpointer:
    """Saves and restores a run's checkpoints in ``directory`` (keeps the newest ``keep``)."""

    def __init__(self, directory: str | Path, keep: int = 2) -> None:
        if keep < 1:
            raise ConfigError(f"checkpoints to keep must be >= 1, got {keep}")
        self.directory = Path(directory).absolute()
        self._manager = ocp.CheckpointManager(
            self.directory, options=ocp.CheckpointManagerOptions(max_to_keep=keep, create=True))

    def latest(self) -> int | None:
        """The number of the newest checkpoint (generations done), or None."""
        return self._manager.latest_step()

    def all(self) -> list[int]:
        return list(self._manager.all_steps())

    def save(self, number: int, state: TrainState, buffer: ReplayBuffer,
             meta: dict[str, Any]) -> None:
        """Write checkpoint ``number`` and wait until it is on disk."""
        bstate = buffer.state_dict()
        meta = dict(meta, buffer={
            "game_lengths": [int(n) for n in bstate["game_lengths"]],
            "games_added": int(bstate["games_added"]),
            "window_games": int(bstate["window_games"]),
            "positions": len(buffer),
        })
        items: dict[str, Any] = {"state": ocp.args.StandardSave(state),
                                 "meta": ocp.args.JsonSave(meta)}
        if len(buffer):
            items["buffer"] = ocp.args.PyTreeSave(
                {k: np.asarray(v) for k, v in bstate["examples"].items()})
        self._manager.save(number, args=ocp.args.Composite(**items), force=True)
        self._manager.wait_until_finished()

    def restore(self, number: int, like: TrainState
                ) -> tuple[TrainState, ReplayBuffer, dict[str, Any]]:
        """Checkpoint ``number``: (state shaped like ``like``, buffer, meta)."""
        abstract = jax.tree_util.tree_map(ocp.utils.to_shape_dtype_struct, like)
        meta = self._manager.restore(number, args=ocp.args.Composite(
            meta=ocp.args.JsonRestore()))["meta"]
        items: dict[str, Any] = {"state": ocp.args.StandardRestore(abstract)}
        if meta["buffer"]["positions"]:
            items["buffer"] = ocp.args.PyTreeRestore()
        restored = self._manager.restore(number, args=ocp.args.Composite(**items))
        state = TrainState(*restored["state"])
        if meta["buffer"]["positions"]:
            examples = {k: np.asarray(v) for k, v in restored["buffer"].items()}
        else:
            examples = empty_examples()._asdict()
        buffer = ReplayBuffer.from_state_dict({
            "examples": Examples(**examples)._asdict(),
            "game_lengths": np.asarray(meta["buffer"]["game_lengths"], np.int64),
            "games_added": meta["buffer"]["games_added"],
            "window_games": meta["buffer"]["window_games"],
        })
        return state, buffer, meta

    def close(self) -> None:
        self._manager.close()

    def __enter__(self) -> Checkpointer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["Checkpointer"]
