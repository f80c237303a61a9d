"""A search's result on the host: ``SearchResult`` (root statistics, best move in lc0's
order, principal variations, scores), move choice with lc0 temperature schedules."""

from __future__ import annotations

import dataclasses
from typing import Any

import chess
import numpy as np

from zerochess.chess.policy_map import index_to_move, indices_to_moves
from zerochess.chess.types import GameStatus
from zerochess.search import scores
from zerochess.search.move_choice import TemperatureSchedule, choose_index
from zerochess.search.scores import DEFAULT_SCORE_TYPE, Score, centipawns, mate_in_moves
from zerochess.search.view import best_or_prior, root_scores


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
    ``m`` for moves never visited). ``q_shown``, ``u`` and ``s`` are lc0's PUCT terms of
    each move as its VerboseMoveStats prints them (Q, the FPU ``fpu`` for a move never
    visited; U; S = Q + U + moves-left utility), ``in_flight`` the visits gathered and
    not yet backed up. ``pv_visits[i]`` holds the visits of ``moves[i]``'s child, then of
    each node along ``pvs[i]`` (0 past its end).

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
    # lc0's PUCT terms at the root (VerboseMoveStats): Q as selection sees it (the FPU for
    # a move never visited), U, S = Q + U + moves-left utility; NaN / empty if not read
    q_shown: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.float32))
    u: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.float32))
    s: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.float32))
    fpu: float = float("nan")
    root_in_flight: int = 0
    pv_visits: np.ndarray = dataclasses.field(  # int [M, 1 + length]: visits along each PV
        default_factory=lambda: np.zeros((0, 1), np.int64))
    draw_score: float = 0.0
    stopped: bool = False  # a stopper of the search core ended this tree (KLD gain)
    mate_check: int = -1  # the move the mate check sent the search to first (-1: none)

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
        """lc0's GetBestChildWithTemperature (``move_choice.choose_slot``, the device
        scan's rule); temperature 0 gives ``best_move``."""
        return self.moves[choose_index(self.visits, self.q, self.best_index, temperature, rng,
                                       visit_offset, value_cutoff)]

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


def results_from_view(boards: list[chess.Board], view: dict[str, np.ndarray],
            search_time_s: np.ndarray | None = None,
            moves: list[list[chess.Move]] | None = None, pvs: bool = True
            ) -> list[SearchResult]:
    """Host ``SearchResult``s of a read (``zerochess.search.view.read_trees``, numpy
    [B, ...]); ``pvs`` are filled for the rows
    read ([] for the other moves; all [] with ``pvs`` False: a cheaper picture).
    ``moves``: each board's legal moves in slot order when the caller already has them
    (decoded from the view otherwise)."""
    out = []
    for i, board in enumerate(boards):
        m = int(view["num_legal"][i])
        if moves is not None:
            legal = moves[i]
        else:
            legal = indices_to_moves(board, view["moves"][i, :m])
        visits = view["visits"][i, :m].astype(np.int64)
        lines: list[list[chess.Move]] = [[] for _ in range(m)]
        pv_visits = np.zeros((m, 1 + view["pv"].shape[-1]), np.int64)
        for r, slot in enumerate(view["rows"][i] if pvs else ()):
            slot = int(slot)
            if slot >= m or lines[slot] or visits[slot] == 0:
                continue
            after = board.copy(stack=False)
            after.push(legal[slot])
            lines[slot] = decode_line(after, view["pv"][i, r])
            pv_visits[slot] = [visits[slot], *view["pv_visits"][i, r]]
        playouts = int(view["stat_playouts"][i])
        root_wl, root_d = float(view["root_wl"][i]), float(view["root_d"][i])
        draw = float(view["draw_score"][i])
        root_q, root_wdl = root_scores(root_wl, root_d, draw)
        best = int(view["best_slot"][i])
        # where the mate check made the search priors one-hot, show the network's prior
        prior, mate_check = _network_prior(view["prior"][i, :m].copy(),
                                           view["policy"][i, :m],
                                           float(view["policy_temperature"][i]))
        if mate_check >= 0:  # a move proven to lose still shows 0, as lc0 clears it
            lost = (visits > 0) & (view["lower"][i, :m] == -1) & (view["upper"][i, :m] == -1)
            prior = np.where(lost, 0.0, prior).astype(prior.dtype)
        results_i = SearchResult(
            board=board.copy(), moves=legal, visits=visits,
            q=view["q"][i, :m].astype(np.float32), wl=view["wl"][i, :m].astype(np.float32),
            d=view["d"][i, :m].astype(np.float32), prior=prior,
            policy=view["policy"][i, :m].copy(), pvs=lines,
            best_index=int(best_or_prior(best, view["prior"][i, :m], True, np)),
            root_visits=int(view["root_visits"][i]), root_q=root_q,
            root_wdl=np.array(root_wdl),
            raw_wdl=view["raw_wdl"][i].copy(), nodes_used=int(view["node_count"][i]),
            dropped_simulations=int(view["dropped"][i]),
            mates=view["status"][i, :m] == GameStatus.CHECKMATE,
            in_flight=view["in_flight"][i, :m].astype(np.int64),
            v=view["v"][i, :m].astype(np.float32), playouts=playouts,
            reused_visits=int(view["stat_reused_visits"][i]),
            depth=float(view["stat_depth_sum"][i]) / max(playouts, 1),
            seldepth=int(view["stat_max_depth"][i]),
            nn_evals=int(view["stat_nn_evals"][i]),
            cache_hits=int(view["stat_cache_hits"][i]),
            collisions=int(view["stat_collisions"][i]),
            search_time_s=float(search_time_s[i]) if search_time_s is not None else 0.0,
            edges_used=int(view["edge_count"][i]), out_of_edges=bool(view["full"][i]),
            bounds=np.stack([view["lower"][i, :m], view["upper"][i, :m]], 1).astype(np.int8),
            plies=view["plies"][i, :m].astype(np.int64),
            root_bounds=(int(view["root_lower"][i]), int(view["root_upper"][i])),
            root_plies=int(view["root_plies"][i]),
            m=view["m"][i, :m].astype(np.float32),
            root_moves_left=float(view["root_m"][i]),
            u=view["u"][i, :m].astype(np.float32), s=view["s"][i, :m].astype(np.float32),
            q_shown=view["q_shown"][i, :m].astype(np.float32), fpu=float(view["fpu"][i]),
            root_in_flight=int(view["root_in_flight"][i]), pv_visits=pv_visits,
            draw_score=draw, stopped=bool(view["stopped"][i]), mate_check=mate_check)
        out.append(results_i)
    return out


__all__ = ["SearchResult", "TemperatureSchedule", "decode_line", "move_order",
           "results_from_view"]
