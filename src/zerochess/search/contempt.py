"""Search-contempt at a frozen node: lc0's ``ScTemperature`` and ``HybridSamplingRatio``."""

from __future__ import annotations

import math
from collections.abc import Sequence

import chex
import jax.numpy as jnp
import numpy as np

# lc0 PR #2371's HybridRatioMode choices (params.cc), in its order, without ``chaotic``.
HYBRID_RATIO_MODES: tuple[str, ...] = (
    "static", "manual_schedule", "linear", "logarithmic", "power", "root", "sigmoid",
    "exponential", "step_decay", "inverse_sigmoid", "steps", "plateau", "gaussian_peak",
    "double_peak", "sawtooth_wave", "oscillating", "heartbeat", "multi_timescale",
    "thermal_annealing", "asymptotic_approach")
UNSUPPORTED_MODES = {"chaotic": "lc0's chaotic mode iterates one logistic map shared by "
                                "every frozen node and search thread, in call order; it "
                                "has no reproducible per-tree meaning"}
MAX_SCHEDULE_POINTS = 16  # manual_schedule points per tree (a static array shape)
DEFAULT_SCHEDULE = "1000:0.5 8000:0.9"  # lc0's HybridRatioSchedule default

_E = 2.71828  # lc0 writes e as 2.71828f in these curves
_PI = 3.1415926535


def parse_schedule(value: object, name: str) -> tuple[tuple[int, float], ...]:
    """``HybridRatioSchedule`` as sorted (nodes, ratio) points.

    Args:
      value: lc0's string form, space-separated ``nodes:ratio`` pairs
        (``"1000:0.5 8000:0.9"``), or a sequence of (nodes, ratio) pairs.
      name: where the value came from, for the error message.

    Returns:
      The points sorted by node count (at most ``MAX_SCHEDULE_POINTS``).

    Raises:
      ValueError: a malformed pair, a node count that is not an integer >= 0, a ratio
        outside [0, 1], a node count given twice, or too many points (lc0 skips
        malformed pairs and keeps one of two equal node counts silently).
    """
    if isinstance(value, str):
        pairs: list[tuple[object, object]] = []
        for item in value.split():
            nodes, sep, ratio = item.partition(":")
            if not sep:
                raise ValueError(f"{name}: {item!r} is not a nodes:ratio pair")
            pairs.append((nodes, ratio))
    elif isinstance(value, Sequence):
        pairs = []
        for item in value:
            if not isinstance(item, Sequence) or isinstance(item, str) or len(item) != 2:
                raise ValueError(f"{name}: {item!r} is not a (nodes, ratio) pair")
            pairs.append((item[0], item[1]))
    else:
        raise ValueError(f"{name} must be a string of nodes:ratio pairs or a list of "
                         f"(nodes, ratio) pairs, got {value!r}")
    points = []
    for nodes, ratio in pairs:
        points.append((_schedule_nodes(nodes, name), _schedule_ratio(ratio, name)))
    points.sort()
    counts = [n for n, _ in points]
    if len(set(counts)) != len(counts):
        raise ValueError(f"{name}: a node count appears twice ({counts})")
    if len(points) > MAX_SCHEDULE_POINTS:
        raise ValueError(f"{name}: at most {MAX_SCHEDULE_POINTS} points, got {len(points)}")
    return tuple(points)


def _schedule_nodes(value: object, name: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{name}: node count {value!r} is not an integer")
    try:
        number = int(value) if isinstance(value, (int, np.integer)) else int(str(value), 10)
    except ValueError:
        raise ValueError(f"{name}: node count {value!r} is not an integer") from None
    if not 0 <= number <= 2**31 - 1:
        raise ValueError(f"{name}: node count {number} is outside [0, 2147483647]")
    return number


def _schedule_ratio(value: object, name: str) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{name}: ratio {value!r} is not a number")
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name}: ratio {value!r} is not a number") from None
    if not (math.isfinite(number) and 0.0 <= number <= 1.0):
        raise ValueError(f"{name}: ratio {value!r} is outside [0, 1]")
    return number


