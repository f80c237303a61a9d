"""lc0's training losses (``lczero-training`` ``tf/tfprocess.py``), in jax."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from zerochess.errors import ConfigError, quote
from zerochess.training.examples import Batch

ILLEGAL_LOGIT = -1.0e10  # lc0's filler for masked (illegal) moves


@dataclasses.dataclass(frozen=True)
class LossConfig:
    """Loss weights and target options (lc0 names in comments)."""

    policy_weight: float = 1.0  # policy_loss_weight
    value_weight: float = 1.0  # value_loss_weight
    moves_left_weight: float = 1.0  # moves_left_loss_weight (ignored without the head)
    reg_weight: float = 1.0  # reg_term_weight
    l2: float = 0.5e-4  # keras l2(0.5 * 1e-4) on every kernel
    q_ratio: float = 0.0  # q_ratio: value target = q_ratio * Q + (1 - q_ratio) * result
    q_source: str = "best"  # "best" (lc0 best_q / best_d) or "root" (root_q / root_d)
    mask_illegal: bool = True  # mask_legal_moves
    policy_temperature: float = 1.0  # target temperature (lc0 JAX trainer)
    moves_left_scale: float = 20.0
    moves_left_delta: float = 10.0

    def __post_init__(self) -> None:
        for name in ("policy_weight", "value_weight", "moves_left_weight", "reg_weight", "l2"):
            if getattr(self, name) < 0:
                raise ConfigError(f"loss.{name} must be >= 0, got {getattr(self, name)}")
        if not 0.0 <= self.q_ratio <= 1.0:
            raise ConfigError(f"loss.q_ratio must be in [0, 1], got {self.q_ratio}")
        if self.q_source not in ("best", "root"):
            raise ConfigError(f"loss.q_source must be 'best' or 'root', got {quote(self.q_source)}")
        for name in ("policy_temperature", "moves_left_scale", "moves_left_delta"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"loss.{name} must be > 0, got {getattr(self, name)}")


def policy_loss(logits: jax.Array, target: jax.Array, mask_illegal: bool = True,
                temperature: float = 1.0) -> jax.Array:
    """Per-example policy cross-entropy.

    Args:
      logits: float32 ``[B, 1858]`` network policy logits.
      target: float32 ``[B, 1858]``: visit fractions, -1 on illegal moves.
      mask_illegal: replace illegal moves' logits by -1e10 (lc0 ``mask_legal_moves``).
      temperature: target temperature (``target ** (1 / T)``, renormalised).

    Returns:
      float32 ``[B]``.
    """
    logits = logits.astype(jnp.float32)
    if mask_illegal:
        logits = jnp.where(target >= 0, logits, ILLEGAL_LOGIT)
    target = jax.nn.relu(target)
    if temperature != 1.0:
        target = jnp.power(target, 1.0 / temperature)
        total = jnp.sum(target, -1, keepdims=True)
        target = target / jnp.where(total > 0, total, 1.0)
    target = jax.lax.stop_gradient(target)
    log_p = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.sum(jnp.where(target > 0, target * log_p, 0.0), axis=-1)


def wdl_loss(logits: jax.Array, target: jax.Array) -> jax.Array:
    """Per-example WDL cross-entropy: logits ``[B, 3]``, target W/D/L ``[B, 3]`` -> ``[B]``."""
    target = jax.lax.stop_gradient(target)
    log_p = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
    return -jnp.sum(jnp.where(target > 0, target * log_p, 0.0), axis=-1)


def moves_left_loss(pred: jax.Array, target: jax.Array, scale: float = 20.0,
                    delta: float = 10.0) -> jax.Array:
    """Per-example lc0 moves-left loss: Huber(delta / scale) of ``pred / scale`` vs
    ``target / scale``; ``[B]`` plies each -> ``[B]``."""
    err = (pred.astype(jnp.float32) - target) / scale
    d = delta / scale
    abs_err = jnp.abs(err)
    return jnp.where(abs_err <= d, 0.5 * err * err, d * (abs_err - 0.5 * d))


def is_kernel(path: tuple[Any, ...]) -> bool:
    """Whether a parameter path names a weight kernel (flax ``kernel``), which lc0
    regularises; biases are not."""
    last = path[-1] if path else None
    name = getattr(last, "key", getattr(last, "name", last))
    return name == "kernel"


def l2_penalty(params: Any, l2: float,
               select: Callable[[tuple[Any, ...]], bool] = is_kernel) -> jax.Array:
    """``l2 * sum(w ** 2)`` over the parameters ``select`` picks (kernels by default)."""
    leaves = jax.tree_util.tree_flatten_with_path(params)[0]
    total = jnp.float32(0.0)
    for path, leaf in leaves:
        if select(path):
            total = total + jnp.sum(jnp.square(jnp.asarray(leaf, jnp.float32)))
    return l2 * total


def value_target(batch: Batch, config: LossConfig) -> jax.Array:
    """W/D/L target ``[B, 3]``: ``q_ratio * Q + (1 - q_ratio) * result`` (lc0 ``qMix``)."""
    q = batch.best_wdl if config.q_source == "best" else batch.root_wdl
    return config.q_ratio * q + (1.0 - config.q_ratio) * batch.result


def loss_terms(outputs: Any, params: Any, batch: Batch, config: LossConfig
               ) -> tuple[jax.Array, dict[str, jax.Array]]:
    """Total loss and metrics for one batch.

    Args:
      outputs: the network's ``ModelOutput`` on ``batch.planes`` (policy_logits [B, 1858],
        wdl_logits [B, 3], moves_left [B] or None).
      params: the parameters (for the L2 term).
      batch: targets.
      config: weights and options.

    Returns:
      (total, metrics): metrics hold the unweighted batch means ``policy``, ``value``,
      ``moves_left`` (0 without the head), ``reg``, the ``total``, ``value_mse`` (lc0's
      MSE of the expected score, divided by 4), ``policy_accuracy`` (argmax of the
      masked logits equals the target's argmax) and ``moves_left_mae`` (plies).
    """
    policy = jnp.mean(policy_loss(outputs.policy_logits, batch.policy, config.mask_illegal,
                                  config.policy_temperature))
    z = value_target(batch, config)
    value = jnp.mean(wdl_loss(outputs.wdl_logits, z))
    if outputs.moves_left is not None:
        ml = jnp.mean(moves_left_loss(outputs.moves_left, batch.moves_left,
                                      config.moves_left_scale, config.moves_left_delta))
        ml_mae = jnp.mean(jnp.abs(outputs.moves_left - batch.moves_left))
        ml_weight = config.moves_left_weight
    else:
        ml = ml_mae = jnp.float32(0.0)
        ml_weight = 0.0
    reg = l2_penalty(params, config.l2)
    total = (config.policy_weight * policy + config.value_weight * value + ml_weight * ml
             + config.reg_weight * reg)
    probs = jax.nn.softmax(outputs.wdl_logits.astype(jnp.float32), axis=-1)
    scalar = jnp.array([1.0, 0.0, -1.0])
    mse = jnp.mean(jnp.square(probs @ scalar - z @ scalar)) / 4.0
    masked = jnp.where(batch.policy >= 0, outputs.policy_logits, ILLEGAL_LOGIT)
    accuracy = jnp.mean(jnp.argmax(masked, -1) == jnp.argmax(batch.policy, -1))
    metrics = {"loss": total, "policy": policy, "value": value, "moves_left": ml, "reg": reg,
               "value_mse": mse, "policy_accuracy": accuracy, "moves_left_mae": ml_mae}
    return total, metrics


__all__ = ["LossConfig", "is_kernel", "l2_penalty", "loss_terms", "moves_left_loss",
           "policy_loss", "value_target", "wdl_loss"]
