"""Per-tree search hyperparameters as device arrays (``SearchParams``), stacked from configs."""

from __future__ import annotations

import chex
import jax
import numpy as np

from zerochess.search import filter_keys as move_filter
from zerochess.search.config import INFINITE_NSCL, SELECTION_NAMES, SearchConfig
from zerochess.search.contempt import HYBRID_RATIO_MODES, schedule_arrays

__all__ = ["SearchParams", "filter_params", "stack_configs"]


@chex.dataclass(frozen=True)
class SearchParams:
    """Per-tree hyperparameters as arrays: data, so mixed batches share one compile.

    Every field leads with the tree dimension B; most are ``[B]``, but ``hybrid_nodes``/
    ``hybrid_ratios`` are ``[B, 16]`` and ``move_avoid``/``move_allowed`` ``[B, 2, NUM_KEYS]``
    (so pick per tree with ``search.per_player.for_player``, not ``jnp.where``)."""

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
    sc_temperature: chex.Array  # float32 ScTemperature
    hybrid_ratio: chex.Array  # float32 HybridSamplingRatio (the static mode's ratio)
    hybrid_mode: chex.Array  # int32 index into contempt.HYBRID_RATIO_MODES
    hybrid_min: chex.Array  # float32 HybridMinRatio
    hybrid_max: chex.Array  # float32 HybridMaxRatio
    hybrid_scale: chex.Array  # float32 HybridScalingFactor
    hybrid_p1: chex.Array  # float32 HybridShapeParam1
    hybrid_p2: chex.Array  # float32 HybridShapeParam2
    hybrid_nodes: chex.Array  # float32 [B, MAX_SCHEDULE_POINTS] manual schedule node counts
    hybrid_ratios: chex.Array  # float32 [B, MAX_SCHEDULE_POINTS] its ratios
    hybrid_points: chex.Array  # int32 its length (0: no schedule)
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
    certainty: chex.Array  # bool, certainty propagation
    smart_pruning: chex.Array  # float32 SmartPruningFactor, 0 = off
    kld_min_gain: chex.Array  # float32 MinimumKLDGainPerNode, 0 = off
    kld_interval: chex.Array  # int32 KLDGainAverageInterval
    moves_left: chex.Array  # bool: the network has a moves-left head (the utility is on)
    ml_max_effect: chex.Array  # float32 MovesLeftMaxEffect
    ml_threshold: chex.Array  # float32 MovesLeftThreshold
    ml_slope: chex.Array  # float32 MovesLeftSlope
    ml_constant: chex.Array  # float32 MovesLeftConstantFactor
    ml_scaled: chex.Array  # float32 MovesLeftScaledFactor
    ml_quadratic: chex.Array  # float32 MovesLeftQuadraticFactor
    mate_check: chex.Array  # bool: new nodes are checked for a mate in one (host)
    # move filters (search.move_filter; set by Searcher.init/reset, none here)
    move_avoid: chex.Array  # int16 [B, 2, NUM_KEYS] until depth per avoided move key
    move_allowed: chex.Array  # bool [B, 2, NUM_KEYS] allow list
    move_allow_until: chex.Array  # int16 [B] until depth of the allow list, 0 = none


def stack_configs(configs: list[SearchConfig], moves_left: bool = False,
                  mate_check: bool = False) -> SearchParams:
    """Per-tree arrays (each field [B, ...]) from one config per tree; ``moves_left``: the
    network has a moves-left head (``Model.has_moves_left``), which turns the moves-left utility on;
    ``mate_check``: the mate check of configs that leave it None (``Model.mate_check``).
    ``configs`` must be a non-empty list (or tuple) of ``SearchConfig`` and the two flags
    bools: anything else is a ``ConfigError`` saying what it got."""
    from collections.abc import Sequence

    from zerochess.errors import ConfigError, quote
    from zerochess.validation import as_flag

    if isinstance(configs, SearchConfig) or not isinstance(configs, Sequence) or isinstance(
            configs, (str, bytes)):
        raise ConfigError(f"stack_configs needs a list of SearchConfig, one per tree, got "
                          f"{type(configs).__name__}")
    if not configs:
        raise ConfigError("stack_configs needs at least one SearchConfig (one per tree), got "
                          "an empty list")
    wrong = [i for i, c in enumerate(configs) if not isinstance(c, SearchConfig)]
    if wrong:
        raise ConfigError(f"stack_configs: configs[{wrong[0]}] must be a SearchConfig (e.g. "
                          f"SearchConfig.from_dict), got {quote(configs[wrong[0]], 60)}")
    moves_left = as_flag(moves_left, "stack_configs moves_left (Model.has_moves_left)")
    mate_check = as_flag(mate_check, "stack_configs mate_check (Model.mate_check)")

    def col(fn, dtype):
        # device_put, not jnp.asarray: jax compiles a program per shape for the latter
        return jax.device_put(np.array([fn(c) for c in configs], dtype=dtype))

    f32, i32 = np.float32, np.int32
    rules = list(SELECTION_NAMES)
    modes = list(HYBRID_RATIO_MODES)
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
        sc_temperature=col(lambda c: c.sc_temperature, f32),
        hybrid_ratio=col(lambda c: c.hybrid_sampling_ratio, f32),
        hybrid_mode=col(lambda c: modes.index(c.hybrid_ratio_mode), i32),
        hybrid_min=col(lambda c: c.hybrid_min_ratio, f32),
        hybrid_max=col(lambda c: c.hybrid_max_ratio, f32),
        hybrid_scale=col(lambda c: c.hybrid_scaling_factor, f32),
        hybrid_p1=col(lambda c: c.hybrid_shape_param1, f32),
        hybrid_p2=col(lambda c: c.hybrid_shape_param2, f32),
        hybrid_nodes=col(lambda c: schedule_arrays(c.hybrid_ratio_schedule)[0], f32),
        hybrid_ratios=col(lambda c: schedule_arrays(c.hybrid_ratio_schedule)[1], f32),
        hybrid_points=col(lambda c: len(c.hybrid_ratio_schedule), i32),
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
        certainty=col(lambda c: c.certainty_propagation, np.bool_),
        smart_pruning=col(lambda c: c.smart_pruning_factor, f32),
        kld_min_gain=col(lambda c: c.minimum_kld_gain_per_node, f32),
        kld_interval=col(lambda c: min(c.kld_gain_average_interval, 2**30), i32),
        moves_left=col(lambda c: bool(moves_left), np.bool_),
        ml_max_effect=col(lambda c: c.moves_left_max_effect, f32),
        ml_threshold=col(lambda c: c.moves_left_threshold, f32),
        ml_slope=col(lambda c: c.moves_left_slope, f32),
        ml_constant=col(lambda c: c.moves_left_constant_factor, f32),
        ml_scaled=col(lambda c: c.moves_left_scaled_factor, f32),
        ml_quadratic=col(lambda c: c.moves_left_quadratic_factor, f32),
        mate_check=col(lambda c: bool(mate_check) if c.mate_check is None else c.mate_check,
                       np.bool_),
        **filter_params(move_filter.no_filters(len(configs))),
    )


def filter_params(arrays: move_filter.FilterArrays) -> dict[str, chex.Array]:
    """The ``SearchParams`` move-filter fields of ``arrays``."""
    return {"move_avoid": jax.device_put(np.asarray(arrays.avoid)),
            "move_allowed": jax.device_put(np.asarray(arrays.allowed)),
            "move_allow_until": jax.device_put(np.asarray(arrays.allow_until))}
