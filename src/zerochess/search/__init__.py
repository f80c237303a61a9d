"""Batched fixed-array MCTS: lc0 PUCT, search-contempt, and mctx comparators."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names as ``_EXPORTS``, for type checkers and IDEs
    from zerochess.search.api import NoLegalMovesError, SearchBatch, Searcher, tree_key
    from zerochess.search.config import SearchConfig
    from zerochess.search.move_choice import TemperatureSchedule
    from zerochess.search.move_filter import MoveFilter
    from zerochess.search.params import SearchParams, stack_configs
    from zerochess.search.results import SearchResult
    from zerochess.search.settings import SearcherSettings
    from zerochess.search.tree import Tree, bytes_per_node

# name -> the module it is imported from on first use
_EXPORTS = {
    "MoveFilter": "zerochess.search.move_filter",
    "NoLegalMovesError": "zerochess.search.api",
    "SearchBatch": "zerochess.search.api",
    "SearchConfig": "zerochess.search.config",
    "SearchParams": "zerochess.search.params",
    "SearchResult": "zerochess.search.results",
    "Searcher": "zerochess.search.api",
    "SearcherSettings": "zerochess.search.settings",
    "TemperatureSchedule": "zerochess.search.move_choice",
    "Tree": "zerochess.search.tree",
    "bytes_per_node": "zerochess.search.tree",
    "stack_configs": "zerochess.search.params",
    "tree_key": "zerochess.search.api",
}

__all__ = [
    "MoveFilter",
    "NoLegalMovesError",
    "SearchBatch",
    "SearchConfig",
    "SearchParams",
    "SearchResult",
    "Searcher",
    "SearcherSettings",
    "TemperatureSchedule",
    "Tree",
    "bytes_per_node",
    "stack_configs",
    "tree_key",
]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'zerochess.search' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