def schedule_arrays(points: Sequence[tuple[int, float]]) -> tuple[np.ndarray, np.ndarray]:
    """(nodes, ratios) float32 [MAX_SCHEDULE_POINTS] of a parsed schedule, padded by
    repeating its last point (an empty schedule: zeros)."""
    nodes = np.zeros(MAX_SCHEDULE_POINTS, np.float32)
    ratios = np.zeros(MAX_SCHEDULE_POINTS, np.float32)
    if points:
        full = list(points) + [points[-1]] * (MAX_SCHEDULE_POINTS - len(points))
        nodes[:] = [n for n, _ in full]
        ratios[:] = [r for _, r in full]
    return nodes, ratios


def _manual(node_count: chex.Array, nodes: chex.Array, ratios: chex.Array,
            count: chex.Array) -> chex.Array:
    """lc0's manual schedule: the first ratio up to the first node count, the last from
    the last one, linear in between (clamped to [0, 1]); 0 for an empty schedule."""
    last = jnp.maximum(count - 1, 0)
    i = jnp.clip(jnp.sum(nodes[1:] <= node_count) , 0, MAX_SCHEDULE_POINTS - 2)
    # segment [i, i + 1] holds node_count when it lies strictly inside the schedule
    lo_n, hi_n, lo_r, hi_r = nodes[i], nodes[i + 1], ratios[i], ratios[i + 1]
    span = hi_n - lo_n
    inner = jnp.clip(lo_r + (hi_r - lo_r) * (node_count - lo_n) / jnp.where(span > 0, span, 1.0),
                     0.0, 1.0)
    inner = jnp.where(span > 0, inner, lo_r)
    out = jnp.where(node_count <= nodes[0], ratios[0],
                    jnp.where(node_count >= nodes[last], ratios[last], inner))
    return jnp.where(count > 0, out, 0.0)


def thermal_expectation(a: chex.Array, b: chex.Array) -> chex.Array:
    """E[clamp(a R + b, 0, 1)] for R uniform on [0, 1), a >= 0 (lc0's thermal annealing
    ratio, ``a = max * (1 - progress)``, ``b = min + (max - min) * progress``)."""
    b0 = jnp.clip(b, 0.0, 1.0)
    safe_a = jnp.where(a > 0, a, 1.0)
    t = jnp.clip((1.0 - b) / safe_a, 0.0, 1.0)  # where a R + b reaches 1
    below = a * t * t / 2.0 + b * t + (1.0 - t)
    return jnp.where(a > 0, jnp.clip(below, 0.0, 1.0), b0)


