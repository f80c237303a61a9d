"""The move played from a searched root: lc0's temperature schedule and its move rule, once."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

import chex
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.types import MAX_LEGAL_MOVES
from zerochess.validation import as_count, as_real

__all__ = ["TemperatureSchedule", "choose_index", "choose_slot", "temperature_table"]


@dataclasses.dataclass(frozen=True)
class TemperatureSchedule:
    """lc0's move-selection temperature terms (Temperature, TempDecayMoves,
    TempDecayDelayMoves, TempCutoffMove, TempEndgame, TempVisitOffset, TempValueCutoff)."""

    temperature: float = 0.0
    decay_moves: int = 0
    decay_delay_moves: int = 0
    cutoff_move: int = 0
    endgame_temperature: float = 0.0
    visit_offset: float = 0.0
    value_cutoff: float = 100.0

    def __post_init__(self) -> None:
        # lc0's option ranges (src/search/classic/params.cc); ConfigError is a ValueError
        for name, (low, high) in (("temperature", (0.0, 100.0)),
                                  ("endgame_temperature", (0.0, 100.0)),
                                  ("visit_offset", (-1000.0, 1000.0)),
                                  ("value_cutoff", (0.0, 100.0))):
            object.__setattr__(self, name, as_real(getattr(self, name), name, low, high))
        for name, high in (("decay_moves", 640), ("decay_delay_moves", 100),
                           ("cutoff_move", 1000)):
            object.__setattr__(self, name, as_count(getattr(self, name), name, 0, high))

    def at(self, ply: int) -> float:
        """Temperature for the move played at game ply ``ply`` (lc0: moves = ply // 2)."""
        temperature = self.temperature
        moves = ply // 2
        if self.cutoff_move and moves + 1 >= self.cutoff_move:
            return self.endgame_temperature
        if temperature and self.decay_moves:
            if moves >= self.decay_delay_moves + self.decay_moves:
                temperature = 0.0
            elif moves >= self.decay_delay_moves:
                left = self.decay_delay_moves + self.decay_moves - moves
                temperature *= left / self.decay_moves
            temperature = max(temperature, self.endgame_temperature)
        return temperature

    @property
    def horizon(self) -> int:
        """Plies after which ``at`` no longer changes."""
        return 2 * max(self.cutoff_move, self.decay_delay_moves + self.decay_moves) + 3


def temperature_table(schedules: Sequence[TemperatureSchedule]) -> np.ndarray:
    """float32 [n, T]: ``schedules[i].at(ply)`` for plies 0..T-1 (read the last column for
    later plies); T is the largest horizon rounded up to a power of two >= 64, so that
    tables of most schedules have one shape (one compiled program reads them all)."""
    length = max(64, 1 << (max(s.horizon for s in schedules) - 1).bit_length())
    return np.asarray([[s.at(k) for k in range(length)] for s in schedules], np.float32)


def choose_slot(visits: chex.Array, q: chex.Array, valid: chex.Array, best: chex.Array,
                temperature: chex.Array, offset: chex.Array, cutoff: chex.Array,
                u: chex.Array) -> chex.Array:
    """lc0's GetBestChildWithTemperature for one root: the slot to play (float32).

    Weights (N + offset)^(1/T) / max over the moves whose Q is within ``cutoff`` of the
    most visited move's, sampled with ``u`` as numpy's ``Generator.choice`` does
    (normalised cumulative weights, ``searchsorted`` right).

    Args:
      visits: int [K] child visits; q: float [K] child Q (NaN unvisited); valid: bool [K]
        the legal moves' slots; best: the best slot (played when T <= 0).
      temperature, offset, cutoff: the schedule's T, visit offset and value cutoff / 50.
      u: the uniform in [0, 1) of the move's generator.
    Returns:
      int32 slot.
    """
    n = jnp.where(valid, visits.astype(jnp.float32) + offset, -jnp.inf)
    max_n = jnp.max(n)
    qq = jnp.where(jnp.isnan(q) | ~valid, -jnp.inf, q.astype(jnp.float32))
    ok = valid & (qq >= qq[jnp.argmax(n)] - cutoff)
    weights = jnp.where(ok, jnp.power(jnp.maximum(n / max_n, 0.0),
                                      1.0 / jnp.maximum(temperature, 1e-30)), 0.0)
    cdf = jnp.cumsum(weights)
    pick = jnp.searchsorted(cdf / cdf[-1], u, side="right").astype(jnp.int32)
    pick = jnp.minimum(pick, visits.shape[0] - 1)
    return jnp.where((temperature <= 0) | (max_n <= 0) | (cdf[-1] <= 0), best, pick)


@functools.cache
def _one_root():
    return jax.jit(choose_slot)


def choose_index(visits: np.ndarray, q: np.ndarray, best: int, temperature: float,
                 rng: np.random.Generator, visit_offset: float = 0.0,
                 value_cutoff: float = 100.0) -> int:
    """``choose_slot`` for one root on the host: the index (into ``visits``, [M]) to play.

    Draws one ``rng.random()`` only when the move is sampled (T > 0 and some N + offset
    > 0), as ``Generator.choice`` did before; that draw is rounded to float32 as the
    device scan's uniforms are."""
    visits = np.asarray(visits)
    if temperature <= 0 or (visits.astype(np.float64) + visit_offset).max() <= 0:
        return int(best)
    m = len(visits)
    pad = MAX_LEGAL_MOVES - m
    slot = _one_root()(np.pad(visits.astype(np.int32), (0, pad)),
                       np.pad(np.asarray(q, np.float32), (0, pad), constant_values=np.nan),
                       np.arange(MAX_LEGAL_MOVES) < m, np.int32(best), np.float32(temperature),
                       np.float32(visit_offset), np.float32(value_cutoff / 50.0),
                       np.float32(rng.random()))
    return int(slot)
