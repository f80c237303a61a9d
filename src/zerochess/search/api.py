"""``Searcher``: the library entry point for batched searches on python-chess boards."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import chess
import jax
import jax.numpy as jnp
import numpy as np

from zerochess import compile_cache, program_store
from zerochess.chess.backend import (
    NoLegalMovesError,
    make_rules,
    root_mate_slot,
)
from zerochess.chess.expander import Expander
from zerochess.chess.history import root_history
from zerochess.errors import ConfigError, PositionError, quote
from zerochess.neural.model import Model
from zerochess.positions import check_board
from zerochess.program_store import Program, program
from zerochess.search import cache as eval_cache
from zerochess.search import compiled, loop, reroot, step, view
from zerochess.search.batch import SearchBatch
from zerochess.search.config import SearchConfig
from zerochess.search.drivers import CompiledSteps, Driver, HostPipeline, PipelineStats, Programs
from zerochess.search.loop import RootInputs, SearchState
from zerochess.search.memory import (
    MAX_LEAVES,
    MAX_NODES,
    check_tree_memory,
    default_node_bytes,
    memory_bytes,
)
from zerochess.search.move_filter import (
    MoveFilter,
    TreeFilter,
    filter_arrays,
    per_tree,
    restrict_result,
)
from zerochess.search.params import SearchParams, filter_params, stack_configs
from zerochess.search.programs import StateProgram
from zerochess.search.results import SearchResult, results_from_view
from zerochess.search.settings import SearcherSettings, check_workers, default_rules
from zerochess.search.tree import DEFAULT_EDGES_PER_NODE, K
from zerochess.search.tree_keys import batch_keys, tree_key, tree_keys
from zerochess.validation import MAX_INT32, as_count, as_real


class Searcher:
    """Batched lc0-style MCTS over fixed-size trees.

    Args:
      model: the network (``zerochess.neural.load_model``).
      settings: the shapes and machinery (``SearcherSettings``; default: its defaults);
        keyword ``fields`` of ``SearcherSettings`` build or override it, e.g.
        ``Searcher(model, max_nodes=801, leaves_per_step=4)``.

    The rules pick the driver once (``search.drivers``): ``HostPipeline`` on host rules,
    ``CompiledSteps`` on device rules; ``driver.groups`` is ``groups`` resolved.
    """

    def __init__(self, model: Model, settings: SearcherSettings | None = None, **fields: Any):
        if not isinstance(model, Model):
            raise ConfigError(f"model must be a zerochess Model (zerochess.load_model), "
                              f"got {quote(model)}")
        if settings is not None and not isinstance(settings, SearcherSettings):
            raise ConfigError(f"settings must be a SearcherSettings, got {quote(settings)}")
        unknown = sorted(set(fields) - {f.name for f in dataclasses.fields(SearcherSettings)})
        if unknown:
            raise TypeError(f"Searcher got unknown settings {unknown}; see SearcherSettings")
        s = self.settings = dataclasses.replace(settings or SearcherSettings(), **fields)
        if s.compilation_cache is not False:
            compile_cache.enable(s.compilation_cache)
        self.model = model
        self.max_nodes, self.leaves_per_step = s.max_nodes, s.leaves_per_step
        self.cache_size, self.cache_history_length = s.cache_size, s.cache_history_length
        self.edges_per_node = s.edges_per_node
        self.rules = make_rules(default_rules() if s.rules is None else s.rules,
                                s.num_workers, s.expander)
        self.expander = getattr(self.rules, "expander", None) or Expander(0)
        self.host_expand = step.make_host_expand(self.rules.expand)
        self.driver = self._driver()
        self.groups = self.driver.groups
        self._cache = eval_cache.empty_cache(s.cache_size) if s.cache_size else None
        self._cache_params: Any = model.params  # the parameters the cache's entries are of
        self._lock = threading.Lock()
        self.last_run = PipelineStats()  # what the last ``run`` did (rows used, host time)
        self._networks: dict[int, Callable] = {}
        self._step_rows: set[int] = set()  # evaluation batch sizes steps have run (warmup)

    def _driver(self) -> Driver:
        """The driver of every ``run``, from the rules (the one place they choose it)."""
        s = self.settings
        if not self.rules.on_device:
            return HostPipeline(self._programs, s.groups or (2 if s.leaves_per_step > 1 else 1),
                                threads=jax.default_backend() == "cpu")
        if s.groups == 2:
            raise ConfigError("groups=2 overlaps host work with the network; with device "
                              "rules there is none: use groups=1 (the default there)")
        return CompiledSteps(functools.partial(
            _run_steps, apply_fn=self.model.apply, num_leaves=s.leaves_per_step,
            history_length=s.cache_history_length, expand_fn=self.rules.device_expand),
            s.leaves_per_step)

    @property
    def _cache(self) -> eval_cache.EvalCache | None:
        """The evaluation cache, held by the driver (its steps replace it)."""
        return self.driver.cache

    @_cache.setter
    def _cache(self, cache: eval_cache.EvalCache | None) -> None:
        self.driver.cache = cache

    # --- programs ------------------------------------------------------------------------

    def _network(self, rows: int) -> Callable:
        """The network on the first ``rows`` rows of an evaluation batch."""
        if rows not in self._networks:
            self._networks[rows] = functools.partial(_network, self.model.apply, rows=rows)
        return self._networks[rows]

    def _net_outputs(self, net_params: Any, net, rows: int) -> step.LeafOutputs:
        """The network on ``rows`` rows; none when a group has no leaf that needs it (all
        terminal, cached or none gathered: e.g. a lane left without simulations)."""
        self._step_rows.add(rows)
        if rows:
            return self._network(rows)(net_params, net)
        return step.no_outputs(net.temperature.shape[0])

    def _select(self, state: SearchState, limit: jax.Array):
        return _select(state, limit, num_leaves=self.leaves_per_step)

    def _prepare(self, state: SearchState, cache, leaves, expansion):
        return _prepare(state, cache, leaves, expansion,
                        history_length=self.cache_history_length)

    def _evaluate(self, net_params: Any, state: SearchState, cache, leaves, expansion,
                  rows: int):
        self._step_rows.add(rows)
        return _evaluate(state, cache, leaves, expansion, net_params,
                         apply_fn=self.model.apply, rows=rows,
                         history_length=self.cache_history_length)

    def _finish_select(self, state: SearchState, cache, leaves, prepared, outputs, limit):
        return _finish_select(state, cache, leaves, prepared, outputs, limit,
                              num_leaves=self.leaves_per_step)

    def _programs(self, shard_size: int, net_params: Any) -> Programs:
        rows = shard_size * self.leaves_per_step
        return Programs(
            select=self._select, evaluate=functools.partial(self._evaluate, net_params),
            prepare=self._prepare,
            network=functools.partial(self._net_outputs, net_params),
            finish_select=self._finish_select, finish=_finish, host_expand=self.host_expand,
            rows=rows, buckets=loop.network_buckets(rows))

    @property
    def bytes_per_node(self) -> int:
        return default_node_bytes(self.edges_per_node)

    @staticmethod
    def node_bytes(edges_per_node: int = DEFAULT_EDGES_PER_NODE) -> int:
        """Bytes of device memory per tree node (before any Searcher exists)."""
        return default_node_bytes(edges_per_node)

    def clear_cache(self) -> None:
        """Empty the evaluation cache (e.g. after changing the network's weights)."""
        with self._lock:
            if self._cache is not None:
                self._cache = eval_cache.empty_cache(self.cache_size)

    def _net_params(self, params: Any) -> Any:
        """The network parameters of a call (default ``model.params``). The evaluation
        cache holds one parameter set's outputs: other parameters empty it first."""
        params = self.model.params if params is None else params
        if self._cache is not None and params is not self._cache_params:
            self._cache = eval_cache.empty_cache(self.cache_size)
        self._cache_params = params
        return params

    # --- searches ------------------------------------------------------------------------

    def _shard_bounds(self, batch: int) -> list[tuple[int, int]]:
        """Equal shards of >= 8 trees (one compile), else one shard."""
        shards = self.settings.shards or self.driver.default_shards(self.leaves_per_step)
        while shards > 1 and (batch % shards or batch // shards < 8):
            shards -= 1
        size = batch // shards
        return [(i * size, (i + 1) * size) for i in range(shards)]

    def init(self, boards: Sequence[chess.Board], configs: SearchConfig | Sequence[SearchConfig]
             = SearchConfig(), seed: int | Sequence[int] = 0, params: Any = None,
             move_filters: Sequence[TreeFilter] | None = None) -> SearchBatch:
        """Trees for ``boards`` (with their move history), each holding its evaluated root.

        ``seed``: one seed for the batch (tree i draws from ``tree_key(seed, i)``), or one
        seed per tree (tree i draws from ``tree_key(seed[i], 0)``), which makes a tree's
        randomness independent of its batch slot and neighbours.
        ``params``: the network parameters to evaluate the roots with (default
        ``model.params``); any pytree of the same shapes runs without recompiling, so a
        training loop passes its current weights here and to ``run``.
        ``move_filters``: one ``MoveFilter`` (or None, or a list of MoveFilters that all
        apply) per tree: the moves each search may select near its root
        (``zerochess.search.move_filter``; data, no recompilation).
        """
        if isinstance(boards, chess.Board) or not isinstance(boards, Sequence | Iterable):
            raise PositionError(f"boards must be a list of chess.Board, got {quote(boards)}")
        boards = list(boards)
        if not boards:
            raise PositionError("no positions to search")
        for i, board in enumerate(boards):
            check_board(board, f"position {i}")
        configs = _per_tree(configs, len(boards))
        filters = per_tree(move_filters, len(boards))
        arrays = filter_arrays(filters, boards)
        keys = batch_keys(seed, len(boards))
        check_tree_memory(len(boards), self.max_nodes, node_bytes=self.bytes_per_node)
        with self._lock:
            net_params = self._net_params(params)
        states = []
        for a, b in self._shard_bounds(len(boards)):
            search_params = stack_configs(configs[a:b], self.model.has_moves_left,
                                          self.model.mate_check).replace(**filter_params(
                arrays.take(np.arange(a, b))))
            state = _empty(search_params, self.max_nodes, self.edges_per_node)
            states.append(self._start(state, np.arange(b - a), boards[a:b], search_params,
                                      keys[a:b], net_params))
        return SearchBatch(tuple(b.copy() for b in boards), tuple(states),
                           budget=np.zeros(len(boards), np.int64),
                           search_time_s=np.zeros(len(boards)),
                           move_filters=tuple(filters) if any(filters) else None)

    def reset(self, batch: SearchBatch, slots: Sequence[int], boards: Sequence[chess.Board],
              configs: SearchConfig | Sequence[SearchConfig] = SearchConfig(),
              seeds: int | Sequence[int] = 0, params: Any = None,
              move_filters: Sequence[TreeFilter] | None = None) -> SearchBatch:
        """Start new searches in tree ``slots`` of ``batch`` (no recompilation); the other
        trees are untouched. ``seeds``: one seed (slot s draws from ``tree_key(seed, s)``,
        as if the batch had been started with it) or one per slot (``tree_key(seed, 0)``).
        ``params``: network parameters for the new roots (as in ``init``).
        ``move_filters``: one ``MoveFilter`` (or None) per slot, as in ``init``.
        Use the returned batch, not ``batch``.
        """
        if not isinstance(batch, SearchBatch):
            raise ConfigError(f"batch must be a SearchBatch (Searcher.init), got {quote(batch)}")
        batch.check_live()
        if isinstance(slots, str) or not isinstance(slots, Iterable):
            raise ConfigError(f"slots must be a list of tree indices, got {quote(slots)}")
        slots = [as_count(s, f"slots[{i}]", 0, len(batch) - 1) for i, s in enumerate(slots)]
        if isinstance(boards, chess.Board) or not isinstance(boards, Iterable):
            raise PositionError(f"boards must be a list of chess.Board, got {quote(boards)}")
        boards = list(boards)
        if len(slots) != len(boards):
            raise ConfigError(f"{len(boards)} boards for {len(slots)} slots")
        if len(set(slots)) != len(slots):
            raise ConfigError(f"slots must be distinct, got {slots}")
        if not slots:
            return batch
        for i, board in enumerate(boards):
            check_board(board, f"position {i}")
        configs = _per_tree(configs, len(slots))
        filters = per_tree(move_filters, len(slots))
        arrays = filter_arrays(filters, boards)
        if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
            keys = np.stack([tree_key(int(seeds), s) for s in slots])
        else:
            keys = batch_keys(seeds, len(slots))
        size = len(batch) // len(batch.shards)
        shards = list(batch.shards)
        with self._lock:
            net_params = self._net_params(params)
        for k in range(len(shards)):
            mine = [i for i, s in enumerate(slots) if s // size == k]
            if mine:
                shards[k] = self._start(
                    shards[k], np.array([slots[i] - k * size for i in mine]),
                    [boards[i] for i in mine],
                    stack_configs([configs[i] for i in mine], self.model.has_moves_left,
                                  self.model.mate_check).replace(**filter_params(
                        arrays.take(np.array(mine)))),
                    keys[mine], net_params)
        new_boards = list(batch.boards)
        budget, spent = batch.budget.copy(), batch.search_time_s.copy()
        new_filters = list(batch.move_filters or [None] * len(batch))
        for s, board, f in zip(slots, boards, filters, strict=True):
            new_boards[s] = board.copy()
            budget[s], spent[s] = 0, 0.0
            new_filters[s] = f
        return SearchBatch(tuple(new_boards), tuple(shards), budget=budget, search_time_s=spent,
                           move_filters=tuple(new_filters) if any(new_filters) else None)

    def advance(self, batch: SearchBatch, moves: Sequence[Sequence[chess.Move] | None],
                params: Any = None) -> SearchBatch:
        """Tree reuse: move each tree's root down the moves played since its search and
        keep the subtree below them (lc0 keeps its tree between moves this way).

        ``moves[i]``: the moves played from tree i's root position, in order (e.g. the
        move chosen and the opponent's reply); ``[]`` keeps the tree and its root and
        starts a new search on it; ``None`` leaves tree i exactly as it is. A
        tree whose moves lead out of it (a move never searched, a position not yet
        evaluated, more than ``reroot.MAX_PLIES`` moves) starts afresh at the new
        position, as ``reset`` would start it. Either way the tree draws from a new key
        of its own stream (``reroot.next_key``: reproducible, never the old noise), root
        noise is applied again, search-contempt frozen counts follow the new parity,
        two-fold draws whose first occurrence is now in the game are undone, and a new
        search starts: ``run`` adds simulations to the kept ones (``root_visits``
        counts them, ``reused_visits`` says how many were kept, ``playouts`` counts only
        the new ones). Nothing recompiles. ``params``: network parameters for trees
        that start afresh (as in ``init``). Use the returned batch, not ``batch``.
        """
        if not isinstance(batch, SearchBatch):
            raise ConfigError(f"batch must be a SearchBatch (Searcher.init), got {quote(batch)}")
        batch.check_live()
        if isinstance(moves, str | chess.Move) or not isinstance(moves, Sequence | Iterable):
            raise ConfigError(f"moves must be one list of chess.Move per tree, got "
                              f"{quote(moves)}")
        moves = [m for m in moves]
        if len(moves) != len(batch):
            raise ConfigError(f"{len(moves)} move lists for {len(batch)} trees")
        boards, indices, plies = [], np.full((len(batch), reroot.MAX_PLIES), -1, np.int16), []
        untouched = np.array([line is None for line in moves])
        for i, (board, line) in enumerate(zip(batch.boards, moves, strict=True)):
            if line is None:
                boards.append(board)
                plies.append(-1)
                continue
            if isinstance(line, Iterable) and not isinstance(line, str | chess.Move):
                line = list(line)
            board, played = self.rules.follow(board, line, f"moves[{i}]")
            indices[i, :min(len(played), reroot.MAX_PLIES)] = played[:reroot.MAX_PLIES]
            boards.append(board)
            # more moves than one advance follows: no move matches -1, the tree restarts
            plies.append(min(len(line), reroot.MAX_PLIES))
            if len(line) > reroot.MAX_PLIES:
                indices[i, 0] = -2
        history = jax.tree.map(lambda *rows: np.stack(rows),
                               *[root_history(b) for b in boards])
        size = len(batch) // len(batch.shards)
        shards = list(batch.shards)
        fresh: list[tuple[int, int, np.ndarray]] = []  # (shard, row, key)
        for k in range(len(shards)):
            part = slice(k * size, (k + 1) * size)
            shards[k], ok, keys = _advance(
                shards[k], jax.device_put(np.asarray(indices[part])),
                jax.device_put(np.array(plies[part], np.int32)),
                jax.tree.map(lambda a, part=part: a[part], history))
            ok, keys = jax.device_get((ok, keys))
            fresh += [(k, int(r), keys[r]) for r in np.nonzero(~ok)[0]]
            moved = ok & (np.array(plies[part]) >= 0)
            shards[k] = self._mate_check_roots(shards[k], moved, boards[part])
        if fresh:
            with self._lock:
                net_params = self._net_params(params)
            for k in sorted({f[0] for f in fresh}):
                rows = np.array([r for s, r, _ in fresh if s == k])
                config = jax.tree.map(lambda a, rows=rows: a[rows],
                                      jax.device_get(shards[k].params))
                shards[k] = self._start(shards[k], rows, [boards[k * size + r] for r in rows],
                                        config, np.stack([key for s, _, key in fresh if s == k]),
                                        net_params)
        if batch.move_filters is not None:  # a move filter belongs to its search: dropped
            for k in range(len(shards)):
                p = shards[k].params
                keep = untouched[k * size:(k + 1) * size]
                avoid, allowed, until = (np.asarray(x) for x in jax.device_get(
                    (p.move_avoid, p.move_allowed, p.move_allow_until)))
                shards[k] = shards[k].replace(params=p.replace(
                    move_avoid=jax.device_put(np.where(keep[:, None, None], avoid, 0)),
                    move_allowed=jax.device_put(np.where(keep[:, None, None], allowed, False)),
                    move_allow_until=jax.device_put(np.where(keep, until, 0))))
        filters = (None if batch.move_filters is None else tuple(
            f if keep else None for f, keep in zip(batch.move_filters, untouched, strict=True)))
        return SearchBatch(tuple(boards), tuple(shards),
                           budget=np.where(untouched, batch.budget, 0),
                           search_time_s=np.where(untouched, batch.search_time_s, 0.0),
                           move_filters=filters if filters and any(filters) else None)

    def _mate_check_roots(self, state: SearchState, rows: np.ndarray,
                          boards: Sequence[chess.Board]) -> SearchState:
        """The mate check at kept roots after ``advance`` (``rows`` bool [B]): as at a new
        root (``prepare_roots``), a mating move, else a check that forces mate in two,
        gets one-hot search priors."""
        rows = rows & np.asarray(jax.device_get(state.params.mate_check))
        if not rows.any():
            return state
        slots = np.full(len(rows), -1, np.int32)
        for r in np.nonzero(rows)[0]:
            # the root's edges list its legal moves in ascending index, as the rules do
            slots[r] = root_mate_slot(boards[r])
        if not (slots >= 0).any():
            return state
        return _one_hot_roots(state, jax.device_put(np.asarray(slots)))

    def _start(self, state: SearchState, slots: np.ndarray, boards: list[chess.Board],
               params: SearchParams, keys: np.ndarray, net_params: Any) -> SearchState:
        """Evaluate ``boards``' roots and write them into ``slots`` of ``state``."""
        size = state.tree.batch_size
        count = len(boards)
        roots = self.prepare_roots(boards, keys, np.asarray(params.mate_check))
        pad = size - count
        if pad:  # unused rows (index ``size``: written nowhere)
            roots, params = jax.tree.map(
                lambda a: np.concatenate([a, np.repeat(a[:1], pad, axis=0)]),
                (roots, jax.device_get(params)))
        rows = size * self.leaves_per_step
        net = _root_inputs(roots, params, np.int32(count), rows=rows)
        outputs = self._network(_bucket(rows, count))(net_params, net)
        index = np.full(size, size, np.int32)
        index[:count] = slots
        return _write_roots(state, index, roots, params, outputs)

    def prepare_roots(self, boards: Sequence[chess.Board], keys: np.ndarray,
                      mate_check: np.ndarray | None = None) -> RootInputs:
        """Host side of init: root positions, legal moves, history (the rules backend's
        ``roots``); ``keys`` uint32 [B, 2] (``batch_keys``) seed each tree's random choices;
        ``mate_check`` bool [B]: the roots searched for a mating move
        (``SearchConfig.mate_check``)."""
        roots = self.rules.roots(boards, mate_check)
        return RootInputs(  # numpy: the programs take it as is (no device op per field)
            position=roots.position, legal=roots.legal, num_legal=roots.num_legal,
            status=roots.status, history=roots.history, rng_key=np.asarray(keys, np.uint32),
            mate_slot=roots.mate_slot)

    def run(self, batch: SearchBatch, num_simulations: int | Sequence[int],
            time_limit_s: float | None = None,
            progress: Callable[[int, int], None] | None = None,
            params: Any = None,
            observe: Callable[[list[SearchState]], bool] | None = None) -> SearchBatch:
        """Continue the trees for ``num_simulations`` more simulations (resumable).

        ``num_simulations`` is one count for all trees or one per tree (trees that are
        done take no more host work or network rows while the others go on). With
        ``time_limit_s`` the run also returns once that much wall time has passed (checked
        between steps; the leaves in flight are finished first). ``progress(done, total)``
        is called between steps with the simulations started so far and requested, over
        the batch. ``params``: the network parameters for the new leaves (default
        ``model.params``; same shapes, no recompilation). ``observe(shards)`` is called
        between steps with the shards' latest states, for a reader that follows the search
        without stopping it (``zerochess.search.view``; it must not keep or donate them);
        True ends the run as the time limit does. The trees are updated in place: use the
        returned batch, not ``batch``.
        """
        if not isinstance(batch, SearchBatch):
            raise ConfigError(f"batch must be a SearchBatch (Searcher.init), got {quote(batch)}")
        batch.check_live()
        counts = simulation_counts(num_simulations, len(batch))
        if time_limit_s is not None:
            time_limit_s = as_real(time_limit_s, "time_limit_s", 0.0)
        if progress is not None and not callable(progress):
            raise ConfigError(f"progress must be callable, got {quote(progress)}")
        start = time.perf_counter()
        deadline = None if time_limit_s is None else start + time_limit_s
        sims = np.concatenate(jax.device_get([s.tree.simulations for s in batch.shards]))
        over = sims + counts > MAX_INT32
        if over.any():
            i = int(np.argmax(over))
            raise ConfigError(
                f"num_simulations: tree {i} has run {int(sims[i]):,} simulations; "
                f"{int(counts[i]):,} more would pass the limit of {MAX_INT32:,} per tree")
        budget = sims + counts
        with self._lock:
            net_params = self._net_params(params)
            states, stats = self.driver.run(list(batch.shards), budget, self.max_nodes,
                                            net_params, deadline, progress, observe)
            # Wait here: a caller reading results, or the interpreter exiting, must not find
            # the device still writing these trees.
            states = jax.block_until_ready(states)
        self.last_run = stats
        spent = batch.search_time_s + np.where(counts > 0, time.perf_counter() - start, 0.0)
        return SearchBatch(batch.boards, tuple(states), budget=budget, search_time_s=spent,
                           move_filters=batch.move_filters)

    def warmup(self, batch_size: int = 1, tree_reuse: bool = False,
               read_results: bool = True) -> None:
        """Compile (or load) every program a search of ``batch_size`` trees runs, so that
        no timed search waits for one: init and reset (the root evaluation at every batch
        size a refill of 1..``batch_size`` trees uses), steps at every evaluation batch
        size (``loop.network_buckets``), a step whose only leaf ends the game (it needs
        no network), ``results`` (unless not ``read_results``: a caller with reads of its
        own), and with ``tree_reuse`` ``advance`` (or later: ``precompile_advance``). Both
        engines (UCI, analysis) warm up through this method.
        """
        batch_size = as_count(batch_size, "batch_size", 1, MAX_INT32)
        start = chess.Board()
        batch = self.init([start] * batch_size, SearchConfig(), seed=[0] * batch_size,
                          move_filters=[MoveFilter(allow=list(start.legal_moves)[:2])]
                          + [None] * (batch_size - 1))
        size = batch_size // len(batch.shards)
        rows = size * self.leaves_per_step
        for count in sorted({min(size, b) for b in loop.network_buckets(rows)}):
            slots = [k * size + i for k in range(len(batch.shards)) for i in range(count)]
            batch = self.reset(batch, slots, [start] * len(slots), seeds=0)
        # steps: growing searches on growing sets of trees until every bucket has run
        wanted = set(loop.network_buckets(rows))
        for bucket in sorted(wanted):
            trees = min(size, -(-bucket // self.leaves_per_step))
            sims = 1
            while (bucket not in self._step_rows and sims <= self.max_nodes // 2
                   and sims <= 4 * self.leaves_per_step):
                slots = [k * size + i for k in range(len(batch.shards)) for i in range(trees)]
                batch = self.reset(batch, slots, [start] * len(slots), seeds=0)
                counts = np.zeros(batch_size, np.int64)
                counts[slots] = sims
                batch = self.run(batch, counts)
                sims *= 2
        # a step whose only leaf ends the game (the only move, Kxd2, leaves bare kings)
        batch = self.reset(batch, [0], [chess.Board("3k4/8/8/8/8/8/3q4/3K4 w - - 0 1")], seeds=0)
        counts = np.zeros(batch_size, np.int64)
        counts[0] = 2
        batch = self.run(batch, counts)
        batch = self.run(self.reset(batch, [0], [start], seeds=0), 8)
        if read_results or tree_reuse:
            self.results(batch)
        if tree_reuse:
            move = self.results(batch)[0].best_move
            self.advance(batch, [[move]] + [None] * (batch_size - 1))

    def precompile_advance(self, batch: SearchBatch) -> None:
        """Compile (or load) the programs ``advance`` runs on ``batch``'s trees without
        running them (only the arrays' shapes are read: another thread may be searching
        them), so that a later ``advance`` compiles nothing."""
        shard = program_store.abstract(batch.shards[0])
        size = len(batch) // len(batch.shards)
        history = program_store.abstract(jax.tree.map(
            lambda *rows: np.stack(rows), *[root_history(chess.Board())] * size))
        _advance.precompile(shard, jax.ShapeDtypeStruct((size, reroot.MAX_PLIES), np.int16),
                            jax.ShapeDtypeStruct((size,), np.int32), history)
        _one_hot_roots.precompile(shard, jax.ShapeDtypeStruct((size,), np.int32))

    def results(self, batch: SearchBatch) -> list[SearchResult]:
        """Per-position results (host numpy); can be read between ``run`` calls."""
        if not isinstance(batch, SearchBatch):
            raise ConfigError(f"batch must be a SearchBatch (Searcher.init), got {quote(batch)}")
        batch.check_live()
        size = len(batch) // len(batch.shards)
        out: list[SearchResult] = []
        for i, state in enumerate(batch.shards):
            # the continuations of the visited moves: at most N - 1 (each line is a
            # best-child pick per ply over K edges; all K rows cost K * K * length)
            read = jax.device_get(view.read_trees(
                state, view.best_rows(size, min(K, self.max_nodes - 1))))
            part = slice(i * size, (i + 1) * size)
            out += results_from_view(list(batch.boards[part]), read, batch.search_time_s[part])
        # lc0 shows a searchmoves search's searched moves only
        return [restrict_result(r, batch.move_filter(i)) for i, r in enumerate(out)]

    def search(self, boards: Sequence[chess.Board],
               configs: SearchConfig | Sequence[SearchConfig] = SearchConfig(),
               num_simulations: int = 800, seed: int = 0,
               time_limit_s: float | None = None, params: Any = None) -> list[SearchResult]:
        """init + run + results in one call."""
        batch = self.init(boards, configs, seed, params)
        return self.results(self.run(batch, num_simulations, time_limit_s, params=params))


def _init_signature() -> inspect.Signature:
    """``Searcher.__init__``'s signature with ``SearcherSettings``' fields as keywords, for
    ``help`` and for callers that read which arguments it takes (the UCI options)."""
    own = list(inspect.signature(Searcher.__init__).parameters.values())[:3]
    return inspect.Signature(own + [
        inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                          annotation=f.type) for f in dataclasses.fields(SearcherSettings)])


Searcher.__init__.__signature__ = _init_signature()  # type: ignore[attr-defined]


def _bucket(rows: int, count: int) -> int:
    return next(b for b in loop.network_buckets(rows) if b >= count)


def _per_tree(configs: SearchConfig | Sequence[SearchConfig], count: int) -> list[SearchConfig]:
    if isinstance(configs, SearchConfig):
        return [configs] * count
    if not isinstance(configs, Sequence | Iterable) or isinstance(configs, str | dict):
        raise ConfigError(f"configs must be a SearchConfig or a list of them, got "
                          f"{quote(configs)}")
    configs = list(configs)
    if len(configs) != count:
        raise ConfigError(f"{len(configs)} configs for {count} positions")
    for i, cfg in enumerate(configs):
        if not isinstance(cfg, SearchConfig):
            raise ConfigError(f"configs[{i}] must be a SearchConfig, got {quote(cfg)}")
    return configs


def _prepare_state(state: SearchState, cache, leaves, expansion, history_length: int):
    return step.prepare(state.tree, state.params, cache, leaves, expansion, history_length)


# The device programs, shared by every Searcher (cached per static argument and shape, in
# memory and on disk: ``zerochess.program_store``). The arrays a program changes are
# donated (the trees are updated in place) and only those are passed back
# (``StateProgram``).
_empty = Program(loop.empty_state, static_argnums=(1, 2))
_root_inputs = Program(loop.root_net_inputs, static_argnames="rows")
_write_roots = StateProgram(loop.write_roots)
_select = StateProgram(loop.select, static_argnames=("num_leaves",))
_prepare = Program(_prepare_state, static_argnames="history_length")
_network = Program(step.network, static_argnums=(0,), static_argnames="rows")
_evaluate = Program(loop.evaluate, static_argnames=("apply_fn", "rows", "history_length"))
_finish = StateProgram(loop.finish_only, donate=(0,))
_run_steps = Program(compiled.run_steps, static_argnames=(
    "apply_fn", "num_leaves", "history_length", "buckets", "expand_fn"), donate_argnums=(0, 1))
_advance = StateProgram(reroot.advance_state)


@program
def _one_hot_roots(state: SearchState, slots: jax.Array) -> SearchState:
    """Root search priors one-hot on ``slots`` [B] (-1: unchanged); the root's edges are
    the first K pool entries (``write_roots``, ``reroot``)."""
    hot = (jnp.arange(K)[None, :] == slots[:, None])
    mask = (slots >= 0)[:, None]
    tree = state.tree
    prior = tree.edges.prior
    root = jnp.where(mask, hot.astype(prior.dtype), prior[:, :K])
    return state.replace(tree=tree.replace(
        root_prior=jnp.where(mask, hot.astype(tree.root_prior.dtype), tree.root_prior),
        edges=tree.edges.replace(prior=prior.at[:, :K].set(root))))
_finish_select = StateProgram(loop.finish_select, static_argnames=("num_leaves",),
                              donate=(0,))


def simulation_counts(num_simulations: object, batch: int) -> np.ndarray:
    """int64 [batch] from one count or one per tree (each an integer in [0, 2**31))."""
    if isinstance(num_simulations, str) or not isinstance(num_simulations, Iterable):
        return np.full(batch, as_count(num_simulations, "num_simulations", 0, MAX_INT32),
                       np.int64)
    counts = [as_count(c, f"num_simulations[{i}]", 0, MAX_INT32)
              for i, c in enumerate(num_simulations)]
    if len(counts) != batch:
        raise ConfigError(f"{len(counts)} simulation counts for {batch} trees")
    return np.array(counts, np.int64)


# SearchBatch, the memory check, the tree keys and the settings live in their own modules
# (batch, memory, tree_keys, settings); their old import path through this module keeps working
__all__ = ["MAX_LEAVES", "MAX_NODES", "MoveFilter", "NoLegalMovesError", "SearchBatch", "Searcher",
           "SearcherSettings", "batch_keys", "check_tree_memory", "check_workers", "memory_bytes",
           "simulation_counts", "tree_key", "tree_keys"]
