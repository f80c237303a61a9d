"""The built-in evaluator: a hand-written chess heuristic behind the ``Model`` interface."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from zerochess.neural.builtin.evaluation import (
    evaluate_cp,
    game_phase,
    material_cp,
    mop_up_weight,
    wdl_log_probs,
)
from zerochess.neural.builtin.geometry import BoardFeatures, board_features, materialize
from zerochess.neural.builtin.policy import kind_table, policy_scores
from zerochess.neural.builtin.tables import EG_PST, MG_PST, Params, default_params
from zerochess.neural.model import Model, ModelOutput


def builtin_apply(params: Params, planes: jax.Array) -> ModelOutput:
    """``planes`` [B, 112, 8, 8] float32 -> ModelOutput(policy_logits [B, 1858],
    wdl_logits [B, 3] (log-probabilities), moves_left=None). Pure and jittable."""
    planes = jnp.asarray(planes, jnp.float32)
    # Computed once and shared: unmaterialised, XLA:CPU re-derives the attack maps inside
    # several consumers (about 2x slower).
    feats = BoardFeatures(*(materialize(x) for x in board_features(params, planes)))
    cp = evaluate_cp(params, planes, feats)
    scores = policy_scores(params, feats)
    logits = params["policy_scale"] * scores / (1.0 + jnp.abs(scores) / params["policy_cap"])
    return ModelOutput(policy_logits=logits, wdl_logits=wdl_log_probs(params, cp),
                       moves_left=None)


def builtin_model() -> Model:
    """The embedded default evaluator (no weights): ``Model("builtin", builtin_apply, params)``.

    Its searches check new nodes for a mate in one by default (``Model.mate_check``,
    ``SearchConfig.mate_check``): its hand-written policy ranks some mating moves too low
    for a search of a few dozen visits to try them (issue 11)."""
    return Model(name="builtin", apply=builtin_apply, params=default_params(),
                 has_moves_left=False, light=True, mate_check=True)


__all__ = [
    "EG_PST", "MG_PST", "BoardFeatures", "Params", "board_features", "builtin_apply",
    "builtin_model", "default_params", "evaluate_cp", "game_phase", "kind_table",
    "material_cp", "mop_up_weight", "policy_scores", "wdl_log_probs",
]
