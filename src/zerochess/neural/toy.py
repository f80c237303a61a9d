"""A toy network for tests and experiments: a fixed random linear map of the 112 planes."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.policy_map import NUM_MOVES
from zerochess.neural.model import NUM_PLANES, Model, ModelOutput

MAX_MOVES_LEFT = 60.0  # the toy moves-left head's range (plies)


def _apply(params: dict[str, jax.Array], planes: jax.Array) -> ModelOutput:
    x = planes.reshape(planes.shape[0], -1).astype(jnp.float32)
    moves_left = None
    if "moves_left" in params:
        moves_left = MAX_MOVES_LEFT * jax.nn.sigmoid(x @ params["moves_left"])
    return ModelOutput(policy_logits=x @ params["policy"], wdl_logits=x @ params["wdl"],
                       moves_left=moves_left)


def linear_model(seed: int = 0, scale: float = 0.05, moves_left: bool = False) -> Model:
    """``planes [B,112,8,8] -> (planes @ Wp, planes @ Wv)`` with Gaussian weights; with
    ``moves_left`` also a moves-left head ``60 * sigmoid(planes @ Wm)`` plies (the policy
    and value weights are the same as without it)."""
    rng = np.random.default_rng(seed)
    inputs = NUM_PLANES * 64
    params = {
        "policy": jnp.asarray(rng.normal(0, scale, (inputs, NUM_MOVES)).astype(np.float32)),
        "wdl": jnp.asarray(rng.normal(0, scale, (inputs, 3)).astype(np.float32)),
    }
    if moves_left:
        params["moves_left"] = jnp.asarray(rng.normal(0, scale, inputs).astype(np.float32))
    return Model(name=f"linear:{seed}" + ("+mlh" if moves_left else ""), apply=_apply,
                 params=params, has_moves_left=moves_left)
