"""Reading a search: root statistics, best move (lc0 order), principal variations,
move choice with lc0 temperature schedules."""

from __future__ import annotations

import dataclasses
from typing import Any

import chess
import chex
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.policy_map import index_to_move
from zerochess.chess.rules import GameStatus
from zerochess.program_store import program
from zerochess.search import scores
from zerochess.search.scores import DEFAULT_SCORE_TYPE, Score, centipawns, mate_in_moves
from zerochess.search.tree import K, Tree, node_edges, proven_lost
from zerochess.validation import as_count, as_real

PV_LENGTH = 16


def best_child_slot(tree: Tree, node: chex.Array, draw_score: chex.Array) -> chex.Array:
    """lc0's best child slot of ``node`` of one tree (-1 where no child was visited):
    ``GetBestChildNoTemperature``.

    Order: proven wins first (the shortest), then the unproven and proven draws by most
    visits, then higher Q, then higher prior; proven losses last (the longest first).
    """
    edges = node_edges(tree, node)
    exists = edges.child >= 0
    safe = jnp.maximum(edges.child, 0)
    visits = jnp.where(exists, tree.visits[safe], 0)
    n = jnp.maximum(visits, 1).astype(jnp.float32)
    ds = jnp.where(tree.depth[node] % 2 == 0, draw_score, -draw_score)
    q = (tree.wl_sum[safe] + ds * tree.d_sum[safe]) / n
    prior = edges.prior
    proven = exists & (visits > 0) & (tree.lower[safe] == tree.upper[safe])
    win = proven & (tree.lower[safe] == 1)
    loss = proven & (tree.lower[safe] == -1)
    plies = tree.plies[safe].astype(jnp.int32)
    visited = visits > 0
    rest = visited & ~win & ~loss
    cand = jnp.where(win.any(), win, jnp.where(rest.any(), rest, loss))
    # wins: fewest plies; losses: most plies; the others: visits, Q, prior
    cand &= jnp.where(win.any(), plies == jnp.min(jnp.where(cand, plies, 2**30)), True)
    cand &= jnp.where(~win.any() & ~rest.any(),
                      plies == jnp.max(jnp.where(cand, plies, -1)), True)
    cand &= visits == jnp.max(jnp.where(cand, visits, -1))
    cand &= q == jnp.max(jnp.where(cand, q, -jnp.inf))
    cand &= prior == jnp.max(jnp.where(cand, prior, -jnp.inf))
    return jnp.where(cand.any(), jnp.argmax(cand), -1).astype(jnp.int32)


