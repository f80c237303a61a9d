"""The one model interface: 112 lc0 planes in; policy logits, WDL logits, moves-left out."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

NUM_PLANES = 112


class ModelOutput(NamedTuple):
    policy_logits: jax.Array  # [B, 1858] raw logits over lc0's policy map (mover's frame)
    wdl_logits: jax.Array  # [B, 3] logits of (win, draw, loss) for the side to move
    moves_left: jax.Array | None = None  # [B] predicted plies left, if the net has the head


ApplyFn = Callable[[Any, jax.Array], ModelOutput]


@dataclasses.dataclass(frozen=True, eq=False)
class Model:
    """A network: ``apply(params, planes[B, 112, 8, 8] float32) -> ModelOutput``.

    ``apply`` must be a pure jax function (it is jitted inside the search, with
    ``params`` passed as data so swapping weights never recompiles).
    Planes are lc0's classic 112-plane input: plane p, row = rank, col = file, in
    the side to move's frame.
    """

    name: str
    apply: ApplyFn
    params: Any
    has_moves_left: bool = False
    # the search's default for ``SearchConfig.mate_check`` (None there): a mate in one at a
    # new node is proven at expansion (the built-in evaluator's policy misses some)
    mate_check: bool = False
    light: bool = False  # cheaper than host move generation: searches need not shard
    # the flax module behind ``apply`` when it is one (an ``SEResNet``: what ``export_lc0``
    # can write), else None (the built-in evaluator, a user's own apply function)
    module: Any = None

    def __call__(self, planes: jax.Array) -> ModelOutput:
        return self.apply(self.params, planes)

    def wdl(self, planes: jax.Array) -> jax.Array:
        """[B, 3] WDL probabilities for the side to move."""
        return jax.nn.softmax(self(jnp.asarray(planes, jnp.float32)).wdl_logits, axis=-1)
