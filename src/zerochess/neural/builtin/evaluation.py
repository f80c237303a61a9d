"""The value of the built-in evaluator: tapered PeSTO material and piece-square tables,
a static-exchange threat term, an end-game mop-up term, shrunk toward a draw as rule50
grows, mapped to (win, draw, loss) by a logistic win expectancy with a draw margin."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from zerochess.neural.builtin.geometry import BoardFeatures, board_features
from zerochess.neural.builtin.tables import Params

RULE50_PLANE = 109  # the input plane holding the rule50 count


def per_square(pieces: jax.Array, weights: Any) -> jax.Array:
    """``sum_T pieces[:, T] * weights[T]``: [B, 6, 64] x [6] -> [B, 64] (unrolled, fuses)."""
    return sum(pieces[:, i] * weights[i] for i in range(6))


def _flip_ranks(table: jax.Array) -> jax.Array:
    """[..., 64] square table seen from the other side (``sq ^ 56``)."""
    return table.reshape(*table.shape[:-1], 8, 8)[..., ::-1, :].reshape(*table.shape)


def game_phase(params: Params, feats: BoardFeatures) -> jax.Array:
    """[B] middle-game weight in [0, 1] (PeSTO phase / 24, capped)."""
    counts = feats.ours.sum(-1) + feats.theirs.sum(-1)  # [B, 6]
    return jnp.minimum(counts @ params["phase_inc"], 24.0) / 24.0


def material_cp(params: Params, feats: BoardFeatures) -> jax.Array:
    """[B] tapered material balance (cp) for the side to move (piece values only)."""
    diff = feats.ours.sum(-1) - feats.theirs.sum(-1)  # [B, 6]
    mg = diff @ params["mg_value"]
    eg = diff @ params["eg_value"]
    w = game_phase(params, feats)
    return w * mg + (1.0 - w) * eg


def hanging(values: jax.Array, attacked: jax.Array, defended: jax.Array,
             least_attacker: jax.Array) -> jax.Array:
    """Static-exchange loss (pawns) of pieces worth ``values`` [..., 64]: the whole piece
    when attacked and undefended, else what the least attacker gains by trading."""
    loss = jnp.where(defended > 0, jax.nn.relu(values - least_attacker), values)
    return jnp.where(attacked > 0, loss, 0.0)


_ROW = (np.arange(64) // 8).astype(np.float32)
_COL = (np.arange(64) % 8).astype(np.float32)
_CENTER_DISTANCE = (np.maximum(3 - _ROW, _ROW - 4) + np.maximum(3 - _COL, _COL - 4))


def king_distance(feats: BoardFeatures, to_every_square: bool = False) -> jax.Array:
    """Manhattan distance from their king to our king [B] (or to every square [B, 64])."""
    row, col = feats.theirs[:, 5] @ _ROW, feats.theirs[:, 5] @ _COL  # [B]
    if not to_every_square:
        return (jnp.abs(feats.ours[:, 5] @ _ROW - row) + jnp.abs(feats.ours[:, 5] @ _COL - col))
    return jnp.abs(_ROW[None] - row[:, None]) + jnp.abs(_COL[None] - col[:, None])


def mop_up_weight(params: Params, feats: BoardFeatures) -> jax.Array:
    """[B] in [-1, 1]: how clearly won an end game is, signed for the side to move.

    ``sign(lead) * clip((|lead| - 200) / 300, 0, 1) * (1 - phase)`` with ``lead`` the
    tapered material balance (cp): 0 in the middle game or when material is close."""
    lead = material_cp(params, feats)
    strength = jnp.clip((jnp.abs(lead) - 200.0) / 300.0, 0.0, 1.0)
    return jnp.sign(lead) * strength * (1.0 - game_phase(params, feats))


def evaluate_cp(params: Params, planes: jax.Array,
                feats: BoardFeatures | None = None) -> jax.Array:
    """[B] static evaluation (cp) for the side to move of ``planes`` [B, 112, 8, 8].

    Tapered PeSTO material + PST, tempo, ``threat`` x the best static-exchange gain
    available to the mover minus ``hang2`` x the second piece of its own en prise, an
    end-game mop-up term (weak king to the edge, kings together), all scaled toward 0 as
    rule50 grows past 20.
    """
    if feats is None:
        feats = board_features(params, planes)
    w = game_phase(params, feats)[:, None, None]  # [B, 1, 1]
    table = (w * (params["mg_pst"] + params["mg_value"][:, None])[None]
             + (1 - w) * (params["eg_pst"] + params["eg_value"][:, None])[None])  # [B, 6, 64]
    static = (jnp.sum(feats.ours * table, axis=(1, 2))
              - jnp.sum(feats.theirs * _flip_ranks(table), axis=(1, 2)))

    see = params["see_value"]
    their_vals = per_square(feats.theirs, see)
    our_vals = per_square(feats.ours, see)
    gains = hanging(their_vals, feats.our_count, feats.their_count, feats.our_min)
    losses = hanging(our_vals, feats.their_count, feats.our_count, feats.their_min)
    worst = losses.max(-1, keepdims=True)
    ties = jnp.sum(losses >= worst, axis=-1) > 1
    second_loss = jnp.where(ties, worst[:, 0], jnp.max(jnp.where(losses < worst, losses, 0), -1))
    cp = (static + params["tempo"]
          + 100.0 * (params["threat"] * gains.max(-1) - params["hang2"] * second_loss))

    # Mop-up: with a clear lead in an end game, drive the weak king to the edge and
    # bring the kings together (gives the search a slope toward mate).
    lead = mop_up_weight(params, feats)  # [B], > 0 when the mover is the strong side
    weak_king = jnp.where(lead[:, None] > 0, feats.theirs[:, 5], feats.ours[:, 5])
    edge = weak_king @ _CENTER_DISTANCE  # 0 (centre) .. 6 (corner)
    cp = cp + params["mop_up"] * lead * (10.0 * edge + 4.0 * (14.0 - king_distance(feats)))

    rule50 = planes[:, RULE50_PLANE, 0, 0]
    shrink = params["rule50_shrink"] * jnp.clip((rule50 - 20.0) / 80.0, 0.0, 1.0)
    return cp * (1.0 - shrink)


def wdl_log_probs(params: Params, cp: jax.Array) -> jax.Array:
    """[B, 3] log (W, D, L) for centipawns ``cp`` [B]: logistic with a draw margin ``m``.

    The logistic's scale widens with ``|cp|`` (``s = wdl_scale + wdl_spread * |cp|``), so a
    big lead still has a slope (W tops out near ``sigmoid(1 / wdl_spread)``): without it
    a queen up and a queen-and-rook up both read W = 1.000 and the search cannot make
    progress toward mate.
    """
    m = params["draw_margin"]
    s = params["wdl_scale"] + params["wdl_spread"] * jnp.abs(cp)
    x_win = (cp - m) / s
    x_loss = (-cp - m) / s
    draw = jax.nn.sigmoid(-x_win) - jax.nn.sigmoid(x_loss)  # = 1 - W - L > 0
    return jnp.stack(
        [jax.nn.log_sigmoid(x_win), jnp.log(jnp.maximum(draw, 1e-7)),
         jax.nn.log_sigmoid(x_loss)], axis=-1)
