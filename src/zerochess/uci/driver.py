"""One search (B = 1) over today's ``Searcher``, driven in chunks: the engine's only seam
to the search core.

Everything the engine needs from the core goes through ``SearchDriver``; every place
where today's core lacks a piece of the engine-facing contract (``notes/SEARCH_API.md``)
is marked ``TODO(core)`` and filled with the closest thing that exists:

- ``Searcher.results`` summarises every node of the fixed tree (O(nodes x 218) per call:
  ~0.3 s at 20k nodes on a busy CPU), too slow to read after every chunk or to answer
  ``stop`` within 50 ms. The driver reads the root, its children and the PVs of the root
  moves with two small jitted functions of its own (cost independent of the tree size)
  and builds the same ``SearchResult``.
- ``go searchmoves`` is the core's root ``MoveFilter(allow=...)``: the tree keeps every
  root edge, the search never selects the others (priors not renormalised, as in lc0's
  root move filter), and the driver shows only the searched moves (``_slots``), as lc0
  does.
- depth / seldepth / v are read from the tree (mean and max depth of its nodes, the
  children's stored network WDL).
- tree reuse: a search whose position continues the last one's game moves the last
  tree down the moves played (``Searcher.advance``), as lc0 always does.
"""

from __future__ import annotations

import dataclasses
import functools
import time

import chess
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.encoding import encode_board
from zerochess.chess.expander import MIN_ROWS_PER_WORKER, Expander
from zerochess.chess.policy_map import index_to_move, legal_move_indices
from zerochess.chess.rules import GameStatus
from zerochess.neural.model import Model
from zerochess.program_store import Program, preloading, program
from zerochess.search.api import SearchBatch, Searcher
from zerochess.search.config import SearchConfig
from zerochess.search.loop import network_buckets
from zerochess.search.move_filter import MoveFilter
from zerochess.search.results import SearchResult, best_child_slot, decode_line, move_order
from zerochess.search.tree import K, NodeEdges, Tree, node_edges, proven_lost
from zerochess.uci.options import MAX_CACHE_ENTRIES

PV_LENGTH = 24  # plies of each root move's continuation read for the PV


@dataclasses.dataclass
class Progress:
    """Cheap counters after a chunk (host numpy; arrays over the root's moves, slot order).

    ``wl``/``d`` are each move's W-L and D from the root side to move (0 if unvisited).
    """

    visits: np.ndarray  # int64 [M]
    wl: np.ndarray  # float64 [M]
    d: np.ndarray  # float64 [M]
    mates: np.ndarray  # bool [M]: the move mates (a proven win for the root side)
    root_visits: int  # root N, its own evaluation included (= lc0 nodes)
    root_wl: float  # root side's view
    root_d: float
    simulations: int
    tree_nodes: int
    depth_sum: int  # sum of node depths (root 0): the depths of all new leaves so far
    max_depth: int
    nn_evals: int = 0  # positions the network evaluated in this tree's search
    cache_hits: int = 0  # positions the evaluation cache answered (NNCacheSize > 0)
    lost: np.ndarray | None = None  # bool [M]: the move is proven to lose (its P is cleared)
    bounds: np.ndarray | None = None  # int8 [M, 2]: (lower, upper) of each move, root side
    plies: np.ndarray | None = None  # int [M]: plies to the game's end of a proven move

    @property
    def won(self) -> np.ndarray:
        """bool [M]: the move is proven to win for the root side (a mate, or certainty
        propagation)."""
        if self.bounds is None:
            return self.mates.astype(bool)
        return self.mates.astype(bool) | ((self.visits > 0) & (self.bounds[:, 0] == 1))

    @property
    def proven_lost(self) -> np.ndarray:
        """bool [M]: the move is proven to lose for the root side."""
        if self.lost is None:
            return np.zeros(len(self.visits), bool)
        return self.lost.astype(bool)

    @property
    def average_depth(self) -> int:
        return self.depth_sum // max(self.tree_nodes - 1, 1)

    def order(self, prior: np.ndarray, draw_score: float) -> np.ndarray:
        q = np.where(self.visits > 0, self.wl + draw_score * self.d, np.nan)
        return move_order(self.visits, q, prior, self.won, self.proven_lost,
                          np.zeros(len(self.visits), np.int64) if self.plies is None
                          else self.plies)


