"""Tables of the built-in evaluator, built once with numpy at import: PeSTO piece values
and piece-square tables, static-exchange values, the move kinds of lc0's 1858 policy
entries, and the tunable ``default_params``."""

from __future__ import annotations

from typing import Any

import chess
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.policy_map import FROM_SQUARE, NUM_MOVES, PROMOTION, TO_SQUARE

Params = dict[str, jax.Array]

# PeSTO piece values, game-phase increments and piece-square tables, P N B R Q K.
# Source: Ronald Friederich, author of the engines RofChade and PeSTO ("Piece Square
# Tables Only"), who tuned them with Texel's tuning method (rofchade.nl) and published
# them; they are reproduced on the Chess Programming Wiki page "PeSTO's Evaluation
# Function" (https://www.chessprogramming.org/PeSTO%27s_Evaluation_Function), whose
# layout is kept here. Licence: no licence statement by the author was found for the
# tables; the wiki's text is under its own licence (Creative Commons Attribution-
# ShareAlike, as stated on chessprogramming.org). See NOTICE at the repository root.
# The tables are written rank 8 first (as printed on that page) for the side to move;
# ``_a1_first`` flips them to our a1 = 0 square numbering.
_MG_VALUE = (82, 337, 365, 477, 1025, 0)
_EG_VALUE = (94, 281, 297, 512, 936, 0)
_PHASE_INC = (0, 1, 1, 2, 4, 0)  # 24 = full middle game

_MG_PST_RANK8_FIRST = (
    (  # pawn
        0, 0, 0, 0, 0, 0, 0, 0,
        98, 134, 61, 95, 68, 126, 34, -11,
        -6, 7, 26, 31, 65, 56, 25, -20,
        -14, 13, 6, 21, 23, 12, 17, -23,
        -27, -2, -5, 12, 17, 6, 10, -25,
        -26, -4, -4, -10, 3, 3, 33, -12,
        -35, -1, -20, -23, -15, 24, 38, -22,
        0, 0, 0, 0, 0, 0, 0, 0,
    ),
    (  # knight
        -167, -89, -34, -49, 61, -97, -15, -107,
        -73, -41, 72, 36, 23, 62, 7, -17,
        -47, 60, 37, 65, 84, 129, 73, 44,
        -9, 17, 19, 53, 37, 69, 18, 22,
        -13, 4, 16, 13, 28, 19, 21, -8,
        -23, -9, 12, 10, 19, 17, 25, -16,
        -29, -53, -12, -3, -1, 18, -14, -19,
        -105, -21, -58, -33, -17, -28, -19, -23,
    ),
    (  # bishop
        -29, 4, -82, -37, -25, -42, 7, -8,
        -26, 16, -18, -13, 30, 59, 18, -47,
        -16, 37, 43, 40, 35, 50, 37, -2,
        -4, 5, 19, 50, 37, 37, 7, -2,
        -6, 13, 13, 26, 34, 12, 10, 4,
        0, 15, 15, 15, 14, 27, 18, 10,
        4, 15, 16, 0, 7, 21, 33, 1,
        -33, -3, -14, -21, -13, -12, -39, -21,
    ),
    (  # rook
        32, 42, 32, 51, 63, 9, 31, 43,
        27, 32, 58, 62, 80, 67, 26, 44,
        -5, 19, 26, 36, 17, 45, 61, 16,
        -24, -11, 7, 26, 24, 35, -8, -20,
        -36, -26, -12, -1, 9, -7, 6, -23,
        -45, -25, -16, -17, 3, 0, -5, -33,
        -44, -16, -20, -9, -1, 11, -6, -71,
        -19, -13, 1, 17, 16, 7, -37, -26,
    ),
    (  # queen
        -28, 0, 29, 12, 59, 44, 43, 45,
        -24, -39, -5, 1, -16, 57, 28, 54,
        -13, -17, 7, 8, 29, 56, 47, 57,
        -27, -27, -16, -16, -1, 17, -2, 1,
        -9, -26, -9, -10, -2, -4, 3, -3,
        -14, 2, -11, -2, -5, 2, 14, 5,
        -35, -8, 11, 2, 8, 15, -3, 1,
        -1, -18, -9, 10, -15, -25, -31, -50,
    ),
    (  # king
        -65, 23, 16, -15, -56, -34, 2, 13,
        29, -1, -20, -7, -8, -4, -38, -29,
        -9, 24, 2, -16, -20, 6, 22, -22,
        -17, -20, -12, -27, -30, -25, -14, -36,
        -49, -1, -27, -39, -46, -44, -33, -51,
        -14, -14, -22, -46, -44, -30, -15, -27,
        1, 7, -8, -64, -43, -16, 9, 8,
        -15, 36, 12, -54, 8, -28, 24, 14,
    ),
)

