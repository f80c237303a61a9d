"""Search values to UCI scores as lc0 prints them: centipawns, mate distances, WDL per mille."""

from __future__ import annotations

import math
from typing import NamedTuple

from zerochess.errors import ConfigError, quote

SCORE_TYPES = ("centipawn", "centipawn_with_drawscore", "centipawn_2019", "centipawn_2018",
               "centipawn_v021", "win_percentage", "Q", "W-L", "WDL_mu")
DEFAULT_SCORE_TYPE = "WDL_mu"

_MU_FALLBACK_THRESHOLD = 0.996  # |wl| + d above this: the WDL fit is not trusted (lc0)
_WDL_EPS = 0.0001


def _trunc(x: float) -> int:
    """C++ float -> int conversion (toward zero), clamped to a printable range."""
    if math.isnan(x):
        return 0
    return int(max(-1e9, min(1e9, x)))


def wdl_mu(wl: float, d: float) -> float:
    """mu of the logistic W/D/L fit, 0.0 when any of W, D, L is within 1e-4 of 0 or 1.

    With lc0's defaults (no contempt, WDLCalibrationElo 0) the rescale is the identity
    and mu = (a - b) / (a + b) with a = ln(1/L - 1), b = ln(1/W - 1).
    """
    w = (1.0 + wl - d) / 2.0
    loss = (1.0 - wl - d) / 2.0
    lo, hi = _WDL_EPS, 1.0 - _WDL_EPS
    if not (lo < w < hi and lo < d < hi and lo < loss < hi):
        return 0.0
    a = math.log(1.0 / loss - 1.0)
    b = math.log(1.0 / w - 1.0)
    if a + b == 0.0:
        return 0.0
    return (a - b) / (a + b)


def centipawns(wl: float, d: float, q: float | None = None,
               score_type: str = DEFAULT_SCORE_TYPE, has_wdl: bool = True) -> int:
    """The ``score cp`` value lc0 prints for a move with these values.

    Args:
      wl: W - L from the root side to move, in [-1, 1].
      d: draw probability in [0, 1].
      q: wl + draw_score * d (defaults to ``wl``).
      score_type: one of ``SCORE_TYPES``.
      has_wdl: the network has a WDL head (else ``WDL_mu`` falls back to centipawns).
    """
    q = wl if q is None else q
    if score_type == "WDL_mu":
        mu = wdl_mu(wl, d)
        fallback = 45.0 * math.tan(1.56728071628 * wl)
        use_mu = (has_wdl and mu != 0.0 and abs(wl) + d < _MU_FALLBACK_THRESHOLD
                  and (abs(mu) < 1.0 or abs(fallback) < abs(100.0 * mu)))
        return _trunc(100.0 * mu if use_mu else fallback)
    if score_type == "centipawn":
        return _trunc(90.0 * math.tan(1.5637541897 * wl))
    if score_type == "centipawn_with_drawscore":
        return _trunc(90.0 * math.tan(1.5637541897 * q))
    if score_type == "centipawn_2019":
        return _trunc(295.0 * wl / (1.0 - 0.976953126 * wl ** 14))
    if score_type == "centipawn_2018":
        return _trunc(290.680623072 * math.tan(1.548090806 * q))
    if score_type == "centipawn_v021":
        return _trunc(111.714640912 * math.tan(1.5620688421 * q))
    if score_type == "win_percentage":
        return _trunc(wl * 5000.0 + 5000.0)
    if score_type == "Q":
        return _trunc(q * 10000.0)
    if score_type == "W-L":
        return _trunc(wl * 10000.0)
    raise ConfigError(f"unknown score type {quote(score_type)}; known: {', '.join(SCORE_TYPES)}")


def wdl_permille(wl: float, d: float) -> tuple[int, int, int]:
    """(W, D, L) per mille summing to 1000, rounded as lc0 does."""
    w = max(0, round_half_away(500.0 * (1.0 + wl - d)))
    loss = max(0, round_half_away(500.0 * (1.0 - wl - d)))
    draw = 1000 - w - loss
    if draw < 0:
        w = min(1000, max(0, w + int(draw / 2)))  # C++ integer division truncates
        loss = 1000 - w
        draw = 0
    return w, draw, loss


def round_half_away(x: float) -> int:
    """C's ``round``: halves away from zero (Python's ``round`` goes to even)."""
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


def mate_in_moves(plies: float, wl: float) -> int:
    """lc0's ``score mate`` for a proven (terminal) edge: ``plies`` = moves-left M of the
    edge (0 for a move that mates at once), sign of ``wl`` (negative: being mated)."""
    moves = round_half_away(plies) // 2 + 1
    return moves if wl > 0 else -moves


def q_to_cp(q: float, formula: str = "centipawn_v021") -> int:
    """Centipawns from Q alone (no WDL): ``formula`` is one of ``SCORE_TYPES`` that needs
    no WDL (default ``centipawn_v021``, the older ``111.714640912 * tan(1.5620688421 *
    Q)``; lc0's current default ``WDL_mu`` needs W/D/L: use ``centipawns``)."""
    if formula == "WDL_mu":
        raise ValueError("WDL_mu needs the W/D/L: use centipawns(wl, d, q)")
    return centipawns(q, 0.0, q, formula)


class Score(NamedTuple):
    """A move's score as lc0 prints it: ``mate`` (moves, negative when being mated) for a
    proven win/loss, else ``cp``; ``wdl`` per mille (W, D, L)."""

    cp: int | None
    mate: int | None
    wdl: tuple[int, int, int]

    def as_dict(self) -> dict[str, int]:
        return {"mate": self.mate} if self.mate is not None else {"cp": self.cp}

    def __str__(self) -> str:
        return f"mate {self.mate}" if self.mate is not None else f"cp {self.cp}"


__all__ = ["DEFAULT_SCORE_TYPE", "SCORE_TYPES", "Score", "centipawns", "mate_in_moves",
           "q_to_cp", "round_half_away", "wdl_mu", "wdl_permille"]