@dataclasses.dataclass
class EngineView:
    """A ``SearchResult`` plus what the UCI output needs beyond it (contract fields that
    today's result lacks; NaN / zeros where the core has no data yet)."""

    result: SearchResult
    v: np.ndarray  # [M] the child's raw network value (root side), NaN if unvisited
    in_flight: np.ndarray  # [M] visits in flight; TODO(core): multi-leaf gathering
    m: np.ndarray  # [M] moves left; TODO(core): moves-left head in the tree (NaN)
    nn_index: np.ndarray  # [M] lc0 1858 policy index of each move
    depth: int
    seldepth: int
    tree_nodes: int


def _edges(tree: Tree, nodes: jax.Array) -> NodeEdges:
    """The edges of ``nodes`` [R] of one tree (no batch axis): [R, K] arrays."""
    return jax.vmap(lambda n: node_edges(tree, n))(nodes)


def _child_stats(tree: Tree, nodes: jax.Array) -> dict[str, jax.Array]:
    """Children of ``nodes`` [R] of one tree (no batch axis): [R, K] arrays. Bounds are
    the mover-into-child's (the root side's for the root's children); (-1, 1) unvisited."""
    children = _edges(tree, nodes).child
    safe = jnp.maximum(children, 0)
    exists = children >= 0
    visits = jnp.where(exists, tree.visits[safe], 0)
    visited = exists & (visits > 0)
    return dict(visits=visits,
                wl_sum=jnp.where(exists, tree.wl_sum[safe], 0.0),
                d_sum=jnp.where(exists, tree.d_sum[safe], 0.0),
                mate=visited & (tree.status[safe] == GameStatus.CHECKMATE),
                lost=proven_lost(tree, children),
                lower=jnp.where(visited, tree.lower[safe], -1),
                upper=jnp.where(visited, tree.upper[safe], 1),
                plies=jnp.where(exists, tree.plies[safe], 0))


def _best_slot(tree: Tree, nodes: jax.Array, draw_score: jax.Array) -> jax.Array:
    """lc0's best child slot of each of ``nodes`` [R] (-1: no visited child):
    ``results.best_child_slot`` (proven wins, visits, Q, prior; proven losses last)."""
    return jax.vmap(best_child_slot, in_axes=(None, 0, None))(tree, nodes, draw_score)


def _policy_logits_of(apply_fn, params, planes):
    return apply_fn(params, planes).policy_logits


_policy_logits = Program(_policy_logits_of, static_argnums=0)


@program
def _progress(tree: Tree) -> dict[str, jax.Array]:
    """Root counters of tree 0 (cost O(K) plus one O(N) depth reduction)."""
    t = jax.tree.map(lambda a: a[0], tree)
    root = jnp.zeros((1,), jnp.int32)
    c = _child_stats(t, root)
    used = jnp.arange(t.depth.shape[0]) < t.node_count
    depth = jnp.where(used, t.depth.astype(jnp.int32), 0)
    n_root = jnp.maximum(t.visits[0], 1)
    return dict(visits=c["visits"][0], wl_sum=c["wl_sum"][0], d_sum=c["d_sum"][0],
                mate=c["mate"][0], lost=c["lost"][0], lower=c["lower"][0],
                upper=c["upper"][0], plies=c["plies"][0], num_legal=t.num_legal[0],
                root_visits=t.visits[0],
                root_wl=-t.wl_sum[0] / n_root, root_d=t.d_sum[0] / n_root,
                simulations=t.simulations, node_count=t.node_count,
                depth_sum=depth.sum(), max_depth=depth.max(),
                nn_evals=t.stats.nn_evals, cache_hits=t.stats.cache_hits)


