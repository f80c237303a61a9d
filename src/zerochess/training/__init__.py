"""AlphaZero-style training: examples, lc0 losses, optax trainer, replay buffer, checkpoints.

Library API for RL code (see the README's "Training loop" section)::

    trainer = Trainer(model, LossConfig(), OptimizerConfig())   # any zerochess Model
    state = trainer.init()                                      # TrainState(step, params, opt)
    games = play_training_games(specs, players, searcher=searcher, params=state.params)
    buffer.add_games(games.examples)
    state, metrics = trainer.step(state, buffer.sample(256, sample_rng(seed, step)))

Exports are lazy: the self-play hook and the end-to-end loop import the search stack only
when used.
"""

from __future__ import annotations

import importlib
from typing import Any

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

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'zerochess.training' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
