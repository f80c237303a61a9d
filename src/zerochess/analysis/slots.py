"""The device side of continuous batching: B search trees, one per slot, refilled one
slot at a time without recompiling."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence

import chess
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.analysis.protocol import MoveFilterEntry
from zerochess.neural.model import Model
from zerochess.search import view
from zerochess.search.api import SearchBatch, Searcher
from zerochess.search.config import SearchConfig
from zerochess.search.move_filter import MoveFilter, filter_arrays, restrict_result
from zerochess.search.results import SearchResult, results_from_view


def make_searcher(model: Model, max_nodes: int, leaves_per_step: int = 1,
                  workers: int | None = None, cache_size: int = 0,
                  cache_history_length: int = 7) -> Searcher:
    """The engine's ``Searcher`` (L leaves per tree and step, a shared evaluation cache)."""
    return Searcher(model, max_nodes=max_nodes, leaves_per_step=leaves_per_step,
                    num_workers=workers, cache_size=cache_size,
                    cache_history_length=cache_history_length)


@dataclasses.dataclass
class SlotReport:
    """What a response needs from one tree: the result and the visits along each PV."""

    result: SearchResult
    pv_visits: np.ndarray  # int [M, 1 + view.PV_LENGTH]: visits of the node after each PV
    # move, row i for result.moves[i] (0 past the end of the PV)


def move_filter(entries: Sequence[MoveFilterEntry]) -> tuple[MoveFilter, ...] | None:
    """A tree's ``MoveFilter``s from a query's allow/avoid entries (one per entry: avoid
    entries with different ``untilDepth`` all apply, as in KataGo)."""
    if not entries:
        return None
    return tuple(MoveFilter(allow=list(e.moves), until_depth=e.until_depth) if e.allow
                 else MoveFilter(avoid=list(e.moves), until_depth=e.until_depth)
                 for e in entries)


def check_move_filters(entries: Sequence[MoveFilterEntry], boards: Sequence[chess.Board]
                       ) -> None:
    """Refuse (``UserError`` naming the position) filters that do not fit one of ``boards``:
    allowed moves not legal there (untilDepth 1), or every legal move excluded."""
    filters = move_filter(entries)
    for board in boards:
        if any(board.generate_legal_moves()):
            filter_arrays([filters], [board])


class SlotBatch:
    """B trees on the device; slot i is tree i of the batch.

    Args:
      searcher: the engine's ``Searcher`` (its N, L and model are the compiled shapes).
      slots: B, the number of trees.
    """

    def __init__(self, searcher: Searcher, slots: int):
        self.searcher = searcher
        placeholder = chess.Board()
        self.batch: SearchBatch = searcher.init([placeholder] * slots, SearchConfig(),
                                                seed=[0] * slots)
        self.shard_size = slots // len(self.batch.shards)
        self._rows = jnp.asarray(view.all_rows(1)[0])  # every root move's continuation

    def __len__(self) -> int:
        return len(self.batch)

    @property
    def supports_move_filters(self) -> bool:
        """allowMoves / avoidMoves run (the core's per-tree ``MoveFilter``)."""
        return True

    def reset(self, slots: Sequence[int], boards: Sequence[chess.Board],
              configs: Sequence[SearchConfig], seeds: Sequence[int],
              move_filters: Sequence[Sequence[MoveFilterEntry]] | None = None) -> None:
        """Start new searches in ``slots`` (the contract's ``Searcher.reset``)."""
        filters = [move_filter(e) for e in move_filters] if move_filters else None
        self.batch = self.searcher.reset(self.batch, list(slots), list(boards), list(configs),
                                         [int(s) for s in seeds], move_filters=filters)

    def run(self, counts: np.ndarray) -> np.ndarray:
        """Run ``counts[i]`` more simulations in tree i (0: the tree idles); returns the
        simulations every tree has done since its reset."""
        self.batch = self.searcher.run(self.batch, np.asarray(counts, np.int64))
        return self.simulations()

    def simulations(self) -> np.ndarray:
        return np.concatenate([np.asarray(jax.device_get(s.tree.simulations))
                               for s in self.batch.shards]).astype(np.int64)

    def report(self, slot: int, need_pv_visits: bool = False) -> SlotReport:
        """The search result of one slot (host numpy), readable between runs, read by
        ``zerochess.search.view`` (the one read path). ``need_pv_visits``: a hint (PV
        visits are read with the PVs and always there)."""
        shard, local = divmod(slot, self.shard_size)
        read = jax.device_get(view.read_tree(self.batch.shards[shard], jnp.int32(local),
                                             self._rows, view.PV_LENGTH))
        result = results_from_view([self.batch.boards[slot]], read)[0]
        # the filtered root moves are not shown (as in lc0)
        searched = restrict_result(result, self.batch.move_filter(slot))
        return SlotReport(searched, searched.pv_visits)

    def _refresh(self) -> None:
        """Every slot a fresh tree again (after warm-up and calibration searches)."""
        self.batch = self.searcher.init([chess.Board()] * len(self), SearchConfig(),
                                        seed=[0] * len(self))

    def calibrate(self, steps: int = 8, repeats: int = 2) -> tuple[float, float]:
        """Seconds of a run's fixed cost and of one step (every tree searching), from the
        fastest of ``repeats`` timed runs of 1 and ``1 + steps`` steps; the trees are
        fresh again afterwards. The engine sizes its chunks with them."""
        ones = np.ones(len(self), np.int64)
        short = long = math.inf
        for _ in range(repeats):
            start = time.perf_counter()
            self.run(ones)
            short = min(short, time.perf_counter() - start)
            start = time.perf_counter()
            self.run(ones * (1 + steps))
            long = min(long, time.perf_counter() - start)
        self._refresh()
        step = max((long - short) / steps, 1e-6)
        return max(short - step, 0.0), step

    def clear_cache(self) -> None:
        """Empty the evaluation cache shared by all slots."""
        self.searcher.clear_cache()

    def warm_up(self) -> None:
        """Compile every program the engine uses (refill, run, report), so that no query
        ever waits for a compilation: ``Searcher.warmup`` of this batch size (the one
        warm-up of both engines), then the engine's own read."""
        self.searcher.warmup(len(self))
        self.report(0, need_pv_visits=True)
        self._refresh()  # every slot fresh again
