"""``SearcherSettings``: a ``Searcher``'s shapes and machinery, checked once.

Example: ``Searcher(model, SearcherSettings(max_nodes=801, rules="device"))`` or
``Searcher(model, max_nodes=801, rules="device")``.
"""

from __future__ import annotations

import dataclasses
import os

import jax

from zerochess.chess.backend import RULES, Rules
from zerochess.chess.expander import Expander
from zerochess.errors import ConfigError, quote
from zerochess.search import cache as eval_cache
from zerochess.search.memory import (
    MAX_EDGES_PER_NODE,
    MAX_LEAVES,
    MAX_NODES,
    memory_bytes,
    size_text,
)
from zerochess.search.tree import DEFAULT_EDGES_PER_NODE
from zerochess.validation import MAX_INT32, as_count


def default_rules() -> str:
    """The rules backend ``Searcher`` uses when none is named: the device rules on an
    accelerator (the host's python-chess would leave it idle), else the host's."""
    return "device" if jax.default_backend() != "cpu" else "host"


def check_workers(workers: object) -> int:
    """Host move-generation processes: an integer in [0, 4 x cores] (0: inline)."""
    return as_count(workers, "workers", 0, 4 * (os.cpu_count() or 1))


@dataclasses.dataclass(frozen=True)
class SearcherSettings:
    """What a ``Searcher`` is built with; each value is checked here (``ConfigError``
    quoting it) and stored as a plain int where it is a count.

    Args:
      max_nodes: nodes per tree, N (a compile-time shape). A search needs
        simulations + 1 nodes; past that it stops expanding and reports
        ``dropped_simulations``.
      leaves_per_step: L, leaves gathered per tree per step (lc0's minibatch; a
        compile-time shape; ``SearchConfig.minibatch_size`` lowers it per tree). 1 is
        the exact one-leaf-at-a-time search; more fill the network batch from a few
        positions (one position with L = 64-256 keeps an accelerator busy).
      cache_size: entries of the evaluation cache (lc0's NNCache), shared by every search
        of the Searcher; 0 = none. ``Searcher.clear_cache()`` empties it.
      cache_history_length: what the cache key covers (lc0's CacheHistoryLength, 0..7):
        7, the default, is the whole network input (results equal to no cache); 0 is
        lc0's default (the position alone).
      edges_per_node: edge pool entries provisioned per node (the pool holds the
        legal moves of expanded nodes; a tree whose pool fills stops expanding and
        reports it, ``SearchResult.out_of_edges``).
      expander: host move generation; default ``Expander()`` (worker processes when
        the machine has more than one core, used for large steps only).
      num_workers: the default expander's worker processes (``check_workers``).
      shards: split a batch into this many equal shards (1..64), each its own state:
        one's network runs while the other is expanded on the host, and on a CPU without
        an evaluation cache each shard has its own host thread. Default (the driver's,
        ``search.drivers``): 2 on host rules when L = 1 and on device rules on a CPU
        without a cache, if the shards hold >= 8 trees each; else 1. Results do not
        depend on it.
      groups: groups of leaves in flight per shard on host rules (1 or 2; default 2 when
        L > 1): with 2, one group is expanded on the host while the other is evaluated
        (each tree has up to 2 L leaves in flight); 1 keeps a tree's steps in turn.
      compilation_cache: a directory for jax's persistent compilation cache, False to
        leave jax's setting alone, or None (default): ``zerochess.compile_cache``'s
        default directory unless one is already configured.
      rules: ``"host"`` (python-chess; the default on a CPU), ``"device"``
        (``zerochess.chess.device``: each ``run`` is compiled steps between host checks
        of the clock; the default on an accelerator) or a ``chess.backend.Rules``. Both
        give identical trees.
    """

    max_nodes: int = 1024
    leaves_per_step: int = 1
    cache_size: int = 0
    cache_history_length: int = eval_cache.FULL_HISTORY
    edges_per_node: int = DEFAULT_EDGES_PER_NODE
    expander: Expander | None = None
    num_workers: int | None = None
    shards: int | None = None
    groups: int | None = None
    compilation_cache: str | bool | None = None
    rules: str | Rules | None = None

    def __post_init__(self) -> None:
        counts = {"max_nodes": (2, MAX_NODES), "leaves_per_step": (1, MAX_LEAVES),
                  "cache_size": (0, MAX_INT32),
                  "cache_history_length": (0, eval_cache.FULL_HISTORY),
                  "edges_per_node": (1, MAX_EDGES_PER_NODE), "shards": (1, 64),
                  "groups": (1, 2)}
        for name, (low, high) in counts.items():
            value = getattr(self, name)
            if value is not None or name not in ("shards", "groups"):
                object.__setattr__(self, name, as_count(value, name, low, high))
        if self.num_workers is not None:
            object.__setattr__(self, "num_workers", check_workers(self.num_workers))
        if self.cache_size:
            need, (have, where) = self.cache_size * eval_cache.ENTRY_BYTES, memory_bytes()
            if need > have // 2:
                raise ConfigError(
                    f"cache_size {self.cache_size:,} needs {size_text(need)} "
                    f"({eval_cache.ENTRY_BYTES} bytes per entry), more than half of {where} "
                    f"({size_text(have)}); at most about {have // 2 // eval_cache.ENTRY_BYTES:,} "
                    "entries fit here")
        cc = self.compilation_cache
        if cc is not None and cc is not False and not isinstance(cc, str):
            raise ConfigError(f"compilation_cache must be a directory, False or None, got "
                              f"{quote(cc)}")
        rules = self.rules
        if not (rules is None or isinstance(rules, Rules)
                or (isinstance(rules, str) and rules in RULES)):
            raise ConfigError(f"rules must be one of {', '.join(RULES)} (or a Rules object), "
                              f"got {quote(self.rules)}")
        if self.expander is not None and not isinstance(self.expander, Expander):
            raise ConfigError(f"expander must be a zerochess Expander or None, got "
                              f"{quote(self.expander)}")


__all__ = ["SearcherSettings", "check_workers", "default_rules"]
