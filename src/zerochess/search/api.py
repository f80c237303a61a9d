"""``Searcher``: the library entry point for batched searches on python-chess boards."""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import chess
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess import state as chess_state
from zerochess.chess.expander import Expander
from zerochess.chess.history import root_history
from zerochess.chess.rules import GameStatus
from zerochess.neural.model import Model
from zerochess.search.config import SearchConfig, stack_configs
from zerochess.search.loop import RootInputs, SearchState, init_search, run_simulations
from zerochess.search.results import SearchResult, read_results, summarize
from zerochess.search.step import make_host_expand
from zerochess.search.tree import bytes_per_node


@dataclasses.dataclass(frozen=True)
class SearchBatch:
    """A batch of searches in progress: the boards and their device state.

    The trees may be held as several equal shards (searched in parallel threads,
    see ``Searcher``); ``state`` shows them as one batch for inspection.
    """

    boards: tuple[chess.Board, ...]
    shards: tuple[SearchState, ...]

    def __len__(self) -> int:
        return len(self.boards)

    @property
    def state(self) -> SearchState:
        """The whole batch's state (a concatenated copy when sharded)."""
        if len(self.shards) == 1:
            return self.shards[0]
        return jax.tree.map(lambda *xs: jnp.concatenate(xs), *self.shards)


class NoLegalMovesError(ValueError):
    """The position to search is already over (checkmate or stalemate)."""


