"""The built-in evaluator: a hand-written chess heuristic behind the ``Model`` interface.

No weights to load: ``builtin_model()`` returns a ``Model`` whose ``apply`` is a pure,
jittable jax function of lc0's 112-plane input ``[B, 112, 8, 8]``. It only reads
history slot 0 (planes 0..11: ours P N B R Q K, theirs P N B R Q K, in the side
to move's frame: row = rank seen from the mover, col = file) and the rule50 plane
(109). Its ``params`` are a small dict of float32 arrays (piece values,
piece-square tables, weights), passed as data so they can be tuned or swapped
without recompiling.

Value: PeSTO material + piece-square tables, tapered between middle game and end
game by the non-pawn material left, plus a one-move static-exchange "threat"
term (the side to move may cash in its best capture; a second hanging piece of
its own is likely lost) and an end-game mop-up term (with a clear lead: weak king
to the edge, kings together), shrunk toward a draw as the rule50 count grows. The
centipawn score is mapped to (win, draw, loss) by a logistic win expectancy with
a draw margin: ``W = sigmoid((cp - m) / s)``, ``L = sigmoid((-cp - m) / s)``,
``D = 1 - W - L`` (so the draw share shrinks as ``|cp|`` grows), the scale ``s``
widening with ``|cp|`` so that big leads keep a slope.

Policy: a score in pawns for each of lc0's 1858 moves, ``TABLE[kind, to] +
FROM_TERM[from]`` where the kind (pawn push / capture, N B R Q K, q/r/b promotion
push / capture) is read from the mover's square: captures by MVV-LVA with a
static-exchange safety check of the destination, promotions (queen high,
under-promotions low), checks (squares from which each piece type attacks the enemy
king, sliders scanned with blockers; discovered checks ignored), rescuing a
threatened piece (e.g. one attacked by an enemy pawn), piece-square gain, castling /
early king moves, and the strong king walking toward the weak one in won end games.
Scores are softly capped and scaled into logits. Illegal moves get arbitrary logits:
the search masks them.

Attack geometry uses row-packed uint8 bitboards ([..., 8] bytes, one per rank) and
shifts; all tables are numpy constants built at import. The jitted function is a few
dozen small fused kernels and one gather of [B, 1858].

Attribution: the piece values and piece-square tables are PeSTO's, by Ronald Friederich
(RofChade / PeSTO), as published on the Chess Programming Wiki's "PeSTO's Evaluation
Function" page; source and licence notes are in ``tables`` and the repository's NOTICE.

The code, by concern: ``tables`` (PeSTO tables, move kinds, ``default_params``),
``geometry`` (bitboards, attacks, ``BoardFeatures``), ``evaluation`` (the value and its
W/D/L mapping), ``policy`` (move scores); this module puts them behind ``Model``.
"""

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
