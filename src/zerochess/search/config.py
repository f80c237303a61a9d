"""Search hyperparameters: one ``SearchConfig`` per tree, stacked into per-tree arrays."""

from __future__ import annotations

import dataclasses
from typing import Any

import chex
import jax.numpy as jnp
import numpy as np

from zerochess.search.selection import SELECTION_RULES

INFINITE_NSCL = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """lc0-named search parameters of one tree (defaults are lc0's classic ones).

    ``n_scl`` is search-contempt's limit: opponent nodes (odd depths) switch from
    PUCT to sampling from their frozen child-visit distribution once their
    children hold ``n_scl`` visits. ``None`` means infinity (plain PUCT).
    The ``*_root`` values default to the non-root ones (lc0's "same").
    """

    cpuct: float = 1.745
    cpuct_base: float = 38739.0
    cpuct_factor: float = 3.894
    cpuct_root: float | None = None
    cpuct_base_root: float | None = None
    cpuct_factor_root: float | None = None
    fpu_value: float = 0.330
    fpu_absolute: bool = False
    fpu_value_root: float | None = None
    fpu_absolute_root: bool | None = None
    policy_temperature: float = 1.359
    draw_score: float = 0.0
    n_scl: int | None = None
    dirichlet_alpha: float = 0.3
    dirichlet_epsilon: float = 0.0
    # a key of selection.SELECTION_RULES: "puct" (lc0; search-contempt via n_scl) or
    # "alphazero" (mctx.muzero_policy's PUCT + qtransform_by_parent_and_siblings)
    selection: str = "puct"
    # AlphaZero / mctx.muzero_policy constants (selection == "alphazero")
    pb_c_init: float = 1.25
    pb_c_base: float = 19652.0
    # multi-leaf gathering (lc0 MinibatchSize, MaxCollisionEvents, MaxCollisionVisits and
    # its scaling): leaves gathered per tree and step, at most the Searcher's
    # leaves_per_step (None: that many); collisions allowed per step, growing with the
    # root's visits from 1 at the scaling start to max_collision_visits at its end
    minibatch_size: int | None = None
    max_collision_events: int = 917
    max_collision_visits: int = 80000
    max_collision_visits_scaling_start: int = 28
    max_collision_visits_scaling_end: int = 145000
    max_collision_visits_scaling_power: float = 1.25

    def __post_init__(self) -> None:
        _positive("cpuct", self.cpuct, allow_zero=True)
        _positive("cpuct_base", self.cpuct_base)
        _positive("policy_temperature", self.policy_temperature)
        _positive("pb_c_base", self.pb_c_base)
        if self.n_scl is not None and not 1 <= self.n_scl <= INFINITE_NSCL:
            raise ValueError(f"n_scl must be >= 1 or None (infinity), got {self.n_scl}")
        if not 0.0 <= self.dirichlet_epsilon <= 1.0:
            raise ValueError(f"dirichlet_epsilon must be in [0, 1], got {self.dirichlet_epsilon}")
        if self.dirichlet_epsilon > 0:
            _positive("dirichlet_alpha", self.dirichlet_alpha)
        if not -1.0 <= self.draw_score <= 1.0:
            raise ValueError(f"draw_score must be in [-1, 1], got {self.draw_score}")
        if self.minibatch_size is not None and self.minibatch_size < 1:
            raise ValueError(f"minibatch_size must be >= 1 or None, got {self.minibatch_size}")
        for name in ("max_collision_events", "max_collision_visits",
                     "max_collision_visits_scaling_start"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        _positive("max_collision_visits_scaling_power", self.max_collision_visits_scaling_power)
        if self.selection not in SELECTION_RULES:
            raise ValueError(f"selection must be one of {sorted(SELECTION_RULES)}, "
                             f"got {self.selection!r}")

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> SearchConfig:
        """Build from a mapping (e.g. YAML); unknown keys are an error that names them."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - names)
        if unknown:
            raise ValueError(
                f"unknown search config key(s) {unknown}; known keys: {sorted(names)}"
            )
        return cls(**values)

    def replace(self, **changes: Any) -> SearchConfig:
        return dataclasses.replace(self, **changes)


def _positive(name: str, value: float, allow_zero: bool = False) -> None:
    if not (value >= 0 if allow_zero else value > 0):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value}")


@chex.dataclass(frozen=True)
class SearchParams:
    """Per-tree hyperparameters as arrays [B]: data, so mixed batches share one compile."""

    cpuct: chex.Array
    cpuct_base: chex.Array
    cpuct_factor: chex.Array
    cpuct_root: chex.Array
    cpuct_base_root: chex.Array
    cpuct_factor_root: chex.Array
    fpu_value: chex.Array
    fpu_absolute: chex.Array
    fpu_value_root: chex.Array
    fpu_absolute_root: chex.Array
    policy_temperature: chex.Array
    draw_score: chex.Array
    n_scl: chex.Array
    dirichlet_alpha: chex.Array
    dirichlet_epsilon: chex.Array
    selection: chex.Array  # int32 index into selection.SELECTION_RULES
    pb_c_init: chex.Array
    pb_c_base: chex.Array
    minibatch_size: chex.Array  # int32, 0 = the Searcher's leaves_per_step
    max_collision_events: chex.Array  # int32
    max_collision_visits: chex.Array  # int32
    collision_scaling_start: chex.Array  # float32
    collision_scaling_end: chex.Array  # float32
    collision_scaling_power: chex.Array  # float32


def stack_configs(configs: list[SearchConfig]) -> SearchParams:
    """Per-tree arrays [B] from one config per tree."""

    def col(fn, dtype):
        return jnp.asarray(np.array([fn(c) for c in configs], dtype=dtype))

    f32, i32 = np.float32, np.int32
    rules = list(SELECTION_RULES)
    return SearchParams(
        cpuct=col(lambda c: c.cpuct, f32),
        cpuct_base=col(lambda c: c.cpuct_base, f32),
        cpuct_factor=col(lambda c: c.cpuct_factor, f32),
        cpuct_root=col(lambda c: c.cpuct if c.cpuct_root is None else c.cpuct_root, f32),
        cpuct_base_root=col(
            lambda c: c.cpuct_base if c.cpuct_base_root is None else c.cpuct_base_root, f32),
        cpuct_factor_root=col(
            lambda c: c.cpuct_factor if c.cpuct_factor_root is None else c.cpuct_factor_root, f32),
        fpu_value=col(lambda c: c.fpu_value, f32),
        fpu_absolute=col(lambda c: c.fpu_absolute, np.bool_),
        fpu_value_root=col(
            lambda c: c.fpu_value if c.fpu_value_root is None else c.fpu_value_root, f32),
        fpu_absolute_root=col(
            lambda c: c.fpu_absolute if c.fpu_absolute_root is None else c.fpu_absolute_root,
            np.bool_),
        policy_temperature=col(lambda c: c.policy_temperature, f32),
        draw_score=col(lambda c: c.draw_score, f32),
        n_scl=col(lambda c: INFINITE_NSCL if c.n_scl is None else c.n_scl, i32),
        dirichlet_alpha=col(lambda c: c.dirichlet_alpha, f32),
        dirichlet_epsilon=col(lambda c: c.dirichlet_epsilon, f32),
        selection=col(lambda c: rules.index(c.selection), i32),
        pb_c_init=col(lambda c: c.pb_c_init, f32),
        pb_c_base=col(lambda c: c.pb_c_base, f32),
        minibatch_size=col(lambda c: min(c.minibatch_size or 0, 2**30), i32),
        max_collision_events=col(lambda c: min(c.max_collision_events, 2**30), i32),
        max_collision_visits=col(lambda c: min(c.max_collision_visits, 2**30), i32),
        collision_scaling_start=col(lambda c: c.max_collision_visits_scaling_start, f32),
        collision_scaling_end=col(lambda c: c.max_collision_visits_scaling_end, f32),
        collision_scaling_power=col(lambda c: c.max_collision_visits_scaling_power, f32),
    )
