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
"""

from __future__ import annotations

from typing import Any, NamedTuple

import chess
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from zerochess.chess.policy_map import FROM_SQUARE, NUM_MOVES, PROMOTION, TO_SQUARE
from zerochess.neural.model import Model, ModelOutput

Params = dict[str, jax.Array]

# --- tables (numpy, built at import) -----------------------------------------------------

# PeSTO (Rofchade) piece values and piece-square tables, P N B R Q K. The tables
# are written rank 8 first (as printed on the chess programming wiki) for the
# side to move; ``_a1_first`` flips them to our a1 = 0 square numbering.
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
_KING_ATTACKER_VALUE = 100.0
_NO_ATTACKER = 1000.0

_ROOK_DIRS = ((1, 0), (-1, 0), (0, 1), (0, -1))
_BISHOP_DIRS = ((1, 1), (1, -1), (-1, 1), (-1, -1))
_KNIGHT_JUMPS = ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2))
_KING_STEPS = _ROOK_DIRS + _BISHOP_DIRS
# Our pawns capture toward higher ranks, theirs toward lower ones (mover's frame); a
# square from which our pawn checks their king is their king shifted like their pawns.
_PAWN_CAPTURES = ((1, 1), (1, -1), (-1, 1), (-1, -1))

_RULE50_PLANE = 109


# Move kinds: the policy score of a move depends on the square it leaves only through
# the mover's kind and a per-square term, so it is ``TABLE[kind, to] + FROM_TERM[from]``.
# Kinds: 0 pawn push, 1..5 N B R Q K, 6 no piece of ours (scores 0), 7 pawn capture,
# 8..10 push-promotion to Q R B, 11..13 capture-promotion to Q R B. A pawn kind landing
# on the last rank through a plain index is lc0's knight promotion.
_NUM_KINDS = 14
_NONE = 6
_KIND_PIECE = np.array([0, 1, 2, 3, 4, 5, _NONE, 0, 0, 0, 0, 0, 0, 0], np.int32)
_KIND_PUSH = np.array([1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0], np.float32)
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
        "is_king": (np.arange(_NUM_KINDS) == 5).astype(np.float32)[:, None],
        "valid": (np.arange(_NUM_KINDS) != _NONE).astype(np.float32)[:, None],
        "under": (promo & (landed != 4)).astype(np.float32),
    }


_KINDS = _kind_tables()


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


_MOVES = _move_tables()
assert _MOVES["from"].shape == (NUM_MOVES,)
assert int((_MOVES["fixed_kind"] >= 0).sum()) == 66


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


# --- bitboard geometry on row-packed uint8 boards --------------------------------------
# A board set is [..., 8] uint8: byte r = rank r (mover's frame), bit c = file c. File
# shifts are byte shifts (bits fall off, nothing wraps), rank shifts pad the last axis.

_BITS = np.arange(8, dtype=np.uint8)


def _pack(x: jax.Array) -> jax.Array:
    """[..., 8, 8] bool -> [..., 8] uint8 rows."""
    return jnp.sum(x.astype(jnp.uint8) << _BITS, axis=-1, dtype=jnp.uint8)


def _unpack(x: jax.Array) -> jax.Array:
    """[..., 8] uint8 rows -> [..., 64] float32 0/1 (square = 8 * rank + file)."""
    bits = (x[..., None] >> _BITS) & jnp.uint8(1)
    return bits.reshape(*x.shape[:-1], 64).astype(jnp.float32)


def _shift(x: jax.Array, dr: int, dc: int) -> jax.Array:
    """Move every bit of ``x`` [..., 8] by ``dr`` ranks and ``dc`` files (off-board bits drop)."""
    if dc > 0:
        x = x << jnp.uint8(dc)
    elif dc < 0:
        x = x >> jnp.uint8(-dc)
    if dr:
        cfg = [(0, 0, 0)] * (x.ndim - 1) + [(dr, -dr, 0)]
        x = lax.pad(x, jnp.zeros((), x.dtype), cfg)
    return x


def _rays(sets: jax.Array, empty: jax.Array, dirs: tuple[tuple[int, int], ...]) -> jax.Array:
    """Squares reached from ``sets[:, d]`` stepping ``dirs[d]`` up to and including the first
    occupied square. ``sets`` [B, D, k, 8], ``empty`` [B, 1, 1, 8] -> [B, D, k, 8].

    All directions advance together, so each of the 7 steps is one fused kernel.
    """
    def step(x: jax.Array) -> jax.Array:
        return jnp.stack([_shift(x[:, d], dr, dc) for d, (dr, dc) in enumerate(dirs)], axis=1)

    a = step(sets)
    acc = a
    for _ in range(6):
        a = step(a & empty)
        acc = acc | a
    return acc


def _jumps(sets: jax.Array, offsets: tuple[tuple[int, int], ...]) -> jax.Array:
    """``sets`` [B, k, 8] shifted by each (dr, dc) of ``offsets`` -> [B, len(offsets), k, 8]."""
    return jnp.stack([_shift(sets, dr, dc) for dr, dc in offsets], axis=1)


def _any(masks: list[jax.Array]) -> jax.Array:
    out = masks[0]
    for m in masks[1:]:
        out = out | m
    return out


class BoardFeatures(NamedTuple):
    """Per-square attack facts of slot 0, all [B, 64] float32 unless noted (mover's frame)."""

    ours: jax.Array  # [B, 6, 64] 0/1 our P N B R Q K
    theirs: jax.Array  # [B, 6, 64] 0/1 their P N B R Q K
    our_count: jax.Array  # number of our pieces attacking each square (no x-rays)
    their_count: jax.Array  # number of their pieces attacking each square
    our_min: jax.Array  # SEE value (pawns) of our least valuable attacker; 1000 if none
    their_min: jax.Array  # same for their attackers (king = 100)
    check_from: jax.Array  # [B, 6, 64] 0/1: our piece of type T on s would check their king


def board_features(params: Params, planes: jax.Array) -> BoardFeatures:
    """Pieces, attack counts, least attackers and checking squares of ``planes`` [B, 112, 8, 8]."""
    pieces = planes[:, :12] > 0.5  # [B, 12, 8, 8]
    bb = _pack(pieces)  # [B, 12, 8]
    o, t = bb[:, :6], bb[:, 6:]
    empty = ~_any([bb[:, i] for i in range(12)])[:, None]  # [B, 1, 8]
    see = params["see_value"]

    # Slider rays, all 8 directions at once: sets [oX, oQ, tX, tQ, their king] with X the
    # rook (orthogonal directions) or bishop (diagonal directions).
    rook_sets = jnp.stack([o[:, 3], o[:, 4], t[:, 3], t[:, 4], t[:, 5]], axis=1)
    bishop_sets = jnp.stack([o[:, 2], o[:, 4], t[:, 2], t[:, 4], t[:, 5]], axis=1)
    sets = jnp.stack([rook_sets] * 4 + [bishop_sets] * 4, axis=1)  # [B, 8, 5, 8]
    rays = _rays(sets, empty[:, None], _ROOK_DIRS + _BISHOP_DIRS)  # [B, 8 dirs, 5, 8]
    # Leapers, one fused kernel each: [B, offsets, sets, 8].
    knights = _jumps(jnp.stack([o[:, 1], t[:, 1], t[:, 5]], axis=1), _KNIGHT_JUMPS)
    kings = _jumps(jnp.stack([o[:, 5], t[:, 5]], axis=1), _KING_STEPS)
    pawns = _jumps(jnp.stack([o[:, 0], t[:, 0], t[:, 5]], axis=1), _PAWN_CAPTURES)

    def side(i: int, j: int, pawn_offsets: slice) -> tuple[list[jax.Array], list[jax.Array]]:
        """Attack masks of one side (``i``: its index among knight/king sets, ``j``: its
        rays offset): 19 masks that each attack a square at most once (a pawn or knight
        jump, the king, the first piece along a ray: rook and queen fills of one
        direction stop at the same blocker), and 6 "attacked by type" masks P N B R Q K."""
        pawn = [pawns[:, d, i] for d in range(4)[pawn_offsets]]
        knight = [knights[:, d, i] for d in range(8)]
        king = _any([kings[:, d, i] for d in range(8)])
        per_dir = [rays[:, d, j] | rays[:, d, j + 1] for d in range(8)]
        by_type = [_any(pawn), _any(knight), _any([rays[:, d, j] for d in range(4, 8)]),
                   _any([rays[:, d, j] for d in range(4)]),
                   _any([rays[:, d, j + 1] for d in range(8)]), king]
        return pawn + knight + [king] + per_dir, by_type

    our_masks, our_types = side(0, 0, slice(0, 2))
    their_masks, their_types = side(1, 2, slice(2, 4))
    chk_b = _any([rays[:, d, 4] for d in range(4, 8)])
    chk_r = _any([rays[:, d, 4] for d in range(4)])
    check = [pawns[:, 2, 2] | pawns[:, 3, 2], _any([knights[:, d, 2] for d in range(8)]),
             chk_b, chk_r, chk_b | chk_r, jnp.zeros_like(chk_b)]
    bits = _unpack(jnp.stack(our_masks + their_masks + our_types + their_types + check,
                             axis=1))  # [B, 19 + 19 + 6 + 6 + 6, 64]
    values = jnp.concatenate([see[:5], jnp.full((1,), _KING_ATTACKER_VALUE)])[None, :, None]
    our_count = bits[:, :19].sum(1)
    their_count = bits[:, 19:38].sum(1)
    our_min = jnp.min(jnp.where(bits[:, 38:44] > 0, values, _NO_ATTACKER), axis=1)
    their_min = jnp.min(jnp.where(bits[:, 44:50] > 0, values, _NO_ATTACKER), axis=1)
    check_from = bits[:, 50:]

    flat = planes[:, :12].reshape(-1, 12, 64)
    return BoardFeatures(
        ours=flat[:, :6], theirs=flat[:, 6:],
        our_count=our_count, their_count=their_count,
        our_min=our_min, their_min=their_min,
        check_from=check_from,
    )


# --- value ------------------------------------------------------------------------------

def _per_square(pieces: jax.Array, weights: Any) -> jax.Array:
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


def _hanging(values: jax.Array, attacked: jax.Array, defended: jax.Array,
             least_attacker: jax.Array) -> jax.Array:
    """Static-exchange loss (pawns) of pieces worth ``values`` [..., 64]: the whole piece
    when attacked and undefended, else what the least attacker gains by trading."""
    loss = jnp.where(defended > 0, jax.nn.relu(values - least_attacker), values)
    return jnp.where(attacked > 0, loss, 0.0)


_ROW = (np.arange(64) // 8).astype(np.float32)
_COL = (np.arange(64) % 8).astype(np.float32)
_CENTER_DISTANCE = (np.maximum(3 - _ROW, _ROW - 4) + np.maximum(3 - _COL, _COL - 4))


def _king_distance(feats: BoardFeatures, to_every_square: bool = False) -> jax.Array:
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
    their_vals = _per_square(feats.theirs, see)
    our_vals = _per_square(feats.ours, see)
    gains = _hanging(their_vals, feats.our_count, feats.their_count, feats.our_min)
    losses = _hanging(our_vals, feats.their_count, feats.our_count, feats.their_min)
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
    cp = cp + params["mop_up"] * lead * (10.0 * edge + 4.0 * (14.0 - _king_distance(feats)))

    rule50 = planes[:, _RULE50_PLANE, 0, 0]
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


# --- policy -----------------------------------------------------------------------------

def _materialize(x: jax.Array) -> jax.Array:
    """Identity that XLA:CPU computes as its own kernel (a reduction), so a small table read
    by a gather is not fused into, and recomputed (unvectorised) for every element of, it."""
    return jnp.max(jnp.stack([x, jnp.full_like(x, -jnp.inf)], axis=1), axis=1)


def kind_table(params: Params, feats: BoardFeatures) -> jax.Array:
    """[B, 14, 64] score (pawns) of a move of each kind (see ``_KIND_PIECE``) landing on
    each square: MVV-LVA capture, static-exchange loss of the landed piece, its PST,
    check, promotion value, castling / king-move terms."""
    see = params["see_value"]
    w = game_phase(params, feats)[:, None, None]  # [B, 1, 1]
    # Static one-hot selections instead of gathers (XLA:CPU fuses gathers poorly).
    landed = _KINDS["landed_onehot"]  # [6, 14, 64]; none selects nothing (value 0)
    mover = jnp.einsum("tk,t->k", _KINDS["mover_onehot"], see)[None, :, None]  # [1, 14, 1]
    landed_val = jnp.einsum("tkq,t->kq", landed, see)[None]  # [1, 14, 64]

    victim = _per_square(feats.theirs, see)[:, None, :]  # [B, 1, 64]
    capture = jnp.where(victim > 0, params["w_capture"] + victim - params["w_lva"] * mover, 0.0)
    # The mover itself attacked t unless it is a pawn push, so it is no defender there.
    defenders = feats.our_count[:, None, :] - (1.0 - _KIND_PUSH[None, :, None])
    loss = _hanging(landed_val, feats.their_count[:, None, :], defenders,
                    feats.their_min[:, None, :])

    pst = w * params["mg_pst"][None] + (1 - w) * params["eg_pst"][None]  # [B, 6, 64]
    dest = params["w_pst"] * pst + params["w_check"] * feats.check_from  # [B, 6, 64]

    promo = _KINDS["promo"] * (landed_val - see[0]) - params["under_promo"] * _KINDS["under"]
    rook = feats.ours[:, 3:4]  # [B, 1, 64]: king-to-rook = castling
    king = w * (params["castle"] * rook - params["king_move"] * (1.0 - rook))
    # Mop-up: the strong side's king walks toward the weak king.
    chase = jax.nn.relu(mop_up_weight(params, feats))[:, None, None]
    approach = _king_distance(feats)[:, None, None] - _king_distance(feats, True)[:, None, :]
    king = king + params["mop_up_policy"] * chase * approach
    terms = [capture, -params["w_loss"] * loss, jnp.broadcast_to(promo, capture.shape),
             _KINDS["is_king"] * king]
    terms += [landed[i][None] * dest[:, i, None, :] for i in range(6)]  # dest of landed type
    return sum(terms) * _KINDS["valid"]


def policy_scores(params: Params, feats: BoardFeatures) -> jax.Array:
    """[B, 1858] heuristic move scores (pawns) in lc0's policy order (mover's frame):
    ``kind_table[kind(move), to] + from_term[from]``, with the from-term rewarding moving
    a threatened piece (e.g. one attacked by a pawn) and removing the PST of f."""
    see = params["see_value"]
    w = game_phase(params, feats)[:, None]  # [B, 1]
    ours = feats.ours
    table = _materialize(kind_table(params, feats)).reshape(-1, _NUM_KINDS * 64)

    our_vals = _per_square(ours, see)  # [B, 64]
    threat = _hanging(our_vals, feats.their_count, feats.our_count, feats.their_min)
    pst = w[:, :, None] * params["mg_pst"][None] + (1 - w[:, :, None]) * params["eg_pst"][None]
    from_term = params["w_rescue"] * threat - params["w_pst"] * jnp.sum(ours * pst, axis=1)

    # Piece type on each square (0..5, 6 = none) -> each move's kind -> its table entry.
    no_piece = jnp.full_like(ours[:, :1], 0.5)
    piece = jnp.argmax(jnp.concatenate([ours, no_piece], axis=1), axis=1).astype(jnp.int32)
    piece_i = jnp.take(piece, _MOVES["from"], axis=1)  # [B, 1858]
    kind = jnp.where(_MOVES["fixed_kind"] >= 0, _MOVES["fixed_kind"],
                     jnp.where(piece_i == 0, _MOVES["pawn_kind"], piece_i))
    scores = jnp.take_along_axis(table, kind * 64 + _MOVES["to"], axis=1,
                                 mode="promise_in_bounds")
    return scores + jnp.take(_materialize(from_term), _MOVES["from"], axis=1)


# --- the model --------------------------------------------------------------------------

def builtin_apply(params: Params, planes: jax.Array) -> ModelOutput:
    """``planes`` [B, 112, 8, 8] float32 -> ModelOutput(policy_logits [B, 1858],
    wdl_logits [B, 3] (log-probabilities), moves_left=None). Pure and jittable."""
    planes = jnp.asarray(planes, jnp.float32)
    # Computed once and shared: unmaterialised, XLA:CPU re-derives the attack maps inside
    # several consumers (about 2x slower).
    feats = BoardFeatures(*(_materialize(x) for x in board_features(params, planes)))
    cp = evaluate_cp(params, planes, feats)
    scores = policy_scores(params, feats)
    logits = params["policy_scale"] * scores / (1.0 + jnp.abs(scores) / params["policy_cap"])
    return ModelOutput(policy_logits=logits, wdl_logits=wdl_log_probs(params, cp),
                       moves_left=None)


def builtin_model() -> Model:
    """The embedded default evaluator (no weights): ``Model("builtin", builtin_apply, params)``."""
    return Model(name="builtin", apply=builtin_apply, params=default_params(),
                 has_moves_left=False, light=True)
