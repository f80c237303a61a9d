"""Positions searched at a fixed node count, reduced to what the misevaluation and puzzle
experiments read: the raw network value, the search's value, its best move and the value
of every visited root move (all from the side to move's view, on [-1, 1])."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import chess
import numpy as np

from zerochess.errors import ConfigError, quote
from zerochess.games.config import search_config_from_dict
from zerochess.games.players import get_model, get_searcher


class Analysis(NamedTuple):
    """One position at ``nodes`` nodes. ``raw``: the network's W - L of the position;
    ``value``: the search's root Q; ``best``: its best move; ``moves``/``values``/``visits``:
    the root moves with at least one visit, their Q and visits (best first); ``pv``: the
    principal variation (starting with ``best``)."""

    raw: float
    value: float
    best: chess.Move
    moves: list[chess.Move]
    values: list[float]
    visits: list[int]
    pv: list[chess.Move]


Analyzer = Callable[[Sequence[chess.Board], int], list[Analysis]]
"""``analyze(boards, nodes) -> [Analysis]``: the interface of the miner and the statistic
(the real one searches with a network; tests pass a plain-Python stand-in)."""


def analysis_from_result(res: Any) -> Analysis:
    """An ``Analysis`` from a ``SearchResult``."""
    raw_wdl = np.asarray(res.raw_wdl, dtype=np.float64)
    order = [int(i) for i in res.order()]
    visits = np.asarray(res.visits)
    q = np.asarray(res.q, dtype=np.float64)
    keep = [i for i in order if visits[i] > 0 and not math.isnan(q[i])]
    return Analysis(raw=float(raw_wdl[0] - raw_wdl[2]), value=float(res.root_q),
                    best=res.best_move, moves=[res.moves[i] for i in keep],
                    values=[float(q[i]) for i in keep], visits=[int(visits[i]) for i in keep],
                    pv=list(res.pv))


class SearchAnalyzer:
    """The real analyzer: the experiment's network searched with plain PUCT (no noise, no
    search-contempt; ``search`` adds SearchConfig keys), ``batch`` boards at a time, one
    seed per call (the search has no randomness without noise). Every node count up to
    ``max_nodes`` runs on one compiled program (trees of ``max_nodes + 1`` nodes)."""

    def __init__(self, model: str, max_nodes: int, search: dict[str, Any] | None = None,
                 batch: int = 32, seed: int = 0, rules: str | None = None) -> None:
        self.model = get_model(model)
        self.max_nodes = max_nodes  # one tree size for every node count: one compile
        self.config = search_config_from_dict(dict(search or {}), "deep_search")
        self.batch = batch
        self.seed = seed
        self.rules = rules

    def __call__(self, boards: Sequence[chess.Board], nodes: int) -> list[Analysis]:
        if not 1 <= nodes <= self.max_nodes:
            raise ConfigError(f"nodes must be in [1, {self.max_nodes}], got {quote(nodes)}")
        searcher = get_searcher(self.model, self.max_nodes + 1, self.rules)
        out: list[Analysis] = []
        for start in range(0, len(boards), self.batch):
            part = list(boards[start:start + self.batch])
            pad = self.batch - len(part)  # one compiled batch shape for every call; the
            # padding trees get 1 simulation (done at once: no more network rows for them)
            results = searcher.search(part + [part[0]] * pad, self.config,
                                      num_simulations=[nodes] * len(part) + [1] * pad,
                                      seed=self.seed)
            out += [analysis_from_result(r) for r in results[:len(part)]]
        return out


__all__ = ["Analysis", "Analyzer", "SearchAnalyzer", "analysis_from_result"]