def hybrid_ratio(params: object, node_visits: chex.Array) -> chex.Array:
    """The share of TS visits at a frozen node of one tree (lc0 ``GetDynamicHybridRatio``).

    Args:
      params: one tree's ``SearchParams`` (scalars; ``hybrid_*`` and ``n_scl``).
      node_visits: the frozen node's completed visits N (lc0 ``node->GetN()``).

    Returns:
      float32 scalar in [0, 1].
    """
    p = params
    n = node_visits.astype(jnp.float32)
    since = n - p.n_scl.astype(jnp.float32)  # lc0: node_count - sc_limit
    lo, hi = p.hybrid_min, p.hybrid_max
    scale, p1, p2 = p.hybrid_scale, p.hybrid_p1, p.hybrid_p2
    c = jnp.minimum(1.0, jnp.where(scale > 0, since / jnp.where(scale > 0, scale, 1.0), 1.0))
    span = hi - lo
    p1_pos = p1 > 0
    safe_p1 = jnp.where(p1_pos, p1, 1.0)
    wave = lambda period: 0.5 + 0.5 * jnp.sin(2.0 * _PI * since / period)  # noqa: E731
    sig = 1.0 / (1.0 + jnp.exp(-12.0 * (c - 0.5)))
    half = 0.5 - p2 / 2.0
    ramp = jnp.maximum(0.001, half)
    plateau = jnp.where(c < half, lo + (p1 - lo) * (c / ramp),
                        jnp.where(c > 0.5 + p2 / 2.0, p1 + (hi - p1) * ((c - (0.5 + p2 / 2.0))
                                                                        / ramp), p1))
    both = p1_pos & (p2 > 0)
    beats = 0.6 * wave(safe_p1) + 0.4 * wave(jnp.where(p2 > 0, p2, 1.0))
    curves = [
        p.hybrid_ratio,  # static (lc0 returns it unclamped: it is in [0, 1] by its range)
        _manual(n, p.hybrid_nodes, p.hybrid_ratios, p.hybrid_points),
        lo + span * c,  # linear
        lo + span * jnp.log(c * (_E - 1.0) + 1.0),  # logarithmic
        lo + span * jnp.power(c, p1),  # power
        lo + span * jnp.sqrt(c),  # root
        lo + span * sig,  # sigmoid
        lo + span * (jnp.exp(c) - 1.0) / (_E - 1.0),  # exponential
        jnp.where(p1_pos, hi - span * jnp.floor(c * p1) / safe_p1, lo),  # step_decay
        lo + span * (1.0 - sig),  # inverse_sigmoid
        jnp.where(p1_pos, lo + span * jnp.floor(c * p1) / safe_p1, lo),  # steps
        plateau,
        lo + span * jnp.exp(-jnp.square(c - p1) / (2.0 * jnp.maximum(0.001, p2))),  # gaussian
        lo + span * jnp.maximum(jnp.exp(-jnp.square(c - p1) / 0.04),
                                jnp.exp(-jnp.square(c - p2) / 0.04)),  # double_peak
        jnp.where(p1_pos, lo + span * (jnp.fmod(since, safe_p1) / safe_p1), lo),  # sawtooth
        jnp.where(p1_pos, lo + span * wave(safe_p1), lo),  # oscillating
        jnp.where(both, lo + span * beats, lo),  # heartbeat
        jnp.where(both, lo + span * beats, lo),  # multi_timescale (lc0: the same curve)
        thermal_expectation(hi * (1.0 - c), lo + span * c),  # thermal_annealing
        hi - span * jnp.exp(-5.0 * c),  # asymptotic_approach
    ]
    value = jnp.stack([jnp.asarray(v, jnp.float32) for v in curves])[p.hybrid_mode]
    # static and manual_schedule return before lc0's final clamp; the rest are clamped
    return jnp.where(p.hybrid_mode <= 1, value, jnp.clip(value, 0.0, 1.0))


def tempered_weights(frozen: chex.Array, temperature: chex.Array) -> chex.Array:
    """float32 [K] weights ``(N / max N)^(1/T)`` of the frozen counts (0 where N = 0):
    proportional to lc0's ``ScTemperature`` shares, without overflow for small T."""
    f = frozen.astype(jnp.float32)
    top = jnp.maximum(jnp.max(f), 1.0)
    return jnp.where(f > 0, jnp.power(f / top, 1.0 / temperature), 0.0)


def sample_cumulative(cum: chex.Array, u: chex.Array) -> chex.Array:
    """Slot sampled by ``u`` in [0, 1) from cumulative weights ``cum`` [K] (float32, last
    entry > 0): the first a with ``cum[a] > u * cum[-1]``. The target is kept below the
    total, so rounding never leaves no slot; for integer-valued totals (frozen counts) it
    is below it already, and this is exactly ``selection.sample_frozen``."""
    total = cum[-1]
    target = jnp.minimum(u * total, jnp.nextafter(total, jnp.float32(0.0)))
    return jnp.argmax(cum > target).astype(jnp.int32)


__all__ = ["DEFAULT_SCHEDULE", "HYBRID_RATIO_MODES", "MAX_SCHEDULE_POINTS", "UNSUPPORTED_MODES",
           "hybrid_ratio", "parse_schedule", "sample_cumulative", "schedule_arrays",
           "tempered_weights", "thermal_expectation"]
