"""Batched fixed-array MCTS: lc0 PUCT, search-contempt, and mctx comparators."""

from zerochess.search.api import NoLegalMovesError, SearchBatch, Searcher, tree_key
from zerochess.search.config import SearchConfig, SearchParams, stack_configs
from zerochess.search.move_filter import MoveFilter
from zerochess.search.results import SearchResult, TemperatureSchedule
from zerochess.search.tree import Tree, bytes_per_node

__all__ = [
    "MoveFilter",
    "NoLegalMovesError",
    "SearchBatch",
    "SearchConfig",
    "SearchParams",
    "SearchResult",
    "Searcher",
    "TemperatureSchedule",
    "Tree",
    "bytes_per_node",
    "stack_configs",
    "tree_key",
]
