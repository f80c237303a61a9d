"""Search hyperparameters: one ``SearchConfig`` per tree (``params`` stacks them into arrays)."""

from __future__ import annotations

import dataclasses
import numbers
from typing import Any

from zerochess.errors import ConfigError, quote
from zerochess.search.contempt import (
    DEFAULT_SCHEDULE,
    HYBRID_RATIO_MODES,
    UNSUPPORTED_MODES,
    parse_schedule,
)
from zerochess.validation import as_choice, as_count, as_flag, as_real

INFINITE_NSCL = 2**31 - 1

# the selection rules' names, in the order of selection.SELECTION_RULES (the index is
# SearchParams.selection)
SELECTION_NAMES: tuple[str, ...] = ("puct", "alphazero")


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """lc0-named search parameters of one tree (defaults are lc0's classic ones).

    ``n_scl`` is search-contempt's limit: opponent nodes (odd depths) switch from
    PUCT to sampling from their frozen child-visit distribution once their
    children hold ``n_scl`` visits. ``None`` means infinity (plain PUCT).
    The ``*_root`` values default to the non-root ones (lc0's "same").

    Every field is checked on construction (``ConfigError``, a ``ValueError``): numbers
    must be finite and within lc0's range for the option (e.g. ``policy_temperature`` in
    [0.1, 10], ``cpuct`` in [0, 100], ``draw_score`` in [-1, 1]), flags must be bools,
    ``n_scl`` an integer >= 1 or None.
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
    # lc0's newer search-contempt options at frozen nodes (search.contempt has their
    # semantics). Defaults: today's search-contempt, the paper's algorithm, exactly.
    # sc_temperature (lc0 ScTemperature, PR #2242, [0, 1], lc0 default 1): frozen counts
    # N sample as N^(1/T) (0: the most visited ones).
    sc_temperature: float = 1.0
    # hybrid_sampling_ratio (lc0 HybridSamplingRatio, PR #2371, [0, 1]): the share of the
    # visits through a frozen node that sample (the rest use the selection rule); 1.0
    # here, pure sampling as in the paper; lc0's PR defaults to 0.8
    hybrid_sampling_ratio: float = 1.0
    # hybrid_ratio_mode (lc0 HybridRatioMode): "static" uses hybrid_sampling_ratio; the
    # others make the ratio a function of the frozen node's visits N: "manual_schedule"
    # interpolates hybrid_ratio_schedule's (N, ratio) points (lc0's string form
    # "1000:0.5 8000:0.9" or a list of pairs); the curves go from hybrid_min_ratio to
    # hybrid_max_ratio over hybrid_scaling_factor visits after N_scl, shaped by
    # hybrid_shape_param1/2 (lc0 HybridMinRatio ... HybridShapeParam2, same defaults)
    hybrid_ratio_mode: str = "static"
    hybrid_ratio_schedule: Any = DEFAULT_SCHEDULE
    hybrid_min_ratio: float = 0.2
    hybrid_max_ratio: float = 0.9
    hybrid_scaling_factor: int = 10000
    hybrid_shape_param1: float = 0.5
    hybrid_shape_param2: float = 0.1
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
    # lc0 StickyEndgames: proven wins/losses/draws propagate up the tree (bounds); off:
    # only game ends are exact (the pre-lc0-0.25 semantics, and mctx's)
    certainty_propagation: bool = True
    # lc0 SmartPruningFactor (its default in play: 1.33; 0 = off, the default here so a
    # node-limited search yields its full visit distribution): a tree stops when the
    # runner-up cannot catch the best move with (simulations left) / factor more visits,
    # when it has one non-losing move left, or when a move is a proven win
    smart_pruning_factor: float = 0.0
    # lc0 MinimumKLDGainPerNode / KLDGainAverageInterval: every ``interval`` new nodes the
    # root's visit distribution is compared with the one at the previous check; the tree
    # stops when the KL divergence gained per node is below the minimum (0 = off)
    minimum_kld_gain_per_node: float = 0.0
    kld_gain_average_interval: int = 100
    # lc0's moves-left utility (MovesLeft*; search.cc ``MEvaluator``): with a network that
    # has a moves-left head, a visited child's Q gets
    #   clamp(slope * (M_child - M_parent), -max_effect, max_effect) * sign(-Q)
    #   * (constant + scaled * |Q'| + quadratic * Q'^2),
    #   Q' = max(0, |Q| - threshold) / (1 - threshold),
    # at nodes whose own |Q| exceeds the threshold (shorter wins, longer losses). Without
    # the head (``Model.has_moves_left`` False) it is off whatever these values are.
    moves_left_max_effect: float = 0.0345
    moves_left_threshold: float = 0.8
    moves_left_slope: float = 0.0027
    moves_left_constant_factor: float = 0.0
    moves_left_scaled_factor: float = 1.6521
    moves_left_quadratic_factor: float = -0.6521
    # zerochess's mate check (no lc0 option; not lc0's search): a new node whose side to
    # move has a move that mates at once is a proven win for that side (lc0's bounds; its
    # network evaluation is still made) and a root with one (else with a mate in two that
    # starts with a check: ``rules.checking_mate_in_two``) searches that move first (its
    # search priors become one-hot on it). Found by python-chess at expansion: only
    # the moves that give check are played. None: the model's default
    # (``Model.mate_check``: on for the built-in evaluator, off for lc0 networks, so
    # lc0-equivalence comparisons search as lc0 does).
    mate_check: bool | None = None

    def __post_init__(self) -> None:
        # Types and ranges: lc0's option ranges where lc0 has the option (params.cc);
        # a wrong type, NaN or infinity is an error, never coerced.
        # Values are stored as plain Python floats / bools / ints (numpy scalars too).
        for name, (low, high, low_open) in _REAL_RANGES.items():
            value = getattr(self, name)
            if value is None and name in _OPTIONAL:
                continue
            object.__setattr__(self, name,
                               as_real(value, f"SearchConfig.{name}", low, high, low_open))
        for name in ("fpu_absolute", "fpu_absolute_root", "certainty_propagation",
                     "mate_check"):
            value = getattr(self, name)
            if not (value is None and name in _OPTIONAL):
                object.__setattr__(self, name, as_flag(value, f"SearchConfig.{name}"))
        if self.n_scl is not None:
            if not isinstance(self.n_scl, numbers.Integral):
                raise ConfigError(f"SearchConfig.n_scl must be an integer >= 1 or None "
                                  f"(infinity), got {quote(self.n_scl)}")
            object.__setattr__(self, "n_scl",
                               as_count(self.n_scl, "SearchConfig.n_scl", 1, INFINITE_NSCL))
        if self.dirichlet_epsilon > 0 and self.dirichlet_alpha == 0:
            raise ConfigError("SearchConfig.dirichlet_alpha must be > 0 when "
                              f"dirichlet_epsilon > 0 (got epsilon {self.dirichlet_epsilon})")
        as_choice(self.selection, "SearchConfig.selection", SELECTION_NAMES)
        if isinstance(self.hybrid_ratio_mode, str) and self.hybrid_ratio_mode in UNSUPPORTED_MODES:
            raise ConfigError(f"SearchConfig.hybrid_ratio_mode {self.hybrid_ratio_mode!r} is "
                              f"not supported: {UNSUPPORTED_MODES[self.hybrid_ratio_mode]}")
        as_choice(self.hybrid_ratio_mode, "SearchConfig.hybrid_ratio_mode", HYBRID_RATIO_MODES)
        try:
            schedule = parse_schedule(self.hybrid_ratio_schedule,
                                      "SearchConfig.hybrid_ratio_schedule")
        except ValueError as err:
            raise ConfigError(str(err)) from None
        object.__setattr__(self, "hybrid_ratio_schedule", schedule)
        if self.minibatch_size is not None:
            object.__setattr__(self, "minibatch_size", as_count(
                self.minibatch_size, "SearchConfig.minibatch_size", 1, MAX_MINIBATCH))
        for name, (low, high) in _COUNT_RANGES.items():
            object.__setattr__(self, name, as_count(getattr(self, name),
                                                    f"SearchConfig.{name}", low, high))

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> SearchConfig:
        """Build from a mapping (e.g. YAML); unknown keys are an error that names them."""
        if not isinstance(values, dict):
            raise ConfigError(f"a search config must be a mapping, got {quote(values)}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(map(str, set(values) - names))
        if unknown:
            raise ConfigError(
                f"unknown search config key(s) {unknown}; known keys: {sorted(names)}"
            )
        return cls(**values)

    def replace(self, **changes: Any) -> SearchConfig:
        return dataclasses.replace(self, **changes)


# field: (low, high, low bound excluded); lc0's ranges (src/search/classic/params.cc,
# src/neural/shared_params.cc) for the lc0 options, finite positive values for the rest.
_REAL_RANGES: dict[str, tuple[float | None, float | None, bool]] = {
    "smart_pruning_factor": (0.0, 10.0, False),  # lc0's SmartPruningFactor range
    "minimum_kld_gain_per_node": (0.0, 1.0, False),  # lc0's MinimumKLDGainPerNode range
    "moves_left_max_effect": (0.0, 1.0, False),
    "moves_left_threshold": (0.0, 1.0, False),
    "moves_left_slope": (0.0, 1.0, False),
    "moves_left_constant_factor": (-1.0, 1.0, False),
    "moves_left_scaled_factor": (-2.0, 2.0, False),
    "moves_left_quadratic_factor": (-1.0, 1.0, False),
    "cpuct": (0.0, 100.0, False),
    "cpuct_base": (1.0, 1e9, False),
    "cpuct_factor": (0.0, 1000.0, False),
    "cpuct_root": (0.0, 100.0, False),
    "cpuct_base_root": (1.0, 1e9, False),
    "cpuct_factor_root": (0.0, 1000.0, False),
    "fpu_value": (-100.0, 100.0, False),
    "fpu_value_root": (-100.0, 100.0, False),
    "policy_temperature": (0.1, 10.0, False),
    "draw_score": (-1.0, 1.0, False),
    "dirichlet_alpha": (0.0, 1e7, False),
    "dirichlet_epsilon": (0.0, 1.0, False),
    "pb_c_init": (0.0, 1e9, False),
    "pb_c_base": (0.0, 1e9, True),
    "max_collision_visits_scaling_power": (0.01, 100.0, False),
    # lc0 PRs #2242 / #2371 (search/classic/params.cc, search/contempt/params.cc)
    "sc_temperature": (0.0, 1.0, False),
    "hybrid_sampling_ratio": (0.0, 1.0, False),
    "hybrid_min_ratio": (0.0, 1.0, False),
    "hybrid_max_ratio": (0.0, 1.0, False),
    "hybrid_shape_param1": (-10000.0, 10000.0, False),
    "hybrid_shape_param2": (-10000.0, 10000.0, False),
}
# lc0's ranges: MaxCollisionEvents, MaxCollisionVisits, MaxCollisionVisitsScaling*
_COUNT_RANGES: dict[str, tuple[int, int]] = {
    "max_collision_events": (1, 65536),
    "max_collision_visits": (1, 100_000_000),
    "max_collision_visits_scaling_start": (1, 100_000),
    "max_collision_visits_scaling_end": (0, 100_000_000),
    "kld_gain_average_interval": (1, 10_000_000),  # lc0's KLDGainAverageInterval range
    "hybrid_scaling_factor": (1, 100_000_000),  # lc0's HybridScalingFactor range
}
MAX_MINIBATCH = 1024  # lc0's MinibatchSize range (0 there: the backend picks; None here)
_OPTIONAL = {"cpuct_root", "cpuct_base_root", "cpuct_factor_root", "fpu_value_root",
             "fpu_absolute_root", "mate_check"}