class Searcher:
    """Batched lc0-style MCTS over fixed-size trees.

    Args:
      model: the network (``zerochess.neural.load_model``).
      max_nodes: nodes per tree, N (a compile-time shape). A search needs
        simulations + 1 nodes; past that it stops expanding and reports
        ``dropped_simulations``.
      expander: host move generation; default ``Expander()`` (worker processes
        when the machine has more than one core).
      shards: split a batch into this many equal shards searched in parallel threads.
        XLA runs a small network on one CPU core, so on a multi-core CPU two shards
        overlap one shard's network with the other's (and with host expansion).
        Default: min(cores, 4) on CPU (1 for ``light`` models such as the built-in
        evaluator, whose cost is all host work), 1 on accelerators. Results do not
        depend on it.
    """

    def __init__(self, model: Model, max_nodes: int = 1024, expander: Expander | None = None,
                 num_workers: int | None = None, shards: int | None = None):
        if max_nodes < 2:
            raise ValueError(f"max_nodes must be >= 2, got {max_nodes}")
        if shards is None:
            cores = os.cpu_count() or 1
            on_cpu = jax.default_backend() == "cpu"
            shards = min(cores, 4) if on_cpu and not model.light else 1
        if shards < 1:
            raise ValueError(f"shards must be >= 1, got {shards}")
        self.model = model
        self.max_nodes = int(max_nodes)
        self.shards = int(shards)
        self._pool = ThreadPoolExecutor(self.shards) if self.shards > 1 else None
        self.expander = expander if expander is not None else Expander(num_workers)
        self.host_expand = make_host_expand(self.expander)
        self._init = jax.jit(functools.partial(init_search, model.apply),
                             static_argnames="num_nodes")
        # the state is donated: a run updates the trees in place instead of copying them
        self._run = jax.jit(functools.partial(run_simulations, model.apply, self.host_expand),
                            donate_argnums=(1,))

    @property
    def bytes_per_node(self) -> int:
        return bytes_per_node()

    def init(self, boards: Sequence[chess.Board], configs: SearchConfig | Sequence[SearchConfig]
             = SearchConfig(), seed: int | Sequence[int] = 0) -> SearchBatch:
        """Trees for ``boards`` (with their move history), each holding its evaluated root.

        ``seed``: one seed for the batch (tree i draws from ``tree_key(seed, i)``), or one
        seed per tree (tree i draws from ``tree_key(seed[i], 0)``), which makes a tree's
        randomness independent of its batch slot and neighbours.
        """
        boards = list(boards)
        if not boards:
            raise ValueError("no positions to search")
        if isinstance(configs, SearchConfig):
            configs = [configs] * len(boards)
        configs = list(configs)
        if len(configs) != len(boards):
            raise ValueError(f"{len(configs)} configs for {len(boards)} positions")
        keys = batch_keys(seed, len(boards))
        parts = self._split(len(boards))
        states = []
        for a, b in parts:
            roots = self.prepare_roots(boards[a:b], keys[a:b])
            states.append(self._init(self.model.params, stack_configs(configs[a:b]), roots,
                                     num_nodes=self.max_nodes))
        return SearchBatch(tuple(b.copy() for b in boards), tuple(states))

    def _split(self, batch: int) -> list[tuple[int, int]]:
        """Shard bounds: equal shards (one compile) of >= 8 trees, else one shard."""
        shards = self.shards
        while shards > 1 and (batch % shards or batch // shards < 8):
            shards -= 1
        size = batch // shards
        return [(i * size, (i + 1) * size) for i in range(shards)]

    def _map(self, fn, items: list) -> list:
        if self._pool is None or len(items) == 1:
            return [fn(x) for x in items]
        return list(self._pool.map(fn, items))

    def prepare_roots(self, boards: Sequence[chess.Board], keys: np.ndarray) -> RootInputs:
        """Host side of init: root positions, legal moves, history; ``keys`` uint32 [B, 2]
        (``batch_keys``) seed each tree's random choices."""
        positions, histories = [], []
        for i, board in enumerate(boards):
            outcome = board.outcome(claim_draw=False)
            if outcome is not None and not any(board.generate_legal_moves()):
                raise NoLegalMovesError(
                    f"position {i} has no legal moves ({outcome.termination.name.lower()}): "
                    f"{board.fen()}")
            positions.append(chess_state.from_board(board))
            histories.append(root_history(board))
        position = chess_state.stack(positions)
        exp = self.expander(position, np.full(len(boards), -1, np.int16))
        status = exp.status.copy()
        status[~np.isin(status, (GameStatus.CHECKMATE, GameStatus.STALEMATE))] = GameStatus.ONGOING
        return RootInputs(
            position=chess_state.PositionArrays(*(jnp.asarray(a) for a in position)),
            legal=jnp.asarray(exp.legal), num_legal=jnp.asarray(exp.num_legal),
            status=jnp.asarray(status),
            history=jax.tree.map(lambda *rows: jnp.asarray(np.stack(rows)), *histories),
            rng_key=jnp.asarray(keys, jnp.uint32),
        )

    def run(self, batch: SearchBatch, num_simulations: int | Sequence[int]) -> SearchBatch:
        """Continue the trees for ``num_simulations`` more simulations (resumable).

        ``num_simulations`` is one count for all trees or one per tree (trees that are
        done sit idle while the others go on). The trees are updated in place: use the
        returned batch, not ``batch``.
        """
        counts = np.broadcast_to(np.asarray(num_simulations, np.int64), (len(batch),))
        if counts.min(initial=0) < 0:
            raise ValueError(f"num_simulations must be >= 0, got {num_simulations}")
        size = len(batch) // len(batch.shards)

        def run_shard(i: int) -> SearchState:
            shard = batch.shards[i]
            part = counts[i * size:(i + 1) * size]
            limit = shard.tree.simulations + jnp.asarray(part, jnp.int32)
            state = self._run(self.model.params, shard, limit, jnp.int32(part.max()))
            # Wait here: the run calls back into Python (host expansion); a run still in
            # flight at interpreter exit would call into a finalizing runtime.
            return jax.block_until_ready(state)

        states = self._map(run_shard, list(range(len(batch.shards))))
        return dataclasses.replace(batch, shards=tuple(states))

    def results(self, batch: SearchBatch) -> list[SearchResult]:
        """Per-position results (host numpy); can be read between ``run`` calls."""
        size = len(batch) // len(batch.shards)
        out: list[SearchResult] = []
        for i, state in enumerate(batch.shards):
            summary = jax.device_get(summarize(state.tree, state.params.draw_score))
            out += read_results(list(batch.boards[i * size:(i + 1) * size]), summary,
                                np.asarray(state.root_policy), np.asarray(state.params.draw_score))
        return out

    def search(self, boards: Sequence[chess.Board],
               configs: SearchConfig | Sequence[SearchConfig] = SearchConfig(),
               num_simulations: int = 800, seed: int = 0) -> list[SearchResult]:
        """init + run + results in one call."""
        return self.results(self.run(self.init(boards, configs, seed), num_simulations))


@jax.jit
def _fold_keys(base: jax.Array, indices: jax.Array) -> jax.Array:
    return jax.vmap(lambda i: jax.random.key_data(
        jax.random.fold_in(jax.random.wrap_key_data(base), i)))(indices)


def tree_keys(seed: int, count: int) -> np.ndarray:
    """Raw PRNG keys (uint32 [count, 2]) of the trees of a batch searched with ``seed``:
    every random choice of tree i (noise, search-contempt draws) flows from key i."""
    if not 0 <= seed < 2**63:
        raise ValueError(f"seed must be in [0, 2**63), got {seed}")
    base = jax.random.key_data(jax.random.PRNGKey(seed))
    return np.asarray(_fold_keys(base, jnp.arange(count, dtype=jnp.uint32)), np.uint32)


def batch_keys(seed: int | Sequence[int], count: int) -> np.ndarray:
    """Keys uint32 [count, 2]: ``tree_keys(seed, count)`` for one batch seed, or
    ``tree_keys(seed[i], 1)[0]`` for tree i when given one seed per tree."""
    if isinstance(seed, (int, np.integer)):
        return tree_keys(int(seed), count)
    seeds = list(seed)
    if len(seeds) != count:
        raise ValueError(f"{len(seeds)} seeds for {count} positions")
    return np.stack([tree_keys(int(s), 1)[0] for s in seeds])


def tree_key(seed: int, index: int) -> np.ndarray:
    """The key of tree ``index`` alone (same value as ``tree_keys(seed, n)[index]``)."""
    if not 0 <= seed < 2**63:
        raise ValueError(f"seed must be in [0, 2**63), got {seed}")
    base = jax.random.key_data(jax.random.PRNGKey(seed))
    return np.asarray(_fold_keys(base, jnp.asarray([index], jnp.uint32))[0], np.uint32)

