"""One search (B = 1) over ``Searcher``: the UCI engine's only seam to the search core."""

from __future__ import annotations

import collections
import dataclasses
import functools
import time
from collections.abc import Callable

import chess
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.encoding import encode_board
from zerochess.chess.expander import MIN_ROWS_PER_WORKER, Expander
from zerochess.chess.policy_map import index_to_move, legal_move_indices
from zerochess.neural.model import Model
from zerochess.program_store import Program, abstract, preloading
from zerochess.search import view
from zerochess.search.api import SearchBatch, Searcher
from zerochess.search.config import SearchConfig
from zerochess.search.move_filter import MoveFilter, restrict_result
from zerochess.search.results import SearchResult, results_from_view
from zerochess.search.tree import K
from zerochess.uci.options import MAX_CACHE_ENTRIES

PV_LENGTH = 24  # plies of each continuation read after a root move
RAMP_SIMULATIONS = 8  # a search's first simulations run in groups of RAMP_LEAVES leaves
RAMP_LEAVES = 4


def _policy_logits_of(apply_fn, params, planes):
    return apply_fn(params, planes).policy_logits


_policy_logits = Program(_policy_logits_of, static_argnums=0)


def rows_bucket(count: int) -> int:
    """Compiled numbers of PV rows: 1, 8, or every slot."""
    return 1 if count <= 1 else 8 if count <= 8 else K


