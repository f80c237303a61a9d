"""A toy network for tests and experiments: a fixed random linear map of the 112 planes.

Deterministic in its seed, cheap, and with continuous outputs (no ties), which
makes it a good evaluator for comparing search implementations exactly.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.policy_map import NUM_MOVES
from zerochess.neural.model import NUM_PLANES, Model, ModelOutput


def _apply(params: dict[str, jax.Array], planes: jax.Array) -> ModelOutput:
    x = planes.reshape(planes.shape[0], -1).astype(jnp.float32)
    return ModelOutput(policy_logits=x @ params["policy"], wdl_logits=x @ params["wdl"])


def linear_model(seed: int = 0, scale: float = 0.05) -> Model:
    """``planes [B,112,8,8] -> (planes @ Wp, planes @ Wv)`` with Gaussian weights."""
    rng = np.random.default_rng(seed)
    inputs = NUM_PLANES * 64
    params = {
        "policy": jnp.asarray(rng.normal(0, scale, (inputs, NUM_MOVES)).astype(np.float32)),
        "wdl": jnp.asarray(rng.normal(0, scale, (inputs, 3)).astype(np.float32)),
    }
    return Model(name=f"linear:{seed}", apply=_apply, params=params)
