"""Search stoppers, as lc0's ``search/classic/stoppers/`` defines them."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

SMART_PRUNING_TOLERANCE_MS = 200
SMART_PRUNING_TOLERANCE_NODES = 300
_FAR_FUTURE_MS = 100_000_000_000  # lc0: "slightly more than 3 years"
_MAX_PLAYOUTS = 4_000_000_000

HINT_NORMAL, HINT_NEED_MORE_TIME, HINT_IMMEDIATE_MOVE = 0, 1, 2


@dataclasses.dataclass
class IterationStats:
    """What the search reports to its stoppers (lc0 IterationStats). Times in ms."""

    time_since_movestart: int = 0
    time_since_first_batch: int = 0
    total_nodes: int = 0  # root visits, reused ones included
    nodes_since_movestart: int = 0  # new playouts of this search
    batches_since_movestart: int = 0
    average_depth: int = 0
    mate_depth: int = 2**31 - 1  # moves to the shortest proven mate for the root side
    edge_n: Sequence[int] = ()  # visits of every root move
    win_found: bool = False
    may_resign: bool = False
    num_losing_edges: int = 0
    time_usage_hint: int = HINT_NORMAL
    tree_nodes: int = 0  # zerochess: nodes allocated in the fixed-size tree


class StoppersHints:
    """Hints from the stoppers to the search and to each other (lc0 StoppersHints)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.remaining_time_ms = _FAR_FUTURE_MS
        self._remaining_playouts = _MAX_PLAYOUTS
        self.estimated_nps: float | None = None

    def update_remaining_time_ms(self, value: float) -> None:
        self.remaining_time_ms = min(self.remaining_time_ms, value)

    def update_remaining_playouts(self, value: float) -> None:
        self._remaining_playouts = min(self._remaining_playouts, value)

    @property
    def remaining_playouts(self) -> float:
        return max(1, self._remaining_playouts)  # never "no playouts at all"


class SearchStopper:
    """Base: ``should_stop`` is asked after every chunk; ``on_search_done`` once at the end."""

    def should_stop(self, stats: IterationStats, hints: StoppersHints) -> bool:
        raise NotImplementedError

    def on_search_done(self, stats: IterationStats) -> None:
        pass


class ChainedStopper(SearchStopper):
    """Stops when any stopper in the chain does (asked in order; later ones see hints)."""

    def __init__(self, stoppers: Sequence[SearchStopper | None] = ()) -> None:
        self.stoppers: list[SearchStopper] = [s for s in stoppers if s is not None]

    def add(self, stopper: SearchStopper | None) -> None:
        if stopper is not None:
            self.stoppers.append(stopper)

    def should_stop(self, stats: IterationStats, hints: StoppersHints) -> bool:
        return any(s.should_stop(stats, hints) for s in self.stoppers)

    def on_search_done(self, stats: IterationStats) -> None:
        for s in self.stoppers:
            s.on_search_done(stats)


class VisitsStopper(SearchStopper):
    """``go nodes``: total root visits, reused ones included."""

    def __init__(self, limit: int, populate_remaining_playouts: bool) -> None:
        self.limit = limit
        self.populate = populate_remaining_playouts

    def should_stop(self, stats: IterationStats, hints: StoppersHints) -> bool:
        if self.populate:
            hints.update_remaining_playouts(self.limit - stats.total_nodes)
        return stats.total_nodes >= self.limit


class PlayoutsStopper(SearchStopper):
    """``go nodes`` with NodesAsPlayouts: new playouts of this search only."""

    def __init__(self, limit: int, populate_remaining_playouts: bool) -> None:
        self.limit = limit
        self.populate = populate_remaining_playouts

    def should_stop(self, stats: IterationStats, hints: StoppersHints) -> bool:
        if self.populate:
            hints.update_remaining_playouts(self.limit - stats.nodes_since_movestart)
        return stats.nodes_since_movestart >= self.limit