def _summarize_tree(tree: Tree, draw_score: chex.Array, moves_left: chex.Array
                    ) -> dict[str, chex.Array]:
    root = node_edges(tree, jnp.int32(0))
    exists = root.child >= 0
    safe = jnp.maximum(root.child, 0)

    def line(node):
        """The best continuation (1858 indices, -1 padded) from ``node``."""

        def step(node, _):
            # a scan, not a Python loop: traced once (the trace is paid in every process)
            ok = node >= 0
            safe_node = jnp.maximum(node, 0)
            slot = jnp.where(ok, best_child_slot(tree, safe_node, draw_score), -1)
            edges = node_edges(tree, safe_node)
            move = jnp.where(slot >= 0, edges.move[jnp.maximum(slot, 0)], -1)
            return jnp.where(slot >= 0, edges.child[jnp.maximum(slot, 0)], -1), move

        return jax.lax.scan(step, node, None, length=PV_LENGTH)[1]

    # A tree of N nodes has at most N - 1 root children: the lines are followed for those
    # only (the existing children first), not for all K slots. Each step of a line is a
    # best-child pick over K edges, so following K lines cost K * PV_LENGTH * K per tree:
    # for a small tree (`analyse --epd` at a few visits) that was most of the work and,
    # vmapped over a batch, ~1 MB of intermediates per tree.
    lines = min(K, tree.visits.shape[-1] - 1)
    if lines < K:
        picked = jnp.argsort(~exists, stable=True)[:lines]  # existing children first
        pv = jnp.full((K, PV_LENGTH), -1, jnp.int32).at[picked].set(
            jax.vmap(line)(root.child[picked]).astype(jnp.int32))
    else:
        pv = jax.vmap(line)(root.child).astype(jnp.int32)

    return dict(
        moves=root.move,  # [K]
        # a move proven to lose shows prior 0, as lc0 clears it (``selection.child_stats``)
        prior=jnp.where(proven_lost(tree, root.child), 0.0, tree.root_prior),  # [K]
        visits=jnp.where(exists, tree.visits[safe], 0),  # [K]
        in_flight=jnp.where(exists, tree.in_flight[safe], 0),  # [K]
        wl_sum=jnp.where(exists, tree.wl_sum[safe], 0.0),  # [K]
        d_sum=jnp.where(exists, tree.d_sum[safe], 0.0),  # [K]
        m_sum=jnp.where(exists & moves_left, tree.m_sum[safe], jnp.nan),  # [K]
        child_status=jnp.where(exists, tree.status[safe], 0),  # [K]
        child_lower=jnp.where(exists, tree.lower[safe], -1),  # [K]
        child_upper=jnp.where(exists, tree.upper[safe], 1),  # [K]
        child_plies=jnp.where(exists, tree.plies[safe], 0),  # [K]
        root_lower=-tree.upper[0],  # root side to move's perspective
        root_upper=-tree.lower[0],
        root_plies=tree.plies[0],
        child_raw_wdl=jnp.where(exists[:, None], tree.raw_wdl[safe], jnp.nan),  # [K, 3]
        pv=pv,  # [K, PV_LENGTH]
        best_slot=best_child_slot(tree, jnp.int32(0), draw_score),
        num_legal=tree.num_legal[0],
        root_visits=tree.visits[0],
        root_wl=tree.wl_sum[0] / jnp.maximum(tree.visits[0], 1),
        root_d=tree.d_sum[0] / jnp.maximum(tree.visits[0], 1),
        root_m=jnp.where(moves_left, tree.m_sum[0] / jnp.maximum(tree.visits[0], 1), jnp.nan),
        raw_wdl=tree.raw_wdl[0],  # [3]
        node_count=tree.node_count,
        edge_count=tree.edge_count,
        full=tree.full,
        dropped=tree.dropped,
        simulations=tree.simulations,
        **{f"stat_{name}": value for name, value in tree.stats.items()},
    )


@program
def summarize(tree: Tree, draw_score: jax.Array, moves_left: jax.Array | None = None
              ) -> dict[str, jax.Array]:
    """Root statistics and PVs of every tree, small enough to bring to the host ([B, ...]
    versions of the shapes in ``_summarize_tree``). ``moves_left`` bool [B]: the network
    has a moves-left head (``SearchParams.moves_left``; None: no tree has), else the moves
    left read NaN."""
    if moves_left is None:
        moves_left = jnp.zeros(draw_score.shape, jnp.bool_)
    return jax.vmap(_summarize_tree)(tree, draw_score, moves_left)


@dataclasses.dataclass(frozen=True)
class TemperatureSchedule:
    """lc0's move-selection temperature terms (Temperature, TempDecayMoves,
    TempDecayDelayMoves, TempCutoffMove, TempEndgame, TempVisitOffset, TempValueCutoff)."""

    temperature: float = 0.0
    decay_moves: int = 0
    decay_delay_moves: int = 0
    cutoff_move: int = 0
    endgame_temperature: float = 0.0
    visit_offset: float = 0.0
    value_cutoff: float = 100.0

    def __post_init__(self) -> None:
        # lc0's option ranges (src/search/classic/params.cc); ConfigError is a ValueError
        for name, (low, high) in (("temperature", (0.0, 100.0)),
                                  ("endgame_temperature", (0.0, 100.0)),
                                  ("visit_offset", (-1000.0, 1000.0)),
                                  ("value_cutoff", (0.0, 100.0))):
            object.__setattr__(self, name, as_real(getattr(self, name), name, low, high))
        for name, high in (("decay_moves", 640), ("decay_delay_moves", 100),
                           ("cutoff_move", 1000)):
            object.__setattr__(self, name, as_count(getattr(self, name), name, 0, high))

    def at(self, ply: int) -> float:
        """Temperature for the move played at game ply ``ply`` (lc0: moves = ply // 2)."""
        temperature = self.temperature
        moves = ply // 2
        if self.cutoff_move and moves + 1 >= self.cutoff_move:
            return self.endgame_temperature
        if temperature and self.decay_moves:
            if moves >= self.decay_delay_moves + self.decay_moves:
                temperature = 0.0
            elif moves >= self.decay_delay_moves:
                left = self.decay_delay_moves + self.decay_moves - moves
                temperature *= left / self.decay_moves
            temperature = max(temperature, self.endgame_temperature)
        return temperature


