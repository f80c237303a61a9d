"""Reading a search: root statistics, best move (lc0 order), principal variations,
move choice with lc0 temperature schedules."""

from __future__ import annotations

import dataclasses
from typing import Any

import chess
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.policy_map import index_to_move
from zerochess.chess.rules import GameStatus
from zerochess.search.tree import Tree

PV_LENGTH = 16


def _best_slots(tree: Tree, draw_score: jax.Array) -> jax.Array:
    """lc0's best child of every node, [B, N] (-1 where no child was visited).

    Order: a child that mates first, then most visits, then higher Q, then higher prior.
    """
    children = tree.edge_child  # [B, N, K]
    safe = jnp.maximum(children, 0)
    exists = children >= 0
    take = jax.vmap(lambda a, idx: a[idx])
    visits = jnp.where(exists, take(tree.visits, safe), 0)
    n = jnp.maximum(visits, 1).astype(jnp.float32)
    ds = jnp.where(tree.depth % 2 == 0, draw_score[:, None], -draw_score[:, None])[..., None]
    q = (take(tree.wl_sum, safe) + ds * take(tree.d_sum, safe)) / n
    win = exists & (take(tree.status, safe) == GameStatus.CHECKMATE) & (visits > 0)
    cand = jnp.where(win.any(-1, keepdims=True), win, visits > 0)
    best_v = jnp.max(jnp.where(cand, visits, -1), -1, keepdims=True)
    cand &= visits == best_v
    best_q = jnp.max(jnp.where(cand, q, -jnp.inf), -1, keepdims=True)
    cand &= q == best_q
    best_p = jnp.max(jnp.where(cand, tree.edge_prior, -jnp.inf), -1, keepdims=True)
    cand &= tree.edge_prior == best_p
    return jnp.where(cand.any(-1), jnp.argmax(cand, -1), -1).astype(jnp.int32)


@jax.jit
def summarize(tree: Tree, draw_score: jax.Array) -> dict[str, jax.Array]:
    """Root statistics and PVs, small enough to bring to the host. Shapes in comments."""
    batch = tree.visits.shape[0]
    b = jnp.arange(batch)
    best = _best_slots(tree, draw_score)  # [B, N]
    next_node = jnp.where(best >= 0, jnp.take_along_axis(
        tree.edge_child, jnp.maximum(best, 0)[..., None], -1)[..., 0], -1)  # [B, N]
    next_move = jnp.where(best >= 0, jnp.take_along_axis(
        tree.edge_move, jnp.maximum(best, 0)[..., None], -1)[..., 0], -1)  # [B, N]
    root_children = tree.edge_child[:, 0]  # [B, K]
    pv = []  # continuation after each root move, PV_LENGTH x [B, K]
    cur = root_children
    for _ in range(PV_LENGTH):
        ok = cur >= 0
        safe = jnp.maximum(cur, 0)
        pv.append(jnp.where(ok, next_move[b[:, None], safe], -1))
        cur = jnp.where(ok, next_node[b[:, None], safe], -1)
    safe_c = jnp.maximum(root_children, 0)
    exists = root_children >= 0
    return dict(
        moves=tree.edge_move[:, 0],  # [B, K]
        prior=tree.edge_prior[:, 0],  # [B, K]
        visits=jnp.where(exists, tree.visits[b[:, None], safe_c], 0),  # [B, K]
        wl_sum=jnp.where(exists, tree.wl_sum[b[:, None], safe_c], 0.0),  # [B, K]
        d_sum=jnp.where(exists, tree.d_sum[b[:, None], safe_c], 0.0),  # [B, K]
        child_status=jnp.where(exists, tree.status[b[:, None], safe_c], 0),  # [B, K]
        pv=jnp.stack(pv, -1),  # [B, K, PV_LENGTH]
        best_slot=best[:, 0],  # [B]
        num_legal=tree.num_legal[:, 0],
        root_visits=tree.visits[:, 0],
        root_wl=tree.wl_sum[:, 0] / jnp.maximum(tree.visits[:, 0], 1),
        root_d=tree.d_sum[:, 0] / jnp.maximum(tree.visits[:, 0], 1),
        raw_wdl=tree.raw_wdl[:, 0],  # [B, 3]
        node_count=tree.node_count,
        dropped=tree.dropped,
        simulations=tree.simulations,
    )


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
        for name in ("temperature", "endgame_temperature", "value_cutoff"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        for name in ("decay_moves", "decay_delay_moves", "cutoff_move"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")

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


@dataclasses.dataclass
class SearchResult:
    """One position's search, read on the host. Arrays are over the legal moves (slot order).

    ``q``/``wl``/``d`` are from the root side to move's view; ``q`` is NaN for moves
    never visited. ``pvs[i]`` is the best continuation *after* ``moves[i]``; ``pv``
    starts with ``best_move``. ``prior`` is the search policy (temperature, noise);
    ``policy`` the raw network policy at temperature 1.
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
        """Move indices best first: mates, then visits, then Q, then prior (lc0)."""
        q = np.where(np.isnan(self.q), -np.inf, self.q)
        return np.lexsort((-self.prior, -q, -self.visits, ~self.mates))

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


def read_results(boards: list[chess.Board], summary: dict[str, np.ndarray],
                 root_policy: np.ndarray, draw_score: np.ndarray) -> list[SearchResult]:
    """Host-side SearchResults from ``summarize`` output (numpy)."""
    results = []
    for i, board in enumerate(boards):
        m = int(summary["num_legal"][i])
        moves = [index_to_move(board, int(x)) for x in summary["moves"][i, :m]]
        visits = summary["visits"][i, :m].astype(np.int64)
        n = np.maximum(visits, 1)
        wl = summary["wl_sum"][i, :m] / n
        d = summary["d_sum"][i, :m] / n
        q = np.where(visits > 0, wl + draw_score[i] * d, np.nan).astype(np.float32)
        pvs = []
        for s, move in enumerate(moves):
            after = board.copy(stack=False)
            after.push(move)
            pvs.append(decode_line(after, summary["pv"][i, s]))
        root_wl, root_d = -float(summary["root_wl"][i]), float(summary["root_d"][i])
        best = int(summary["best_slot"][i])
        results.append(SearchResult(
            board=board.copy(), moves=moves, visits=visits, q=q, wl=wl.astype(np.float32),
            d=d.astype(np.float32), prior=summary["prior"][i, :m].copy(),
            policy=root_policy[i, :m].copy(), pvs=pvs,
            best_index=best if best >= 0 else int(np.argmax(summary["prior"][i, :m])),
            root_visits=int(summary["root_visits"][i]), root_q=root_wl + draw_score[i] * root_d,
            root_wdl=np.array([(1 + root_wl - root_d) / 2, root_d, (1 - root_wl - root_d) / 2]),
            raw_wdl=summary["raw_wdl"][i].copy(), nodes_used=int(summary["node_count"][i]),
            dropped_simulations=int(summary["dropped"][i]),
            mates=summary["child_status"][i, :m] == GameStatus.CHECKMATE,
        ))
    return results


__all__ = ["SearchResult", "TemperatureSchedule", "decode_line", "read_results", "summarize"]