_EG_PST_RANK8_FIRST = (
    (  # pawn
        0, 0, 0, 0, 0, 0, 0, 0,
        178, 173, 158, 134, 147, 132, 165, 187,
        94, 100, 85, 67, 56, 53, 82, 84,
        32, 24, 13, 5, -2, 4, 17, 17,
        13, 9, -3, -7, -7, -8, 3, -1,
        4, 7, -6, 1, 0, -5, -1, -8,
        13, 8, 8, 10, 13, 0, 2, -7,
        0, 0, 0, 0, 0, 0, 0, 0,
    ),
    (  # knight
        -58, -38, -13, -28, -31, -27, -63, -99,
        -25, -8, -25, -2, -9, -25, -24, -52,
        -24, -20, 10, 9, -1, -9, -19, -41,
        -17, 3, 22, 22, 22, 11, 8, -18,
        -18, -6, 16, 25, 16, 17, 4, -18,
        -23, -3, -1, 15, 10, -3, -20, -22,
        -42, -20, -10, -5, -2, -20, -23, -44,
        -29, -51, -23, -15, -22, -18, -50, -64,
    ),
    (  # bishop
        -14, -21, -11, -8, -7, -9, -17, -24,
        -8, -4, 7, -12, -3, -13, -4, -14,
        2, -8, 0, -1, -2, 6, 0, 4,
        -3, 9, 12, 9, 14, 10, 3, 2,
        -6, 3, 13, 19, 7, 10, -3, -9,
        -12, -3, 8, 10, 13, 3, -7, -15,
        -14, -18, -7, -1, 4, -9, -15, -27,
        -23, -9, -23, -5, -9, -16, -5, -17,
    ),
    (  # rook
        13, 10, 18, 15, 12, 12, 8, 5,
        11, 13, 13, 11, -3, 3, 8, 3,
        7, 7, 7, 5, 4, -3, -5, -3,
        4, 3, 13, 1, 2, 1, -1, 2,
        3, 5, 8, 4, -5, -6, -8, -11,
        -4, 0, -5, -1, -7, -12, -8, -16,
        -6, -6, 0, 2, -9, -9, -11, -3,
        -9, 2, 3, -1, -5, -13, 4, -20,
    ),
    (  # queen
        -9, 22, 22, 27, 27, 19, 10, 20,
        -17, 20, 32, 41, 58, 25, 30, 0,
        -20, 6, 9, 49, 47, 35, 19, 9,
        3, 22, 24, 45, 57, 40, 57, 36,
        -18, 28, 19, 47, 31, 34, 39, 23,
        -16, -27, 15, 6, 9, 17, 10, 5,
        -22, -23, -30, -16, -16, -23, -36, -32,
        -33, -28, -22, -43, -5, -32, -20, -41,
    ),
    (  # king
        -74, -35, -18, -18, -11, 15, 4, -17,
        -12, 17, 14, 17, 17, 38, 23, 11,
        10, 17, 23, 15, 20, 45, 44, 13,
        -8, 22, 24, 27, 26, 33, 26, 3,
        -18, -4, 21, 24, 27, 23, 9, -11,
        -19, -3, 11, 21, 23, 16, 7, -9,
        -27, -11, 4, 13, 14, 4, -5, -17,
        -53, -34, -21, -11, -28, -14, -24, -43,
    ),
)


def _a1_first(tables: tuple[tuple[int, ...], ...]) -> np.ndarray:
    """[6, 64] float32 tables indexed by square a1 = 0 (rank-major) from the owner's side."""
    t = np.asarray(tables, np.float32).reshape(6, 8, 8)
    return np.ascontiguousarray(t[:, ::-1, :].reshape(6, 64))


MG_PST = _a1_first(_MG_PST_RANK8_FIRST)
"""[6, 64] middle-game piece-square bonus (cp), P N B R Q K, square from the owner's side."""
EG_PST = _a1_first(_EG_PST_RANK8_FIRST)
"""[6, 64] end-game piece-square bonus (cp)."""

# Static-exchange values (pawns) used for captures, threats and hanging pieces.
# The king is never a victim (0) and, as an attacker, only takes undefended pieces.
_SEE_VALUE = (1.0, 3.2, 3.3, 5.0, 9.5, 0.0)
KING_ATTACKER_VALUE = 100.0
NO_ATTACKER = 1000.0

# Move kinds: the policy score of a move depends on the square it leaves only through
# the mover's kind and a per-square term, so it is ``TABLE[kind, to] + FROM_TERM[from]``.
# Kinds: 0 pawn push, 1..5 N B R Q K, 6 no piece of ours (scores 0), 7 pawn capture,
# 8..10 push-promotion to Q R B, 11..13 capture-promotion to Q R B. A pawn kind landing
# on the last rank through a plain index is lc0's knight promotion.
NUM_KINDS = 14
_NONE = 6
_KIND_PIECE = np.array([0, 1, 2, 3, 4, 5, _NONE, 0, 0, 0, 0, 0, 0, 0], np.int32)
KIND_PUSH = np.array([1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0], np.float32)
_PROMO_KIND = {chess.QUEEN: 0, chess.ROOK: 1, chess.BISHOP: 2}  # offset within 8..10 / 11..13