def move_order(visits: np.ndarray, q: np.ndarray, prior: np.ndarray, win: np.ndarray,
               loss: np.ndarray, plies: np.ndarray) -> np.ndarray:
    """Root move indices best first, as lc0 ranks them (host twin of ``best_child_slot``):
    proven wins (``win``, fewest ``plies`` first), then most visits, higher Q (NaN:
    unvisited, last), higher prior; proven losses (``loss``) last, the longest first.
    All arrays [M]."""
    qq = np.where(np.isnan(q), -np.inf, q)
    rank = np.where(win, 0, np.where(loss, 2, 1))
    tie = np.where(win, plies, np.where(loss, -plies, 0))
    return np.lexsort((-prior, -qq, -visits, tie, rank))


@dataclasses.dataclass
class SearchResult:
    """One position's search, read on the host. Arrays are over the legal moves (slot order).

    ``q``/``wl``/``d`` are from the root side to move's view; ``q`` is NaN for moves
    never visited. ``pvs[i]`` is the best continuation *after* ``moves[i]``; ``pv``
    starts with ``best_move``. ``prior`` is the search policy (temperature, noise; 0 for
    a move proven to lose, which lc0 clears and shows as ``P: 0.00%``), always the
    network's: where the mate check sent the search to a mating move first (one-hot
    search priors), ``prior`` still holds the network's prior at the search temperature
    and ``mate_check`` is that move's index (-1: none); ``policy`` the raw network policy
    at temperature 1; ``v`` the network's own W - L of the position after
    each move, from the root side (NaN if it was not evaluated by the network: not
    visited, or a game end). ``m`` is each move's mean moves left (lc0's M, plies to the
    game's end) and ``root_moves_left`` the root's, NaN without a moves-left head (and
    ``m`` for moves never visited).

    Search statistics (lc0's names where it has them): ``playouts`` visits backed up in
    this search (the root's own evaluation included for a new tree; lc0's playouts),
    ``reused_visits`` the root visits kept from the last search by ``Searcher.advance``
    (tree reuse; ``root_visits`` counts them, ``playouts`` does not), ``depth`` their
    mean depth and ``seldepth`` the largest (lc0's convention: the root is depth 1),
    ``nn_evals`` positions evaluated by the network, ``cache_hits`` positions answered
    by the evaluation cache, ``collisions`` gathered visits that met a leaf already in
    flight (multi-leaf gathering), ``search_time_s`` the wall time of the ``run`` calls
    that searched this tree, ``nodes_per_second`` playouts per second of it.
    """

    board: chess.Board
    moves: list[chess.Move]
    visits: np.ndarray
    q: np.ndarray
    wl: np.ndarray
    d: np.ndarray
    prior: np.ndarray
    policy: np.ndarray
    pvs: list[list[chess.Move]]
    best_index: int
    root_visits: int
    root_q: float
    root_wdl: np.ndarray
    raw_wdl: np.ndarray
    nodes_used: int
    dropped_simulations: int
    mates: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, bool))
    in_flight: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int64))
    v: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.float32))
    playouts: int = 0
    reused_visits: int = 0
    depth: float = 0.0
    seldepth: int = 0
    nn_evals: int = 0
    cache_hits: int = 0
    collisions: int = 0
    search_time_s: float = 0.0
    edges_used: int = 0
    out_of_edges: bool = False
    bounds: np.ndarray = dataclasses.field(  # int8 [M, 2] (lower, upper), root side's view
        default_factory=lambda: np.zeros((0, 2), np.int8))
    plies: np.ndarray = dataclasses.field(  # int [M] plies to the end of a proven move
        default_factory=lambda: np.zeros(0, np.int64))
    root_bounds: tuple[int, int] = (-1, 1)
    root_plies: int = 0
    m: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.float32))
    root_moves_left: float = float("nan")
    mate_check: int = -1

    @property
    def nodes_per_second(self) -> float:
        return self.playouts / self.search_time_s if self.search_time_s > 0 else float("nan")

    def stats(self) -> dict[str, Any]:
        """The search statistics as a dict (the ``--json`` ``stats`` object)."""
        return {"playouts": self.playouts, "depth": round(self.depth, 3),
                "seldepth": self.seldepth, "nn_evals": self.nn_evals,
                "cache_hits": self.cache_hits, "collisions": self.collisions,
                "nodes_used": self.nodes_used, "edges_used": self.edges_used,
                "dropped_simulations": self.dropped_simulations,
                "search_time_s": round(self.search_time_s, 4),
                "nodes_per_second": (round(self.nodes_per_second, 1)
                                     if self.search_time_s > 0 else None)}

    def proven(self, index: int) -> int | None:
        """The proven result of ``moves[index]`` for the root side to move (+1 win, 0
        draw, -1 loss; certainty propagation), None if not proven."""
        if self.visits[index] == 0:
            return None
        if len(self.mates) == len(self.moves) and self.mates[index]:
            return 1  # the move mates
        if len(self.bounds) == 0:
            return None
        lower, upper = (int(x) for x in self.bounds[index])
        return lower if lower == upper else None

    def mate(self, index: int | None = None) -> int | None:
        """lc0's ``score mate``: moves to mate after ``moves[index]`` (default: the best
        move), negative when the root side is mated; None unless it is a proven win/loss."""
        index = self.best_index if index is None else index
        result = self.proven(index)
        if result is None or result == 0:
            return None
        plies = float(self.plies[index]) if len(self.plies) else 0.0
        return mate_in_moves(plies, float(result))

    def score(self, index: int | None = None, score_type: str = DEFAULT_SCORE_TYPE
              ) -> Score | None:
        """The score lc0 prints for ``moves[index]`` (default: the best move): ``mate``
        for a proven win/loss, else ``cp`` with ``score_type`` (see
        ``zerochess.search.scores``; default lc0's ``WDL_mu``); ``wdl`` per mille.

        A move the search never visited has no score: None (``--json`` prints null, the
        table ``-``), not the root's. Without an index, a search that visited no move
        scores the position itself (the root)."""
        if index is not None and self.visits[index] == 0 and self.proven(index) is None:
            return None
        index = self.best_index if index is None else index
        wdl = self.wdl_permille(index)
        mate = self.mate(index)
        if mate is not None:
            return Score(cp=None, mate=mate, wdl=wdl)
        if self.visits[index] == 0:
            cp = centipawns(self._root_wl, float(self.root_wdl[1]), self.root_q, score_type)
        else:
            cp = centipawns(float(self.wl[index]), float(self.d[index]), float(self.q[index]),
                            score_type)
        return Score(cp=cp, mate=None, wdl=wdl)

    @property
    def bound(self) -> np.ndarray:
        """int8 [M]: +1 proven win for the root side, 0 proven draw, -1 proven loss, 2
        not proven (the contract's encoding of lc0's W/D/L tags)."""
        return np.array([2 if p is None else p for p in
                         (self.proven(i) for i in range(len(self.moves)))], np.int8)

    @property
    def mate_plies(self) -> np.ndarray:
        """int [M]: plies to mate of proven wins/losses, 0 otherwise."""
        b = self.bound
        plies = self.plies if len(self.plies) else np.zeros(len(self.moves), np.int64)
        return np.where((b == 1) | (b == -1), plies, 0)

    def wdl_permille(self, index: int | None = None) -> tuple[int, int, int]:
        """(W, D, L) per mille of ``moves[index]`` (default: the best move), as lc0's
        ``wdl`` info; a proven result is exact."""
        index = self.best_index if index is None else index
        result = self.proven(index)
        if result is not None:
            return {1: (1000, 0, 0), 0: (0, 1000, 0), -1: (0, 0, 1000)}[result]
        if self.visits[index] == 0:
            return scores.wdl_permille(self._root_wl, float(self.root_wdl[1]))
        return scores.wdl_permille(float(self.wl[index]), float(self.d[index]))

    @property
    def _root_wl(self) -> float:
        """W - L of the root, from its side to move."""
        return float(self.root_wdl[0] - self.root_wdl[2])

    @property
    def fen(self) -> str:
        return self.board.fen()

    @property
    def best_move(self) -> chess.Move:
        return self.moves[self.best_index]

    @property
    def pv(self) -> list[chess.Move]:
        """The principal variation, starting with ``best_move`` (as lc0 and KataGo print it)."""
        return [self.best_move, *self.pvs[self.best_index]]

    @property
    def out_of_nodes(self) -> bool:
        return self.dropped_simulations > 0

    def order(self) -> np.ndarray:
        """Move indices best first (lc0): proven wins (shortest first), then visits, Q,
        prior; proven losses last (longest first)."""
        m = len(self.moves)
        proven = [self.proven(i) for i in range(m)]  # mates included
        return move_order(self.visits, self.q, self.prior,
                          np.array([p == 1 for p in proven], bool).reshape(m),
                          np.array([p == -1 for p in proven], bool).reshape(m),
                          self.plies if len(self.plies) else np.zeros(m, np.int64))

    def choose_move(self, temperature: float, rng: np.random.Generator,
                    visit_offset: float = 0.0, value_cutoff: float = 100.0) -> chess.Move:
        """lc0's GetBestChildWithTemperature; temperature 0 gives ``best_move``."""
        if temperature <= 0:
            return self.best_move
        n = self.visits.astype(np.float64) + visit_offset
        max_n = n.max()
        if max_n <= 0:
            return self.best_move
        q = np.where(np.isnan(self.q), -np.inf, self.q)
        max_eval = q[np.argmax(n)]
        ok = q >= max_eval - value_cutoff / 50.0
        weights = np.where(ok, np.power(np.maximum(n / max_n, 0.0), 1.0 / temperature), 0.0)
        return self.moves[int(rng.choice(len(self.moves), p=weights / weights.sum()))]

    def to_dataframe(self) -> Any:
        """One row per legal move, best first (pandas)."""
        import pandas as pd

        order = self.order()
        win = (1 + self.wl - self.d) / 2
        return pd.DataFrame({
            "move": [self.moves[i].uci() for i in order],
            "visits": self.visits[order],
            "policy": self.prior[order],
            "q": self.q[order],
            "winrate": np.where(self.visits[order] > 0, win[order], np.nan),
            "drawrate": np.where(self.visits[order] > 0, self.d[order], np.nan),
            "pv": [" ".join(m.uci() for m in [self.moves[i], *self.pvs[i]]) for i in order],
        })


