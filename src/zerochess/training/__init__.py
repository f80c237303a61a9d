"""AlphaZero-style training: examples, lc0 losses, optax trainer, replay buffer, checkpoints.

Example (the README's "Training loop")::

    trainer = Trainer(model, LossConfig(), OptimizerConfig())
    state = trainer.init()
    state, metrics = trainer.step(state, buffer.sample(256, sample_rng(seed, step)))
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names as ``_EXPORTS``, for type checkers and IDEs
    from zerochess.training.buffer import ReplayBuffer
    from zerochess.training.checkpoint import Checkpointer
    from zerochess.training.config import TrainConfig
    from zerochess.training.examples import (
        Batch,
        Examples,
        compact_planes,
        concat_examples,
        dense_policy,
        empty_examples,
        expand_planes,
        result_wdl,
        to_batch,
        wdl_from_qd,
    )
    from zerochess.training.losses import (
        LossConfig,
        l2_penalty,
        loss_terms,
        moves_left_loss,
        policy_loss,
        wdl_loss,
    )
    from zerochess.training.run import build_network, run_training
    from zerochess.training.schedule import (
        NsclScheduleConfig,
        NsclState,
        decisive_ratio,
        next_state,
    )
    from zerochess.training.selfplay_data import (
        Player,
        TrainingGames,
        examples_from_game,
        play_training_games,
        policy_target,
    )
    from zerochess.training.trainer import (
        OptimizerConfig,
        Trainer,
        TrainState,
        lr_schedule,
        make_optimizer,
        sample_rng,
    )

_EXPORTS = {
    # examples
    "Batch": "zerochess.training.examples",
    "Examples": "zerochess.training.examples",
    "compact_planes": "zerochess.training.examples",
    "concat_examples": "zerochess.training.examples",
    "dense_policy": "zerochess.training.examples",
    "empty_examples": "zerochess.training.examples",
    "expand_planes": "zerochess.training.examples",
    "result_wdl": "zerochess.training.examples",
    "to_batch": "zerochess.training.examples",
    "wdl_from_qd": "zerochess.training.examples",
    # losses
    "LossConfig": "zerochess.training.losses",
    "l2_penalty": "zerochess.training.losses",
    "loss_terms": "zerochess.training.losses",
    "moves_left_loss": "zerochess.training.losses",
    "policy_loss": "zerochess.training.losses",
    "wdl_loss": "zerochess.training.losses",
    # trainer
    "OptimizerConfig": "zerochess.training.trainer",
    "TrainState": "zerochess.training.trainer",
    "Trainer": "zerochess.training.trainer",
    "lr_schedule": "zerochess.training.trainer",
    "make_optimizer": "zerochess.training.trainer",
    "sample_rng": "zerochess.training.trainer",
    # buffer, checkpoints, schedule
    "ReplayBuffer": "zerochess.training.buffer",
    "Checkpointer": "zerochess.training.checkpoint",
    "NsclScheduleConfig": "zerochess.training.schedule",
    "NsclState": "zerochess.training.schedule",
    "decisive_ratio": "zerochess.training.schedule",
    "next_state": "zerochess.training.schedule",
    # self-play hook
    "Player": "zerochess.training.selfplay_data",
    "TrainingGames": "zerochess.training.selfplay_data",
    "examples_from_game": "zerochess.training.selfplay_data",
    "play_training_games": "zerochess.training.selfplay_data",
    "policy_target": "zerochess.training.selfplay_data",
    # the end-to-end run
    "TrainConfig": "zerochess.training.config",
    "run_training": "zerochess.training.run",
    "build_network": "zerochess.training.run",
}

# a literal list (type checkers read it); the keys of _EXPORTS
__all__ = ["Batch", "Checkpointer", "Examples", "LossConfig", "NsclScheduleConfig",
           "NsclState", "OptimizerConfig", "Player", "ReplayBuffer", "TrainConfig",
           "TrainState", "Trainer", "TrainingGames", "build_network", "compact_planes",
           "concat_examples", "decisive_ratio", "dense_policy", "empty_examples",
           "examples_from_game", "expand_planes", "l2_penalty", "loss_terms", "lr_schedule",
           "make_optimizer", "moves_left_loss", "next_state", "play_training_games",
           "policy_loss", "policy_target", "result_wdl", "run_training", "sample_rng",
           "to_batch", "wdl_from_qd", "wdl_loss"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'zerochess.training' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