@program(static_argnames="length")
def _lines(tree: Tree, draw_score: jax.Array, rows: jax.Array, length: int) -> dict[str, jax.Array]:
    """Best continuations after the root moves in slots ``rows`` [R] ([R, length] policy
    indices, -1 padded), and the stored network WDL [K, 3] and status [K] of every root
    child. Cost O(R x K x length): independent of the tree size."""
    t = jax.tree.map(lambda a: a[0], tree)
    root = node_edges(t, jnp.int32(0))
    take = jax.vmap(lambda row, i: row[i])

    def ply(cur, _):  # cur [R]: the nodes reached, -1 once a line has ended
        ok = cur >= 0
        safe = jnp.maximum(cur, 0)
        slot = _best_slot(t, safe, draw_score)
        ok &= slot >= 0
        slot = jnp.maximum(slot, 0)
        edges = _edges(t, safe)
        move = jnp.where(ok, take(edges.move, slot), -1)
        return jnp.where(ok, take(edges.child, slot), -1), move

    # a loop, not ``length`` unrolled copies: a program ~30x smaller to compile and load
    _, moves = jax.lax.scan(ply, root.child[rows], None, length=length)  # [length, R]
    root_children = jnp.maximum(root.child, 0)
    return dict(pv=moves.T, raw_wdl=t.raw_wdl[root_children],
                status=t.status[root_children], root_raw_wdl=t.raw_wdl[0])


def _rows_bucket(count: int) -> int:
    """Compiled sizes of the PV row set: 1, 8, or every slot."""
    return 1 if count <= 1 else 8 if count <= 8 else K