class SearchDriver:
    """A B = 1 search of one position for the UCI engine.

    Args:
      model: the network.
      max_nodes: tree capacity (compile-time shape).
      workers: host move-generation processes (the ``Threads`` option; 0 = auto).
      searcher_kwargs: extra ``Searcher`` arguments (``options.core_settings``).
    """

    def __init__(self, model: Model, max_nodes: int, workers: int = 0,
                 searcher_kwargs: dict | None = None) -> None:
        searcher_kwargs = dict(searcher_kwargs or {})
        if "cache_size" in searcher_kwargs:
            # an entry holds K float16 priors (~460 bytes): lc0's 2M-entry default would
            # take ~0.9 GB of device memory, so the cache is capped at MAX_CACHE_ENTRIES
            searcher_kwargs["cache_size"] = min(int(searcher_kwargs["cache_size"]),
                                                MAX_CACHE_ENTRIES)
        leaves = int(searcher_kwargs.get("leaves_per_step", 1))
        # One leaf per step never fills a worker's minimum chunk: expand inline unless the
        # user asked for workers and steps are large enough to use them.
        if workers <= 0 or leaves < 2 * MIN_ROWS_PER_WORKER:
            workers = 0
        self.model = model
        self.max_nodes = int(max_nodes)
        # the programs a warm-up of these settings loads (``preloading``'s manifest tag)
        self._warmup_tag = (f"uci-warmup {model.name} nodes={self.max_nodes} "
                            f"workers={workers} {sorted(searcher_kwargs.items())}")
        self.searcher = Searcher(model, max_nodes=self.max_nodes, expander=Expander(workers),
                                 shards=1, **searcher_kwargs)
        self.batch: SearchBatch | None = None
        self.board: chess.Board | None = None
        self.config = SearchConfig()
        self.reused_visits = 0  # root visits kept from the last search (tree reuse)
        self.moves: list[chess.Move] = []  # the root's legal moves, slot order
        self._filter: MoveFilter | None = None  # searchmoves of the current search
        self._rows = 1
        self._compiled: set[int] = set()  # PV row counts whose read is compiled
        self._live = None  # the latest state while ``search`` runs
        self._reads: collections.OrderedDict[int, tuple[SearchResult, dict]] = (
            collections.OrderedDict())
        self.ms_per_start = 50.0  # running estimates (a tree ready; a step)
        self.ms_per_step = 20.0
        self._policy_fn = functools.partial(_policy_logits, model.apply)
        self._shapes: SearchBatch | None = None  # a tree's shapes (``warmup``)
        # compiled yet (``warmup_rest``): until then a continued game starts a new tree and
        # a time-trouble move is the root's best prior (no search waits for a compile)
        self.reuse_ready = False
        self.policy_ready = False

    # -- lifecycle -----------------------------------------------------------------------

    def warmup(self, multipv: int = 1, progress: Callable[[str], None] | None = None,
               defer: bool = False) -> None:
        """Compile (or load) everything a search runs and time a start and a step: first
        what every search needs (``Searcher.warmup``: the root, the steps at every network
        batch size; the reads of ``multipv`` lines), then (``warmup_rest``) what only some
        searches need: tree reuse, the network alone (time-trouble moves), the reads of 8
        lines. ``defer``: return after the first part; the caller runs ``warmup_rest``
        (e.g. in a background thread: until it is done a continued game starts a new tree
        and a time-trouble move comes from the root's priors, so no search waits for a
        compile). ``progress``: called with a short text as each stage starts. Programs
        stored on disk by an earlier warm-up of these settings are loaded in parallel
        threads."""
        say = progress or (lambda _text: None)
        with preloading(f"{self._warmup_tag} multipv={multipv}"):
            say("the search's steps and roots")
            self.searcher.warmup(1, read_results=False)
            say("the root's read")
            board = chess.Board()
            t0 = time.perf_counter()
            self.start(board, SearchConfig(), 0)
            self.ms_per_start = (time.perf_counter() - t0) * 1000.0
            self.prepare(multipv)
            self.search(16, None, lambda _: False)
            self.result()
            # the shapes of a tree, for compiling what is left without touching one
            self._shapes = dataclasses.replace(
                self.batch, shards=tuple(abstract(x) for x in self.batch.shards))
            self.forget()  # a search never continues the warm-up's
        if not defer:
            self.warmup_rest(progress)

    def warmup_rest(self, progress: Callable[[str], None] | None = None) -> None:
        """What only some searches run, compiled (or loaded) without running it, so that a
        search thread may search meanwhile: tree reuse (``Searcher.advance``), the network
        alone (``policy_move``), the reads of 8 lines (``MultiPV`` 2-8). ``warmup`` first."""
        say = progress or (lambda _text: None)
        if self._shapes is None:
            raise RuntimeError("warmup_rest before warmup")
        with preloading(f"{self._warmup_tag} rest"):
            say("tree reuse")
            self.searcher.precompile_advance(self._shapes)
            # and the small operations a kept tree's new stopper settings run (on zeros of
            # a tree's parameters' shapes: the same operations, no tree touched)
            zeros = jax.tree.map(lambda x: jnp.zeros(x.shape, x.dtype),
                                 self._shapes.shards[0].params)
            jax.block_until_ready(_with_kld(zeros, SearchConfig()))
            self.reuse_ready = True
            say("the network alone (time-trouble moves)")
            planes = jax.ShapeDtypeStruct((1, *encode_board(chess.Board()).shape), jnp.float32)
            _policy_logits.precompile(self.model.apply, self.model.params, planes)
            self.policy_ready = True
            say("the reads of 8 lines")
            rows = jax.ShapeDtypeStruct((1, 8), jnp.int32)
            view.read_trees.precompile(self._shapes.shards[0], rows, PV_LENGTH)
            self._compiled.add(8)

    def prepare(self, multipv: int) -> None:
        """Compile the reads of ``multipv`` lines if they are not yet (outside searches)."""
        self._rows = rows_bucket(min(max(multipv, 1), K))
        if self._rows in self._compiled:
            return
        state = (self.batch.shards[0] if self.batch is not None
                 else self.searcher.init([chess.Board()], SearchConfig()).shards[0])
        jax.block_until_ready(view.read_trees(state, view.best_rows(1, self._rows), PV_LENGTH))
        self._compiled.add(self._rows)

    def start(self, board: chess.Board, config: SearchConfig, seed: int,
              allow: list[chess.Move] | None = None) -> None:
        """The tree for ``board`` (its move stack is the game history): the last search's
        tree moved down the moves played since (``Searcher.advance``, lc0's tree reuse)
        when ``board`` continues that search's game with the same search settings and no
        ``searchmoves``, else a new tree. ``reused_visits`` says how many root visits were
        kept (0 for a new tree). A new tree is written over the last one (``Searcher.reset``:
        the same tree as ``init``'s, without allocating one, which at the default size
        costs more than the rest of a start)."""
        t0 = time.perf_counter()
        played = self._continuation(board, config, allow)
        if played is not None:
            assert self.batch is not None
            self.batch = self.searcher.advance(self.batch, [played])
            self._set_kld(config)
            self._filter = None
        else:
            filters = [MoveFilter(allow=allow)] if allow else None
            if self.batch is None:
                self.batch = self.searcher.init([board], config, seed, move_filters=filters)
            else:  # the tree's arrays are rewritten in place: no new tree to allocate
                self.batch = self.searcher.reset(self.batch, [0], [board], config, seed,
                                                 move_filters=filters)
            self._filter = filters[0] if filters else None
        self.config = config
        self.board = board.copy()
        self._read_root()
        elapsed = (time.perf_counter() - t0) * 1000.0
        self.ms_per_start = 0.7 * self.ms_per_start + 0.3 * elapsed

    def _continuation(self, board: chess.Board, config: SearchConfig,
                      allow: list[chess.Move] | None) -> list[chess.Move] | None:
        """The moves from the last search's root to ``board`` when its tree can be reused."""
        old = self.board
        if (self.batch is None or old is None or allow or not self.reuse_ready
                or _tree_key(config) != _tree_key(self.config)):
            return None
        if board.root() != old.root() or board.chess960 != old.chess960:
            return None
        n = len(old.move_stack)
        if board.move_stack[:n] != old.move_stack:
            return None
        played = board.move_stack[n:]
        if not played and self._filter is not None:
            return None  # the root's search was restricted to searchmoves
        return played

    def _set_kld(self, config: SearchConfig) -> None:
        """The KLD-gain stopper's settings of ``config`` in a kept tree's parameters (they
        change between pondering and thinking without changing the tree)."""
        assert self.batch is not None
        state = self.batch.shards[0]
        params = _with_kld(state.params, config)
        self.batch = dataclasses.replace(self.batch, shards=(state.replace(params=params),))

    def _read_root(self) -> None:
        """The root's legal moves (slot order) and the reused visits, from the tree."""
        assert self.batch is not None and self.board is not None
        tree = self.batch.shards[0].tree
        num_legal, moves, reused = jax.device_get(
            (tree.num_legal[0, 0], tree.edges.move[0, :K], tree.stats.reused_visits[0]))
        self.moves = [index_to_move(self.board, int(i)) for i in moves[:int(num_legal)]]
        self.reused_visits = int(reused)

    def forget(self) -> None:
        """Drop the kept tree: the next search starts a new one (``ucinewgame``)."""
        self.batch = None
        self.board = None

    def clear_cache(self) -> None:
        """Empty the evaluation cache (lc0 clears its NNCache on ``ucinewgame``)."""
        self.searcher.clear_cache()

    @property
    def floor_ms(self) -> float:
        """The least a search costs: a tree ready, two steps (the first playouts)."""
        return self.ms_per_start + 2 * self.ms_per_step

    def policy_move(self, board: chess.Board) -> chess.Move:
        """The network's most likely legal move, without a search (one forward pass; until
        ``warmup_rest`` has compiled that, the root's highest search prior from a new
        tree, which needs no compile)."""
        if not self.policy_ready:
            self.start(board, SearchConfig(), 0)
            res = self.result(pvs=False)
            return res.moves[int(np.argmax(res.prior))]
        moves, indices = legal_move_indices(board)
        planes = jnp.asarray(encode_board(board)[None], jnp.float32)
        logits = np.asarray(self._policy_fn(self.model.params, planes))[0]
        return moves[int(np.argmax(logits[indices.astype(np.int64)]))]

    def advance(self, move: chess.Move) -> None:
        """Move the root into ``move``'s subtree, keeping it (lc0 tree reuse, ponderhit)."""
        assert self.board is not None
        board = self.board.copy()
        board.push(move)
        self.start(board, self.config, 0)

    # -- searching and reading -----------------------------------------------------------

    def search(self, simulations: int, time_limit_s: float | None,
               on_step: Callable[[SearchResult], bool]) -> None:
        """Up to ``simulations`` more simulations, ``time_limit_s`` seconds (None: no
        limit), until ``on_step`` returns True. ``on_step`` gets the root's read of the
        step before (``result(pvs=False)``'s picture, ``pvs`` decoded on demand by
        ``pvs``); after the stop the groups in flight are finished."""
        assert self.batch is not None
        if simulations <= 0:
            return
        rows = jnp.asarray(view.best_rows(1, self._rows))
        pending: list = []
        steps = [0, time.perf_counter()]

        def observe(shards) -> bool:
            self._live = shards[0]  # what ``result`` reads while the search runs
            read = view.read_trees(shards[0], rows, PV_LENGTH)  # dispatched, not awaited
            pending.append(read)
            steps[0] += 1
            if len(pending) < 2:
                return False
            return bool(on_step(self._result(jax.device_get(pending.pop(0)), pvs=False)))

        t0 = time.perf_counter()
        deadline = None if time_limit_s is None else t0 + time_limit_s
        stopped = [False]

        def watch(shards) -> bool:
            stopped[0] = stopped[0] or observe(shards)
            return stopped[0]

        def left() -> float | None:
            return None if deadline is None else max(deadline - time.perf_counter(), 0.0)

        try:
            ramp = min(simulations, RAMP_SIMULATIONS)
            if self.searcher.leaves_per_step > RAMP_LEAVES and ramp < simulations:
                # the first playouts land early: a couple of small groups (a network batch
                # of RAMP_LEAVES rows) before the full-size ones
                width = self.batch.shards[0].params.minibatch_size
                self._set_width(jnp.full_like(width, RAMP_LEAVES))
                try:
                    self.batch = self.searcher.run(self.batch, ramp, time_limit_s=left(),
                                                   observe=watch)
                finally:
                    self._set_width(width)
                simulations -= ramp
            if not stopped[0]:
                self.batch = self.searcher.run(self.batch, simulations, time_limit_s=left(),
                                               observe=watch)
        except BaseException:
            self.forget()  # the run's trees are lost (updated in place): start afresh
            raise
        finally:
            self._live = None
        if steps[0] > 1:
            per_step = (time.perf_counter() - t0) * 1000.0 / steps[0]
            self.ms_per_step = 0.7 * self.ms_per_step + 0.3 * per_step

    def _set_width(self, width: jax.Array) -> None:
        """Leaves per group of the next steps (``SearchParams.minibatch_size`` [1]: data;
        0 = the searcher's ``leaves_per_step``)."""
        assert self.batch is not None
        state = self.batch.shards[0]
        params = state.params.replace(minibatch_size=width)
        self.batch = dataclasses.replace(self.batch, shards=(state.replace(params=params),))

    def result(self, rows: list[int] | None = None, pvs: bool = True) -> SearchResult:
        """The tree's root picture now, with the continuations of the root moves in slots
        ``rows`` (default: the ``multipv`` best); inside ``search``'s ``on_step``, the
        latest state's (it waits for the step in flight)."""
        assert self.batch is not None
        if rows is None:
            read_rows = view.best_rows(1, self._rows)
        else:
            bucket = rows_bucket(len(rows))
            read_rows = np.asarray([(list(rows) + [rows[0]] * bucket)[:bucket]], np.int32)
        state = self._live if self._live is not None else self.batch.shards[0]
        read = jax.device_get(view.read_trees(state, read_rows, PV_LENGTH))
        return self._result(read, pvs)

    def _result(self, read: dict[str, np.ndarray], pvs: bool) -> SearchResult:
        assert self.board is not None
        res = results_from_view([self.board], read, moves=[self.moves], pvs=pvs)[0]
        res = restrict_result(res, self._filter)
        self._reads[id(res)] = (res, read)
        while len(self._reads) > 4:  # the last few pictures (the engine's threads use them)
            self._reads.popitem(last=False)
        return res

    def pvs(self, result: SearchResult) -> SearchResult:
        """``result`` (one of the last pictures read) with the continuations it read
        decoded; never reads the device (any thread may call it)."""
        last, read = self._reads.get(id(result), (None, None))
        if result is not last or any(result.pvs):
            return result
        full = restrict_result(results_from_view([self.board], read, moves=[self.moves])[0],
                               self._filter)
        return dataclasses.replace(result, pvs=full.pvs, pv_visits=full.pv_visits)


def _with_kld(params, config: SearchConfig):
    """``params`` (``SearchParams`` [1]) with the KLD-gain stopper's settings of ``config``."""
    return params.replace(
        kld_min_gain=jnp.full_like(params.kld_min_gain, config.minimum_kld_gain_per_node),
        kld_interval=jnp.full_like(params.kld_interval,
                                   min(config.kld_gain_average_interval, 2**30)))


def _tree_key(config: SearchConfig) -> SearchConfig:
    """What of a search's settings a kept tree depends on (all but the stoppers')."""
    return dataclasses.replace(config, minimum_kld_gain_per_node=0.0,
                               kld_gain_average_interval=100)


__all__ = ["PV_LENGTH", "SearchDriver", "rows_bucket"]
