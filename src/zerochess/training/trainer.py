"""optax training of any :class:`~zerochess.neural.Model`: optimizer, LR schedule, train step."""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from zerochess.errors import ConfigError, quote
from zerochess.neural.model import Model
from zerochess.training.examples import Examples, to_batch
from zerochess.training.losses import LossConfig, loss_terms


@dataclasses.dataclass(frozen=True)
class OptimizerConfig:
    """Optimizer and learning-rate schedule (lc0 names where lc0 has them)."""

    type: str = "sgd"  # "sgd" (lc0: Nesterov momentum) | "adam" | "adamw"
    lr_values: tuple[float, ...] = (0.02,)  # lr_values
    lr_boundaries: tuple[int, ...] = ()  # lr_boundaries (steps), one fewer than lr_values
    warmup_steps: int = 0  # warmup_steps: lr * (step + 1) / warmup_steps before that
    momentum: float = 0.9
    nesterov: bool = True
    b1: float = 0.9
    b2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 0.0  # adamw only
    max_grad_norm: float = 10000.0  # max_grad_norm (0 = no clipping)

    def __post_init__(self) -> None:
        if self.type not in ("sgd", "adam", "adamw"):
            raise ConfigError(f"optimizer.type must be sgd, adam or adamw, got {quote(self.type)}")
        if not self.lr_values:
            raise ConfigError("optimizer.lr_values must hold at least one learning rate")
        if len(self.lr_boundaries) != len(self.lr_values) - 1:
            raise ConfigError(f"optimizer: {len(self.lr_values)} lr_values need "
                             f"{len(self.lr_values) - 1} lr_boundaries, got "
                             f"{len(self.lr_boundaries)}")
        if list(self.lr_boundaries) != sorted(self.lr_boundaries):
            raise ConfigError("optimizer.lr_boundaries must be increasing")
        if any(v < 0 for v in self.lr_values):
            raise ConfigError("optimizer.lr_values must be >= 0")
        if self.warmup_steps < 0 or self.max_grad_norm < 0:
            raise ConfigError("optimizer.warmup_steps and max_grad_norm must be >= 0")


def lr_schedule(config: OptimizerConfig) -> optax.Schedule:
    """lc0's learning rate at a step: ``lr_values[bisect_right(lr_boundaries, step)]``,
    times ``(step + 1) / warmup_steps`` while ``step < warmup_steps``."""
    values = jnp.asarray(config.lr_values, jnp.float32)
    bounds = jnp.asarray(config.lr_boundaries, jnp.int32)
    warmup = config.warmup_steps

    def schedule(step: Any) -> jax.Array:
        step = jnp.asarray(step, jnp.int32)
        lr = values[jnp.sum(step >= bounds)] if bounds.size else values[0]
        if warmup > 0:
            lr = lr * jnp.minimum(1.0, (step + 1).astype(jnp.float32) / warmup)
        return lr

    return schedule


def make_optimizer(config: OptimizerConfig) -> optax.GradientTransformation:
    """The optax transformation of ``config`` (clipping first, as lc0)."""
    schedule = lr_schedule(config)
    if config.type == "sgd":
        tx = optax.sgd(schedule, momentum=config.momentum or None, nesterov=config.nesterov)
    elif config.type == "adam":
        tx = optax.adam(schedule, b1=config.b1, b2=config.b2, eps=config.eps)
    else:
        tx = optax.adamw(schedule, b1=config.b1, b2=config.b2, eps=config.eps,
                         weight_decay=config.weight_decay)
    if config.max_grad_norm > 0:
        tx = optax.chain(optax.clip_by_global_norm(config.max_grad_norm), tx)
    return tx


class TrainState(NamedTuple):
    """Everything an optimizer step changes (a pytree: orbax saves it as is)."""

    step: jax.Array  # int32 []: optimizer steps taken
    params: Any  # the network parameters
    opt_state: Any  # optax state


class Trainer:
    """Jitted training steps for ``model`` (any ``Model``: ``apply(params, planes)``).

    Args:
      model: the network; its ``params`` are the starting point of ``init()``.
      loss: loss weights and target options (default ``LossConfig()``, lc0's).
      optimizer: optimizer and schedule (default ``OptimizerConfig()``: SGD, Nesterov 0.9,
        lr 0.02).

    ``step(state, examples)`` takes host ``Examples`` (compact), expands them on the
    device and returns the new state and the batch's metrics (floats). The state is
    donated: use the returned one.
    """

    def __init__(self, model: Model, loss: LossConfig | None = None,
                 optimizer: OptimizerConfig | None = None) -> None:
        self.model = model
        self.loss = loss or LossConfig()
        self.optimizer = optimizer or OptimizerConfig()
        self.tx = make_optimizer(self.optimizer)
        self.schedule = lr_schedule(self.optimizer)
        self._step = jax.jit(self._train_step, donate_argnums=(0,))
        self.steps_taken = 0  # steps run by this trainer (the first one compiles)
        self._eval = jax.jit(self._eval_step)

    def init(self, params: Any = None) -> TrainState:
        """A fresh state at step 0 from ``params`` (default: the model's)."""
        params = self.model.params if params is None else params
        params = jax.tree_util.tree_map(lambda a: jnp.array(a, jnp.float32), params)
        return TrainState(jnp.int32(0), params, self.tx.init(params))

    def _loss(self, params: Any, examples: Examples) -> tuple[jax.Array, dict[str, jax.Array]]:
        batch = to_batch(examples)
        outputs = self.model.apply(params, batch.planes)
        return loss_terms(outputs, params, batch, self.loss)

    def _train_step(self, state: TrainState, examples: Examples
                    ) -> tuple[TrainState, dict[str, jax.Array]]:
        grads, metrics = jax.grad(self._loss, has_aux=True)(state.params, examples)
        updates, opt_state = self.tx.update(grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, updates)
        metrics = dict(metrics, lr=self.schedule(state.step), grad_norm=optax.tree.norm(grads))
        return TrainState(state.step + 1, params, opt_state), metrics

    def _eval_step(self, params: Any, examples: Examples) -> dict[str, jax.Array]:
        return self._loss(params, examples)[1]

    def step(self, state: TrainState, examples: Examples
             ) -> tuple[TrainState, dict[str, float]]:
        """One optimizer step on ``examples`` (one batch); returns the new state and metrics."""
        state, metrics = self._step(state, examples)
        self.steps_taken += 1
        return state, {k: float(v) for k, v in jax.device_get(metrics).items()}

    def evaluate(self, params: Any, examples: Examples) -> dict[str, float]:
        """The loss metrics of ``params`` on ``examples`` (no update)."""
        metrics = self._eval(params, examples)
        return {k: float(v) for k, v in jax.device_get(metrics).items()}


def sample_rng(seed: int, step: int) -> np.random.Generator:
    """The generator that draws training batch ``step`` of a run seeded ``seed``: batches
    depend only on (seed, step), so a resumed run draws the same batches."""
    return np.random.default_rng([int(seed), int(step), 0x7A1B])


__all__ = ["OptimizerConfig", "TrainState", "Trainer", "lr_schedule", "make_optimizer",
           "sample_rng"]