def decode_line(board: chess.Board, indices: np.ndarray) -> list[chess.Move]:
    """Moves of a line of 1858 indices played from ``board`` (stops at the first -1)."""
    line, b = [], board.copy(stack=False)
    for idx in indices:
        if idx < 0:
            break
        move = index_to_move(b, int(idx))
        line.append(move)
        b.push(move)
    return line


def _network_prior(prior: np.ndarray, policy: np.ndarray, temperature: float
                   ) -> tuple[np.ndarray, int]:
    """(the prior to show, the mate check's move or -1). The mate check replaces a root's
    search priors with a one-hot on the mating move; the network's prior at the search
    temperature is ``policy ** (1 / T)`` renormalised (``policy`` is the softmax at T = 1)."""
    if len(prior) < 2 or np.count_nonzero(prior) != 1 or prior.max() != 1.0:
        return prior, -1
    tempered = np.power(policy.astype(np.float64), 1.0 / max(float(temperature), 1e-3))
    total = tempered.sum()
    if not np.isfinite(total) or total <= 0:
        return prior, -1
    return (tempered / total).astype(prior.dtype), int(np.argmax(prior))


def read_results(boards: list[chess.Board], summary: dict[str, np.ndarray],
                 root_policy: np.ndarray, draw_score: np.ndarray,
                 search_time_s: np.ndarray | None = None,
                 policy_temperature: np.ndarray | None = None) -> list[SearchResult]:
    """Host-side SearchResults from ``summarize`` output (numpy). ``policy_temperature``
    [B]: each tree's search temperature, to show the network's prior where the mate check
    replaced it (None: the search priors as they are)."""
    results = []
    for i, board in enumerate(boards):
        playouts = int(summary["stat_playouts"][i])
        raw = summary["child_raw_wdl"][i, :int(summary["num_legal"][i])]
        m = int(summary["num_legal"][i])
        moves = [index_to_move(board, int(x)) for x in summary["moves"][i, :m]]
        visits = summary["visits"][i, :m].astype(np.int64)
        n = np.maximum(visits, 1)
        wl = summary["wl_sum"][i, :m] / n
        d = summary["d_sum"][i, :m] / n
        q = np.where(visits > 0, wl + draw_score[i] * d, np.nan).astype(np.float32)
        m_sum = summary["m_sum"][i, :m] if "m_sum" in summary else np.full(m, np.nan)
        pvs = []
        for s, move in enumerate(moves):
            if summary["pv"][i, s, 0] < 0:
                pvs.append([])  # no continuation below this move (most are unvisited)
                continue
            after = board.copy(stack=False)
            after.push(move)
            pvs.append(decode_line(after, summary["pv"][i, s]))
        root_wl, root_d = -float(summary["root_wl"][i]), float(summary["root_d"][i])
        best = int(summary["best_slot"][i])
        prior, mate_check = summary["prior"][i, :m].copy(), -1
        if policy_temperature is not None:
            prior, mate_check = _network_prior(prior, root_policy[i, :m],
                                               float(policy_temperature[i]))
            if mate_check >= 0:  # a move proven to lose still shows 0, as lc0 clears it
                lost = ((visits > 0) & (summary["child_lower"][i, :m] == -1)
                        & (summary["child_upper"][i, :m] == -1))
                prior = np.where(lost, 0.0, prior).astype(prior.dtype)
        results.append(SearchResult(
            board=board.copy(), moves=moves, visits=visits, q=q, wl=wl.astype(np.float32),
            d=d.astype(np.float32), prior=prior,
            policy=root_policy[i, :m].copy(), pvs=pvs,
            best_index=best if best >= 0 else int(np.argmax(summary["prior"][i, :m])),
            root_visits=int(summary["root_visits"][i]), root_q=root_wl + draw_score[i] * root_d,
            root_wdl=np.array([(1 + root_wl - root_d) / 2, root_d, (1 - root_wl - root_d) / 2]),
            raw_wdl=summary["raw_wdl"][i].copy(), nodes_used=int(summary["node_count"][i]),
            dropped_simulations=int(summary["dropped"][i]),
            mates=summary["child_status"][i, :m] == GameStatus.CHECKMATE,
            in_flight=summary["in_flight"][i, :m].astype(np.int64),
            v=(raw[:, 2] - raw[:, 0]).astype(np.float32),
            playouts=playouts,
            reused_visits=int(summary["stat_reused_visits"][i]),
            depth=float(summary["stat_depth_sum"][i]) / max(playouts, 1),
            seldepth=int(summary["stat_max_depth"][i]),
            nn_evals=int(summary["stat_nn_evals"][i]),
            cache_hits=int(summary["stat_cache_hits"][i]),
            collisions=int(summary["stat_collisions"][i]),
            search_time_s=float(search_time_s[i]) if search_time_s is not None else 0.0,
            edges_used=int(summary["edge_count"][i]),
            out_of_edges=bool(summary["full"][i]),
            bounds=np.stack([summary["child_lower"][i, :m],
                             summary["child_upper"][i, :m]], axis=1).astype(np.int8),
            plies=summary["child_plies"][i, :m].astype(np.int64),
            root_bounds=(int(summary["root_lower"][i]), int(summary["root_upper"][i])),
            root_plies=int(summary["root_plies"][i]),
            m=np.where(visits > 0, m_sum / n, np.nan).astype(np.float32),
            root_moves_left=float(summary["root_m"][i]) if "root_m" in summary else np.nan,
            mate_check=mate_check,
        ))
    return results


__all__ = ["SearchResult", "TemperatureSchedule", "best_child_slot", "decode_line", "move_order",
           "read_results", "summarize"]