class SearchDriver:
    """A B = 1 search of one position that the engine runs in chunks of simulations.

    Args:
      model: the network.
      max_nodes: tree capacity (compile-time shape).
      workers: host move-generation processes (the ``Threads`` option; 0 = auto).
      searcher_kwargs: extra ``Searcher`` arguments the core accepts (``core_settings``).
    """

    # TODO(core): Searcher.advance (issue 11) -> True, and ponder on the parent position.
    supports_tree_reuse = False

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
        self.reused_visits = 0  # root visits kept from the last search (tree reuse)
        self._filtered = False  # the root's moves were cut to searchmoves
        self.moves: list[chess.Move] = []
        self._slots = np.zeros(0, np.int64)
        self._prior = np.zeros(0)
        self._policy = np.zeros(0)
        self._nn_index = np.zeros(0, np.int64)
        self.config = SearchConfig()
        self.ms_per_sim = 5.0  # running estimate (dispatch overhead included)
        self.ms_per_view = 5.0
        self._last_chunk = (1, 0.0)  # (simulations, ms) of the last run()
        self._compiled_rows: set[int] = set()
        self.ms_per_start = 50.0
        self._policy_fn = functools.partial(_policy_logits, model.apply)

    # -- lifecycle -----------------------------------------------------------------------

    def warmup(self, multipv: int = 1) -> None:
        """Compile everything a search runs (init, run, progress, the views a search with
        ``multipv`` lines prints) and time a chunk and a view. Programs stored on disk by
        an earlier warm-up of the same settings are loaded in parallel threads."""
        with preloading(f"{self._warmup_tag} multipv={multipv}"):
            self._warmup(multipv)

    def _warmup(self, multipv: int) -> None:
        self.policy_move(chess.Board())  # compiles the network alone (time-trouble moves)
        board = chess.Board()
        # a searchmoves filter (data: no program of its own) and a 63-bit seed
        self.start(board, SearchConfig(), 2**62 + 1, allow=list(board.legal_moves)[:2])
        self.run(1)
        self.start(board, SearchConfig(), 0)
        self.run(1)  # compiles
        # a leaf that ends the game needs no network rows: its own evaluation program
        # (here the only move, Kxd2, leaves bare kings)
        self.start(chess.Board("3k4/8/8/8/8/8/3q4/3K4 w - - 0 1"), SearchConfig(), 0)
        self.run(2)
        self._warm_network_buckets()
        t0 = time.perf_counter()
        self.start(chess.Board(), SearchConfig(), 0)
        self.ms_per_start = (time.perf_counter() - t0) * 1000.0
        for count in sorted({1, 8, min(multipv, K)}):
            self.view(rows=list(range(min(count, len(self.moves)))))
            self._compiled_rows.add(_rows_bucket(count))
        t0 = time.perf_counter()
        self.batch = self.searcher.run(self.batch, 4)
        elapsed = (time.perf_counter() - t0) * 1000.0
        self.ms_per_sim = elapsed / 4
        self._last_chunk = (4, elapsed)
        t0 = time.perf_counter()
        self.view(rows=list(range(min(multipv, len(self.moves)))))
        self.ms_per_view = (time.perf_counter() - t0) * 1000.0
        # tree reuse (Searcher.advance), then no tree kept: a search never continues
        # the warm-up's
        board = chess.Board()
        board.push(self.moves[0])
        self.start(board, SearchConfig(), 0)
        self.forget()

    def _warm_network_buckets(self) -> None:
        """Run the network at every evaluation batch size a step may use.

        With MinibatchSize > 1 the core compiles its network once per row bucket
        (``network_buckets``: L, L/4, ..., 1), chosen by how many of a step's leaves need
        the network; searches of growing size reach each (collisions make the count of a
        step uncertain, so the sizes are checked, not assumed).
        """
        wanted = set(network_buckets(self.searcher.leaves_per_step))
        simulations = 1
        while (not wanted <= set(self.searcher._networks)
               and simulations <= min(1024, self.max_nodes // 2)):
            self.start(chess.Board(), SearchConfig(), simulations)
            self.run(simulations)
            simulations *= 2

    def prepare(self, multipv: int) -> None:
        """Compile the view for ``multipv`` lines if it is not yet (outside timed searches)."""
        bucket = _rows_bucket(min(multipv, K))
        if bucket not in self._compiled_rows:
            tree = self.batch.state.tree if self.batch is not None else None
            if tree is not None:
                rows = jnp.zeros((bucket,), jnp.int32)
                jax.block_until_ready(_lines(tree, jnp.float32(0.0), rows, PV_LENGTH))
            self._compiled_rows.add(bucket)

    def start(self, board: chess.Board, config: SearchConfig, seed: int,
              allow: list[chess.Move] | None = None) -> None:
        """The tree for ``board`` (its move stack is the game history): the last search's
        tree moved down the moves played since (``Searcher.advance``, lc0's tree reuse)
        when ``board`` continues that search's game with the same search settings and no
        ``searchmoves``, else a new tree. ``reused_visits`` says how many root visits were
        kept (0 for a new tree).
        """
        t0 = time.perf_counter()
        played = self._continuation(board, config, allow)
        if played is not None:
            assert self.batch is not None
            self.batch = self.searcher.advance(self.batch, [played])
            self.config = config
            self.board = board.copy()
            self._filtered = False
            self._read_root()
        else:
            self._new_tree(board, config, seed, allow)
        elapsed = (time.perf_counter() - t0) * 1000.0
        self.ms_per_start = 0.7 * self.ms_per_start + 0.3 * elapsed

    def _continuation(self, board: chess.Board, config: SearchConfig,
                      allow: list[chess.Move] | None) -> list[chess.Move] | None:
        """The moves from the last search's root to ``board`` when its tree can be reused."""
        old = self.board
        if self.batch is None or old is None or allow or config != self.config:
            return None
        if board.root() != old.root() or board.chess960 != old.chess960:
            return None
        n = len(old.move_stack)
        if board.move_stack[:n] != old.move_stack:
            return None
        played = board.move_stack[n:]
        if not played and self._filtered:
            return None  # the root's search was restricted to searchmoves
        return played

    def forget(self) -> None:
        """Drop the kept tree: the next search starts a new one (``ucinewgame``)."""
        self.batch = None
        self.board = None

    def _read_root(self, allow: list[chess.Move] | None = None) -> None:
        """The root's moves, priors and policy, and the reused visits, from the tree; with
        ``allow`` (searchmoves) only those moves are shown (``_slots``: their edge slots)."""
        assert self.batch is not None and self.board is not None
        state = self.batch.shards[0]
        tree = state.tree
        num_legal = int(tree.num_legal[0, 0])
        # the root's edges are the first K entries of the tree's edge pool (a new tree and
        # a rerooted one alike); its priors also live in float32 in ``root_prior``
        indices = np.asarray(tree.edges.move[0, :K])[:num_legal].astype(np.int64)
        moves = [index_to_move(self.board, int(i)) for i in indices]
        slots = np.arange(num_legal)
        if allow:
            wanted = set(allow)
            slots = np.array([s for s, m in enumerate(moves) if m in wanted], np.int64)
        self._slots = slots  # root edge slot of each of ``self.moves``
        self.moves = [moves[s] for s in slots]
        self._nn_index = indices[slots]
        self._prior = np.asarray(state.tree.root_prior[0], np.float64)[slots]
        self._policy = np.asarray(state.root_policy[0], np.float64)[slots]
        self.reused_visits = int(tree.stats.reused_visits[0])

    def _new_tree(self, board: chess.Board, config: SearchConfig, seed: int,
                  allow: list[chess.Move] | None) -> None:
        self.config = config
        self.board = board.copy()
        filters = [MoveFilter(allow=allow)] if allow else None
        self.batch = self.searcher.init([board], config, seed, move_filters=filters)
        self._filtered = bool(allow)
        self._read_root(allow)

    def clear_cache(self) -> None:
        """Empty the evaluation cache (lc0 clears its NNCache on ``ucinewgame``)."""
        self.searcher.clear_cache()

    @property
    def floor_ms(self) -> float:
        """The least a search costs: a new tree, one chunk, the final view."""
        return self.ms_per_start + self.ms_per_view + self.ms_per_sim

    def policy_move(self, board: chess.Board) -> chess.Move:
        """The network's most likely legal move, without a search (one forward pass)."""
        moves, indices = legal_move_indices(board)
        planes = jnp.asarray(encode_board(board)[None], jnp.float32)
        logits = np.asarray(self._policy_fn(self.model.params, planes))[0]
        return moves[int(np.argmax(logits[indices.astype(np.int64)]))]

    def advance(self, move: chess.Move) -> None:
        """Move the root into ``move``'s subtree, keeping it (lc0 tree reuse, ponderhit)."""
        assert self.batch is not None and self.board is not None
        self.batch = self.searcher.advance(self.batch, [[move]])
        self.board = self.board.copy()
        self.board.push(move)
        self._filtered = False
        self._read_root()

    def run(self, simulations: int) -> None:
        """``simulations`` more simulations; updates the chunk timing estimates."""
        assert self.batch is not None
        if simulations <= 0:
            return
        t0 = time.perf_counter()
        # TODO(core): searcher.run(batch, n, time_limit_s=...) (issue 10) for finer stops.
        self.batch = self.searcher.run(self.batch, simulations)
        elapsed = (time.perf_counter() - t0) * 1000.0
        self.ms_per_sim = 0.7 * self.ms_per_sim + 0.3 * elapsed / simulations
        self._last_chunk = (simulations, elapsed)

    def chunk_size(self, target_ms: float, limit: int) -> int:
        """Simulations for a chunk of about ``target_ms`` (at least 1, at most ``limit``).

        A chunk costs a fixed dispatch overhead plus a per-simulation cost; the size is
        steered multiplicatively toward the target, so it settles where the target is
        met (or at 1 when the overhead alone exceeds it).
        """
        n, elapsed = self._last_chunk
        if elapsed > 0:
            n = int(n * min(max(target_ms / elapsed, 0.25), 4.0))
        return max(1, min(n, limit))

    # -- reading -------------------------------------------------------------------------

    @property
    def prior(self) -> np.ndarray:
        return self._prior

    def search_prior(self, progress: Progress) -> np.ndarray:
        """The root priors the search uses after ``progress``: 0 for a move proven to lose
        (lc0 clears its P; ``selection.child_stats``)."""
        return self._prior if progress.lost is None else np.where(progress.lost, 0.0,
                                                                  self._prior)

    def progress(self) -> Progress:
        assert self.batch is not None
        s = jax.device_get(_progress(self.batch.state.tree))
        slots = self._slots
        visits = s["visits"][slots].astype(np.int64)
        n = np.maximum(visits, 1)
        return Progress(
            visits=visits, wl=s["wl_sum"][slots].astype(np.float64) / n,
            d=s["d_sum"][slots].astype(np.float64) / n, mates=s["mate"][slots].astype(bool),
            root_visits=int(s["root_visits"]), root_wl=float(s["root_wl"]),
            root_d=float(s["root_d"]), simulations=int(s["simulations"]),
            tree_nodes=int(s["node_count"]), depth_sum=int(s["depth_sum"]),
            max_depth=int(s["max_depth"]), nn_evals=int(s["nn_evals"]),
            cache_hits=int(s["cache_hits"]), lost=s["lost"][slots].astype(bool),
            bounds=np.stack([s["lower"][slots], s["upper"][slots]], -1).astype(np.int8),
            plies=s["plies"][slots].astype(np.int64))

    def view(self, progress: Progress | None = None,
             rows: list[int] | None = None) -> EngineView:
        """The root picture: a ``SearchResult`` whose ``pvs`` are filled for the moves in
        ``rows`` (default: the best move; [] for the others), plus v, depth, seldepth."""
        assert self.batch is not None and self.board is not None
        t0 = time.perf_counter()
        p = progress or self.progress()
        q = np.where(p.visits > 0, p.wl + self.config.draw_score * p.d, np.nan)
        prior = self.search_prior(p)
        order = p.order(prior, self.config.draw_score)
        best = int(order[0]) if len(order) else 0
        rows = [best] if rows is None else list(dict.fromkeys(rows))
        bucket = _rows_bucket(len(rows))
        padded = np.asarray((rows + [rows[0]] * bucket)[:bucket], np.int32)
        # TODO(core): searcher.results(batch)[0] once it no longer summarises every node.
        draw = jnp.float32(self.config.draw_score)
        lines = jax.device_get(_lines(self.batch.state.tree, draw,
                                      jnp.asarray(self._slots[padded].astype(np.int32)),
                                      PV_LENGTH))
        m = len(self.moves)
        pvs: list[list[chess.Move]] = [[] for _ in range(m)]
        for r, i in enumerate(rows):
            if p.visits[i] > 0:
                after = self.board.copy(stack=False)
                after.push(self.moves[i])
                pvs[i] = decode_line(after, lines["pv"][r])
        w_root = (1 + p.root_wl - p.root_d) / 2
        raw = lines["raw_wdl"][self._slots].astype(np.float64)
        status = lines["status"][self._slots]
        v = np.where(p.visits > 0, -(raw[:, 0] - raw[:, 2]), np.nan)
        v = np.where((p.visits > 0) & (status != 0), p.wl + self.config.draw_score * p.d, v)
        result = SearchResult(
            board=self.board.copy(), moves=list(self.moves), visits=p.visits,
            q=q.astype(np.float32), wl=p.wl.astype(np.float32), d=p.d.astype(np.float32),
            prior=prior.astype(np.float32), policy=self._policy.astype(np.float32),
            pvs=pvs, best_index=best, root_visits=p.root_visits,
            root_q=p.root_wl + self.config.draw_score * p.root_d,
            root_wdl=np.array([w_root, p.root_d, 1 - w_root - p.root_d]),
            raw_wdl=lines["root_raw_wdl"].astype(np.float64), nodes_used=p.tree_nodes,
            dropped_simulations=0, mates=p.mates,
            bounds=np.tile(np.array([-1, 1], np.int8), (m, 1)) if p.bounds is None else p.bounds,
            plies=np.zeros(m, np.int64) if p.plies is None else p.plies)
        self.ms_per_view = 0.7 * self.ms_per_view + 0.3 * (time.perf_counter() - t0) * 1000
        return EngineView(result=result, v=v, in_flight=np.zeros(m, np.int64),
                          m=np.full(m, np.nan), nn_index=self._nn_index.copy(),
                          depth=p.average_depth, seldepth=p.max_depth,
                          tree_nodes=p.tree_nodes)


__all__ = ["EngineView", "Progress", "SearchDriver"]