def _kind_tables() -> dict[str, np.ndarray]:
    """One-hot [6, 14, 64] piece type standing on ``to`` after a move of each kind, one-hot
    [6, 14] type of the mover, and [14, 64] promotion / under-promotion flags."""
    last_rank = np.arange(64) // 8 == 7
    landed = np.repeat(_KIND_PIECE[:, None], 64, axis=1)
    for k in (0, 7):
        landed[k, last_rank] = 1  # knight promotion
    for k, piece in zip(range(8, 14), (4, 3, 2) * 2, strict=True):
        landed[k, :] = piece
    promo = (landed != _KIND_PIECE[:, None]) & (landed != _NONE)
    return {
        "landed_onehot": (landed[None] == np.arange(6)[:, None, None]).astype(np.float32),
        "mover_onehot": (_KIND_PIECE[None] == np.arange(6)[:, None]).astype(np.float32),
        "promo": promo.astype(np.float32),
        "is_king": (np.arange(NUM_KINDS) == 5).astype(np.float32)[:, None],
        "valid": (np.arange(NUM_KINDS) != _NONE).astype(np.float32)[:, None],
        "under": (promo & (landed != 4)).astype(np.float32),
    }


KINDS = _kind_tables()


def _move_tables() -> dict[str, np.ndarray]:
    """Static per-move facts of the 1858 policy entries (all numpy, shape [1858])."""
    frm = FROM_SQUARE.astype(np.int32)
    to = TO_SQUARE.astype(np.int32)
    promo = PROMOTION.astype(np.int32)
    push = frm % 8 == to % 8
    # q/r/b promotions are pawn moves whatever stands on f (illegal otherwise): fixed kind.
    promo_kind = np.array([_PROMO_KIND.get(int(p), 0) for p in promo], np.int32)
    fixed_kind = np.where(promo > 0, np.where(push, 8, 11) + promo_kind, -1)
    return {
        "from": frm,
        "to": to,
        "pawn_kind": np.where(push, 0, 7).astype(np.int32),
        "fixed_kind": fixed_kind.astype(np.int32),
    }


MOVES = _move_tables()
assert MOVES["from"].shape == (NUM_MOVES,)
assert int((MOVES["fixed_kind"] >= 0).sum()) == 66


def default_params() -> Params:
    """The evaluator's tunable data (float32 arrays; values in cp unless noted).

    Keys: ``mg_value``/``eg_value`` [6], ``mg_pst``/``eg_pst`` [6, 64] (a1 = 0 from
    the owner's side), ``phase_inc`` [6], ``see_value`` [6] (pawns), and scalar
    weights: ``threat`` (share of the best capture credited to the side to move),
    ``hang2`` (share of its second hanging piece debited), ``draw_margin``,
    ``wdl_scale`` (cp) and ``wdl_spread`` (logistic W/D/L mapping), ``rule50_shrink``
    (eval shrink at rule50 = 100), ``tempo`` (cp), ``mop_up`` (end-game king-chase
    scale, see ``mop_up_weight``); policy weights in pawns: ``w_capture``,
    ``w_lva``, ``w_loss``, ``w_rescue``, ``w_check``, ``w_pst`` (per cp),
    ``under_promo``, ``king_move``, ``castle``, ``mop_up_policy`` (per square the
    strong king gets closer); ``policy_scale`` (logits per pawn near 0)
    and ``policy_cap`` (pawns; large scores are compressed as ``s / (1 + |s| / cap)`` so a
    free queen does not starve every other move of visits).
    """
    f32 = np.float32
    p: dict[str, Any] = {
        "mg_value": np.asarray(_MG_VALUE, f32),
        "eg_value": np.asarray(_EG_VALUE, f32),
        "mg_pst": MG_PST,
        "eg_pst": EG_PST,
        "phase_inc": np.asarray(_PHASE_INC, f32),
        "see_value": np.asarray(_SEE_VALUE, f32),
        "threat": 0.6,
        "hang2": 0.5,
        "draw_margin": 150.0,
        "wdl_scale": 100.0,
        "wdl_spread": 0.2,
        "rule50_shrink": 0.6,
        "tempo": 10.0,
        "mop_up": 1.0,
        "mop_up_policy": 0.8,
        "w_capture": 0.5,
        "w_lva": 0.1,
        "w_loss": 1.0,
        "w_rescue": 0.7,
        "w_check": 1.0,
        "w_pst": 0.01,
        "under_promo": 6.0,
        "king_move": 0.8,
        "castle": 1.0,
        "policy_scale": 1.5,
        "policy_cap": 8.0,
    }
    return {k: jnp.asarray(v, jnp.float32) for k, v in p.items()}

