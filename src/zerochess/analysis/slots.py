"""The device side of continuous batching: B search trees, one per slot, refilled one
slot at a time without recompiling.

``SlotBatch`` is the one place that knows how the engine drives the ``Searcher``. A slot
is refilled with ``Searcher.reset`` (slots, configs, seeds and the query's move filters
are data, so every refill reuses the compiled programs).
"""

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
from zerochess.program_store import program
from zerochess.search.api import SearchBatch, Searcher
from zerochess.search.config import SearchConfig
from zerochess.search.loop import SearchState, network_buckets
from zerochess.search.move_filter import MoveFilter, filter_arrays, restrict_result
from zerochess.search.results import SearchResult, read_results, summarize
from zerochess.search.tree import Tree, node_edges


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
    pv_visits: np.ndarray  # int [M, 1 + PV_LENGTH]: visits of the node after each PV move,
    # row i for result.moves[i] (0 past the end of the PV)


def _pv_visits(tree: Tree, pv: jax.Array) -> jax.Array:
    """Visits of the nodes reached by each root move's PV, for one tree.

    Args:
      tree: one tree (no batch axis).
      pv: int [K, PV_LENGTH] move indices after each root move (-1 padded).

    Returns:
      int32 [K, 1 + PV_LENGTH]: the root child's visits, then the visits after each PV move.
    """

    def line(child: jax.Array, moves: jax.Array) -> jax.Array:
        def step(node, move):
            safe = jnp.maximum(node, 0)
            edges = node_edges(tree, safe)
            edge = jnp.argmax(edges.valid & (edges.move == move))
            nxt = jnp.where((node >= 0) & (move >= 0), edges.child[edge], -1)
            return nxt, jnp.where(nxt >= 0, tree.visits[jnp.maximum(nxt, 0)], 0)

        _, visits = jax.lax.scan(step, child, moves.astype(jnp.int16))
        first = jnp.where(child >= 0, tree.visits[jnp.maximum(child, 0)], 0)
        return jnp.concatenate([first[None], visits])

    return jax.vmap(line)(node_edges(tree, jnp.int32(0)).child, pv)


@program
def _slot_summary(state: SearchState, index: jax.Array) -> dict[str, jax.Array]:
    """``summarize`` of tree ``index`` alone (a batch of one), with its root policy,
    draw score and PV visits."""
    def take(x):
        return jax.lax.dynamic_index_in_dim(x, index, 0, keepdims=True)

    tree = jax.tree.map(take, state.tree)
    draw = take(state.params.draw_score)
    out = dict(summarize(tree, draw, take(state.params.moves_left)))
    out["pv_visits"] = _pv_visits(jax.tree.map(lambda x: x[0], tree), out["pv"][0])[None]
    out["root_policy"] = take(state.root_policy)
    out["draw_score"] = draw
    out["policy_temperature"] = take(state.params.policy_temperature)
    return out


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
        # TODO(core): pass time_limit_s (next report or chunk deadline) and read
        # batch.finished (stoppers, proven roots) once the host-driven loop lands (issue 10/11).
        self.batch = self.searcher.run(self.batch, np.asarray(counts, np.int64))
        return self.simulations()

    def simulations(self) -> np.ndarray:
        return np.concatenate([np.asarray(jax.device_get(s.tree.simulations))
                               for s in self.batch.shards]).astype(np.int64)

    def report(self, slot: int, need_pv_visits: bool = False) -> SlotReport:
        """The search result of one slot (host numpy), readable between runs.
        ``need_pv_visits``: a hint (PV visits are cheap and always computed today)."""
        # TODO(core): SearchResult fields bound/mate_plies and score() (issue 11) for mates
        # and proven values; pv visits from the core if the contract adds them.
        shard, local = divmod(slot, self.shard_size)
        out = jax.device_get(_slot_summary(self.batch.shards[shard], jnp.int32(local)))
        result = read_results([self.batch.boards[slot]], out, out["root_policy"],
                              out["draw_score"],
                              policy_temperature=out["policy_temperature"])[0]
        pv_visits = np.asarray(out["pv_visits"][0][:len(result.moves)], np.int64)
        searched = restrict_result(result, self.batch.move_filter(slot))
        if searched is not result:  # the filtered root moves are not shown (as in lc0)
            pv_visits = pv_visits[[result.moves.index(m) for m in searched.moves]]
        return SlotReport(searched, pv_visits)

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
        ever waits for a compilation.

        The core compiles its network calls per evaluation bucket (``network_buckets``:
        the number of roots refilled at once, or of leaves evaluated in a step), so every
        bucket is run once: b fresh trees per shard, one simulation each.
        """
        size, shards = self.shard_size, len(self.batch.shards)
        leaves = getattr(self.searcher, "leaves_per_step", 1)
        for bucket in network_buckets(size * leaves):
            # TODO(core): with L > 1 a fresh tree's first step may gather fewer than L
            # leaves (collisions), so a bucket between two others may still compile late.
            trees = min(size, -(-bucket // leaves))
            slots = [k * size + i for k in range(shards) for i in range(trees)]
            self.reset(slots, [chess.Board()] * len(slots), [SearchConfig()] * len(slots),
                       [0] * len(slots))
            counts = np.zeros(len(self), np.int64)
            counts[slots] = 1
            self.run(counts)
        self.report(0, need_pv_visits=True)
        self.run(np.zeros(len(self), np.int64))
        # a step whose only leaf ends the game needs no network rows: its own program
        # (the only move, Kxd2, leaves bare kings)
        self.reset([0], [chess.Board("3k4/8/8/8/8/8/3q4/3K4 w - - 0 1")], [SearchConfig()], [0])
        counts = np.zeros(len(self), np.int64)
        counts[0] = 2
        self.run(counts)
        self._refresh()  # every slot fresh again
