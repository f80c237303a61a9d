"""The move rule both game paths share (``search.move_choice``) against a float64
transcription of lc0's ``GetBestChildWithTemperature`` kept here, and the host wrapper
against the device rule."""

from __future__ import annotations

import jax
import numpy as np

from zerochess.search.move_choice import (
    TemperatureSchedule,
    choose_index,
    choose_slot,
    temperature_table,
)
from zerochess.search.tree import K

CASES = 2000
EPS = 1e-6


def lc0_choice(visits: np.ndarray, q: np.ndarray, best: int, temperature: float,
               offset: float, cutoff: float, u: float) -> tuple[int, float]:
    """lc0 (src/search/classic/search.cc, GetBestChildWithTemperature) in float64, over
    the M legal moves in slot order: the index played and how close the draw came to a
    boundary (cumulative share or cutoff). ``q``: -inf for a move never visited (the
    results carry no Q there, so it never passes the cutoff)."""
    if temperature <= 0:
        return best, np.inf
    max_n, max_eval = 0.0, -1.0
    for n, qi in zip(visits, q, strict=True):
        if n + offset > max_n:
            max_n, max_eval = n + offset, qi
    if max_n <= 0:
        return best, np.inf
    min_eval = max_eval - cutoff / 50.0
    sums, total, margin = [], 0.0, np.inf
    for n, qi in zip(visits, q, strict=True):
        if np.isfinite(qi):
            margin = min(margin, abs(qi - min_eval))
        if qi < min_eval:
            sums.append(total)
            continue
        total += max(0.0, (n + offset) / max_n) ** (1.0 / temperature)
        sums.append(total)
    toss = u * total
    index = int(np.searchsorted(np.asarray(sums), toss, side="right"))
    margin = min(margin, float(np.min(np.abs(np.asarray(sums) / total - u))))
    return min(index, len(visits) - 1), margin


def _case(rng: np.random.Generator):
    m = int(rng.integers(1, 60))
    visits = rng.integers(0, 40, m) * (rng.random(m) < 0.7)
    if rng.random() < 0.2:
        visits[: m // 2] = visits[0]  # ties
    q = np.where(visits > 0, rng.uniform(-1, 1, m), -np.inf).astype(np.float32)
    best = int(rng.integers(0, m))
    temperature = float(rng.choice([0.0, 0.3, 1.0, 2.5, rng.uniform(0.05, 5)]))
    offset = float(rng.choice([0.0, -0.5, rng.uniform(-3, 3)]))
    cutoff = float(rng.choice([100.0, 20.0, rng.uniform(0, 100)]))
    u = float(np.float32(rng.random()))
    return visits, q, best, temperature, offset, cutoff, u


def test_the_move_rule_is_lc0s_rule() -> None:
    rng = np.random.default_rng(37)
    cases = [_case(rng) for _ in range(CASES)]
    pad = lambda a, fill: np.concatenate([a, np.full(K - len(a), fill, a.dtype)])  # noqa: E731
    visits = np.stack([pad(c[0].astype(np.int32), 0) for c in cases])
    q = np.stack([pad(np.where(np.isinf(c[1]), np.nan, c[1]).astype(np.float32), np.nan)
                  for c in cases])
    valid = np.arange(K)[None, :] < np.array([len(c[0]) for c in cases])[:, None]
    f32 = lambda i: np.array([c[i] for c in cases], np.float32)  # noqa: E731
    got = np.asarray(jax.jit(jax.vmap(choose_slot))(
        visits, q, valid, np.array([c[2] for c in cases], np.int32), f32(3), f32(4),
        f32(5) / 50.0, f32(6)))
    compared = sampled = 0
    for c, slot in zip(cases, got, strict=True):
        want, margin = lc0_choice(*c)
        if margin < EPS:
            continue
        compared += 1
        sampled += margin < np.inf
        assert slot == want, (c, slot, want)
    assert compared > 0.9 * CASES and sampled > 0.5 * CASES, (compared, sampled)


def test_the_host_draws_once_and_plays_the_devices_move() -> None:
    rng = np.random.default_rng(5)
    for _ in range(40):
        visits, q, best, temperature, offset, cutoff, _ = _case(rng)
        q = np.where(np.isinf(q), np.nan, q)
        host_rng, copy = np.random.default_rng(1), np.random.default_rng(1)
        index = choose_index(visits, q, best, temperature, host_rng, offset, cutoff)
        sampled = temperature > 0 and (visits + offset).max() > 0
        u = np.float32(copy.random()) if sampled else np.float32(0)
        assert host_rng.random() == copy.random()  # one draw when sampled, none otherwise
        want, margin = lc0_choice(visits, np.where(np.isnan(q), -np.inf, q), best,
                                  temperature, offset, cutoff, float(u))
        if margin >= EPS:
            assert index == want


def test_the_schedule_table_holds_the_schedule() -> None:
    schedules = [TemperatureSchedule(temperature=1.0, decay_moves=10, decay_delay_moves=4,
                                     endgame_temperature=0.2),
                 TemperatureSchedule(temperature=1.0, cutoff_move=8, endgame_temperature=0.4)]
    table = temperature_table(schedules)
    assert table.shape[1] == temperature_table(schedules[1:]).shape[1] >= 64  # one shape
    for s, row in zip(schedules, table, strict=True):
        for ply in range(80):
            assert row[min(ply, table.shape[1] - 1)] == np.float32(s.at(ply)), (s, ply)
