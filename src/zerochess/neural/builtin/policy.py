"""The policy of the built-in evaluator: a score in pawns for each of lc0's 1858 moves,
``kind_table[kind, to] + from_term[from]``."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from zerochess.neural.builtin.evaluation import (
    game_phase,
    hanging,
    king_distance,
    mop_up_weight,
    per_square,
)
from zerochess.neural.builtin.geometry import BoardFeatures, materialize
from zerochess.neural.builtin.tables import KIND_PUSH, KINDS, MOVES, NUM_KINDS, Params


def kind_table(params: Params, feats: BoardFeatures) -> jax.Array:
    """[B, 14, 64] score (pawns) of a move of each kind (see ``_KIND_PIECE``) landing on
    each square: MVV-LVA capture, static-exchange loss of the landed piece, its PST,
    check, promotion value, castling / king-move terms."""
    see = params["see_value"]
    w = game_phase(params, feats)[:, None, None]  # [B, 1, 1]
    # Static one-hot selections instead of gathers (XLA:CPU fuses gathers poorly).
    landed = KINDS["landed_onehot"]  # [6, 14, 64]; none selects nothing (value 0)
    mover = jnp.einsum("tk,t->k", KINDS["mover_onehot"], see)[None, :, None]  # [1, 14, 1]
    landed_val = jnp.einsum("tkq,t->kq", landed, see)[None]  # [1, 14, 64]

    victim = per_square(feats.theirs, see)[:, None, :]  # [B, 1, 64]
    capture = jnp.where(victim > 0, params["w_capture"] + victim - params["w_lva"] * mover, 0.0)
    # The mover itself attacked t unless it is a pawn push, so it is no defender there.
    defenders = feats.our_count[:, None, :] - (1.0 - KIND_PUSH[None, :, None])
    loss = hanging(landed_val, feats.their_count[:, None, :], defenders,
                    feats.their_min[:, None, :])

    pst = w * params["mg_pst"][None] + (1 - w) * params["eg_pst"][None]  # [B, 6, 64]
    dest = params["w_pst"] * pst + params["w_check"] * feats.check_from  # [B, 6, 64]

    promo = KINDS["promo"] * (landed_val - see[0]) - params["under_promo"] * KINDS["under"]
    rook = feats.ours[:, 3:4]  # [B, 1, 64]: king-to-rook = castling
    king = w * (params["castle"] * rook - params["king_move"] * (1.0 - rook))
    # Mop-up: the strong side's king walks toward the weak king.
    chase = jax.nn.relu(mop_up_weight(params, feats))[:, None, None]
    approach = king_distance(feats)[:, None, None] - king_distance(feats, True)[:, None, :]
    king = king + params["mop_up_policy"] * chase * approach
    terms = [capture, -params["w_loss"] * loss, jnp.broadcast_to(promo, capture.shape),
             KINDS["is_king"] * king]
    terms += [landed[i][None] * dest[:, i, None, :] for i in range(6)]  # dest of landed type
    return sum(terms) * KINDS["valid"]


def policy_scores(params: Params, feats: BoardFeatures) -> jax.Array:
    """[B, 1858] heuristic move scores (pawns) in lc0's policy order (mover's frame):
    ``kind_table[kind(move), to] + from_term[from]``, with the from-term rewarding moving
    a threatened piece (e.g. one attacked by a pawn) and removing the PST of f."""
    see = params["see_value"]
    w = game_phase(params, feats)[:, None]  # [B, 1]
    ours = feats.ours
    table = materialize(kind_table(params, feats)).reshape(-1, NUM_KINDS * 64)

    our_vals = per_square(ours, see)  # [B, 64]
    threat = hanging(our_vals, feats.their_count, feats.our_count, feats.their_min)
    pst = w[:, :, None] * params["mg_pst"][None] + (1 - w[:, :, None]) * params["eg_pst"][None]
    from_term = params["w_rescue"] * threat - params["w_pst"] * jnp.sum(ours * pst, axis=1)

    # Piece type on each square (0..5, 6 = none) -> each move's kind -> its table entry.
    no_piece = jnp.full_like(ours[:, :1], 0.5)
    piece = jnp.argmax(jnp.concatenate([ours, no_piece], axis=1), axis=1).astype(jnp.int32)
    piece_i = jnp.take(piece, MOVES["from"], axis=1)  # [B, 1858]
    kind = jnp.where(MOVES["fixed_kind"] >= 0, MOVES["fixed_kind"],
                     jnp.where(piece_i == 0, MOVES["pawn_kind"], piece_i))
    scores = jnp.take_along_axis(table, kind * 64 + MOVES["to"], axis=1,
                                 mode="promise_in_bounds")
    return scores + jnp.take(materialize(from_term), MOVES["from"], axis=1)
