"""THROWAWAY stub of the lead's search API (delete once zerochess.search.api lands)."""

from __future__ import annotations

import dataclasses
import zlib

import chess
import numpy as np

from zerochess.search.config import SearchConfig


@dataclasses.dataclass(frozen=True)
class TemperatureSchedule:
    temperature: float = 0.0
    decay_moves: int = 0
    decay_delay_moves: int = 0
    cutoff_move: int = 0
    endgame_temperature: float = 0.0
    visit_offset: float = 0.0

    def at(self, ply: int) -> float:
        moves = ply // 2
        if self.cutoff_move and moves + 1 >= self.cutoff_move:
            return self.endgame_temperature
        t = self.temperature
        if self.decay_moves and moves >= self.decay_delay_moves:
            f = (moves - self.decay_delay_moves) / self.decay_moves
            t = max(t * (1 - f), 0.0) if f < 1 else 0.0
        return max(t, self.endgame_temperature) if t > 0 else self.endgame_temperature


@dataclasses.dataclass
class SearchResult:
    moves: list
    visits: np.ndarray
    q: np.ndarray
    prior: np.ndarray
    pv: list
    root_q: float
    root_wdl: np.ndarray
    raw_wdl: np.ndarray
    root_visits: int

    @property
    def best_move(self) -> chess.Move:
        return self.moves[int(np.argmax(self.visits))]

    def choose_move(self, temperature, rng, visit_offset=0.0):
        if temperature <= 0:
            return self.best_move
        v = np.maximum(self.visits + visit_offset, 0).astype(float) ** (1 / temperature)
        if v.sum() <= 0:
            return self.best_move
        return self.moves[int(rng.choice(len(v), p=v / v.sum()))]


class Searcher:
    def __init__(self, model, max_nodes: int = 1024):
        self.model = model
        self.max_nodes = max_nodes

    def init(self, boards, configs, seed):
        if isinstance(configs, SearchConfig):
            configs = [configs] * len(boards)
        seeds = seed if isinstance(seed, (list, tuple, np.ndarray)) else [seed] * len(boards)
        return {"boards": [b.copy() for b in boards], "configs": list(configs),
                "seeds": [int(s) for s in seeds], "n": 0}

    def run(self, state, num_simulations):
        assert state["n"] + num_simulations + 1 <= self.max_nodes
        return {**state, "n": state["n"] + num_simulations}

    def results(self, state):
        out = []
        for b, c, s in zip(state["boards"], state["configs"], state["seeds"], strict=True):
            moves = list(b.legal_moves)
            h = zlib.crc32(b.fen().encode())
            rng = np.random.default_rng([h, s, c.n_scl or 0])
            p = rng.dirichlet(np.ones(len(moves)))
            n = state["n"]
            visits = np.floor(p * n).astype(np.int64)
            q = np.where(visits > 0, rng.uniform(-1, 1, len(moves)), np.nan)
            out.append(SearchResult(moves, visits, q, p, moves[:1], float(rng.uniform(-1, 1)),
                                    np.array([0.3, 0.4, 0.3]), np.array([0.3, 0.4, 0.3]), n + 1))
        return out


def load_model(name):
    return name
