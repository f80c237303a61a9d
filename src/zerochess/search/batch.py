"""``SearchBatch``: a batch of searches in progress (the boards, their device state and
what each tree was asked for), as ``Searcher.init`` / ``run`` / ``advance`` return it."""

from __future__ import annotations

import dataclasses

import chess
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.errors import ConfigError
from zerochess.program_store import program
from zerochess.search import loop
from zerochess.search.loop import SearchState
from zerochess.search.move_filter import MoveFilter


@dataclasses.dataclass(frozen=True)
class SearchBatch:
    """A batch of searches in progress: the boards and their device state.

    The trees are held as one or more equal shards (see ``Searcher``); ``state`` shows
    them as one batch for inspection. ``budget`` is the simulation count each tree was
    last asked to reach, ``search_time_s`` the wall time of the ``run`` calls that
    searched it.
    """

    boards: tuple[chess.Board, ...]
    shards: tuple[SearchState, ...]
    budget: np.ndarray  # int64 [B]
    search_time_s: np.ndarray  # float64 [B]
    # each tree's move filters (None: none); None: no tree has one
    move_filters: tuple[tuple[MoveFilter, ...] | None, ...] | None = None

    def move_filter(self, index: int) -> tuple[MoveFilter, ...] | None:
        """The move filters tree ``index`` was started with (None: none)."""
        return None if self.move_filters is None else self.move_filters[index]

    def __len__(self) -> int:
        return len(self.boards)

    def check_live(self) -> None:
        """Raise ``ConfigError`` if this batch was consumed. ``Searcher.run``, ``reset``
        and ``advance`` update the trees in place (their device buffers are donated), so
        afterwards only the batch they returned holds the trees."""
        for shard in self.shards:
            if any(getattr(x, "is_deleted", lambda: False)() for x in jax.tree.leaves(shard)):
                raise ConfigError(
                    "this SearchBatch was consumed by an earlier Searcher.run, reset or "
                    "advance (the trees are updated in place): use the batch that call "
                    "returned, e.g. batch = searcher.run(batch, n)")

    @property
    def state(self) -> SearchState:
        """The whole batch's state (a concatenated copy when sharded)."""
        self.check_live()
        if len(self.shards) == 1:
            return self.shards[0]
        return jax.tree.map(lambda *xs: jnp.concatenate(xs), *self.shards)

    @property
    def finished(self) -> np.ndarray:
        """bool [B]: the tree reached its budget, was stopped (the KLD-gain stopper,
        ``SearchConfig.minimum_kld_gain_per_node``: a stopped tree stays stopped in later
        ``run`` calls), or its smart pruning (``SearchConfig.smart_pruning_factor``)
        decided."""
        self.check_live()
        size = len(self.boards) // len(self.shards)
        limits = [jax.device_put(np.minimum(self.budget[k * size:(k + 1) * size],
                                            2**31 - 1).astype(np.int32))
                  for k in range(len(self.shards))]
        sims, stopped, pruned = jax.device_get((
            [s.tree.simulations for s in self.shards], [s.stopped for s in self.shards],
            [_pruned(s.tree, s.params, lim) for s, lim in zip(self.shards, limits,
                                                               strict=True)]))
        return ((np.concatenate(sims) >= self.budget) | np.concatenate(stopped)
                | np.concatenate(pruned))


@program
def _pruned(tree, params, limit):
    return jax.vmap(loop.smart_pruning_stop)(tree, params, limit)


__all__ = ["SearchBatch"]