class CapacityStopper(SearchStopper):
    """The tree holds ``capacity`` nodes (a fixed array): stop before it overflows.

    zerochess's counterpart of lc0's RamLimitMb stopper (a visits stopper on memory).
    """

    def __init__(self, capacity: int, populate_remaining_playouts: bool) -> None:
        self.capacity = capacity
        self.populate = populate_remaining_playouts

    def should_stop(self, stats: IterationStats, hints: StoppersHints) -> bool:
        if self.populate:
            hints.update_remaining_playouts(self.capacity - stats.tree_nodes)
        return stats.tree_nodes >= self.capacity


class TimeLimitStopper(SearchStopper):
    def __init__(self, limit_ms: float) -> None:
        self.limit_ms = limit_ms

    def should_stop(self, stats: IterationStats, hints: StoppersHints) -> bool:
        hints.update_remaining_time_ms(self.limit_ms - stats.time_since_movestart)
        return stats.time_since_movestart >= self.limit_ms


class DepthStopper(SearchStopper):
    """``go depth``: lc0 compares the *average* playout depth."""

    def __init__(self, depth: int) -> None:
        self.depth = depth

    def should_stop(self, stats: IterationStats, hints: StoppersHints) -> bool:
        return stats.average_depth >= self.depth


class MateStopper(SearchStopper):
    """``go mate n``: a proven mate in at most n moves."""

    def __init__(self, mate: int) -> None:
        self.mate = mate

    def should_stop(self, stats: IterationStats, hints: StoppersHints) -> bool:
        return stats.mate_depth <= self.mate


class SmartPruningStopper(SearchStopper):
    """Stop once the best root move cannot be overtaken in the remaining time/playouts.

    Also stops at once with a single legal move, at most one non-losing move, or a
    proven win at the root (lc0 SmartPruningStopper).
    """

    def __init__(self, factor: float, minimum_batches: int) -> None:
        self.factor = factor
        self.minimum_batches = minimum_batches
        self.first_eval_time: int | None = None

    def should_stop(self, stats: IterationStats, hints: StoppersHints) -> bool:
        if self.factor <= 0:
            return False
        edges = len(stats.edge_n)
        if edges == 1:
            return True
        if edges and edges <= stats.num_losing_edges + (0 if stats.may_resign else 1):
            return True
        if stats.win_found:
            return True
        if stats.nodes_since_movestart > 0 and self.first_eval_time is None:
            self.first_eval_time = stats.time_since_movestart
            return False
        if self.first_eval_time is None or edges == 0:
            return False
        if stats.time_since_movestart < self.first_eval_time + SMART_PRUNING_TOLERANCE_MS:
            return False
        nodes = stats.nodes_since_movestart + SMART_PRUNING_TOLERANCE_NODES
        elapsed = stats.time_since_movestart - self.first_eval_time
        nps = hints.estimated_nps
        if nps is None:
            nps = 1000 * nodes // max(elapsed, 1) + 1
        remaining_time_s = hints.remaining_time_ms / 1000.0
        remaining = min(remaining_time_s * nps / self.factor,
                        hints.remaining_playouts / self.factor)
        hints.update_remaining_playouts(remaining)
        if stats.batches_since_movestart < self.minimum_batches:
            return False
        top = sorted(stats.edge_n, reverse=True)[:2]
        largest, second = (top + [0, 0])[:2]
        return remaining < largest - second


def mate_moves_from_plies(plies: float) -> int:
    """lc0's mate depth of a proven win: round(M) / 2 + 1 moves (M = plies to mate)."""
    return int(math.floor(abs(plies) + 0.5)) // 2 + 1


__all__ = [
    "HINT_IMMEDIATE_MOVE", "HINT_NEED_MORE_TIME", "HINT_NORMAL", "CapacityStopper",
    "ChainedStopper", "DepthStopper", "IterationStats", "MateStopper",
    "PlayoutsStopper", "SearchStopper", "SmartPruningStopper", "StoppersHints",
    "TimeLimitStopper", "VisitsStopper", "mate_moves_from_plies",
]
