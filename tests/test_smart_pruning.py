"""Smart pruning (lc0 SmartPruningStopper on the node budget) as per-tree data, against
the plain-Python reference run one simulation at a time."""

from __future__ import annotations

import chess
import pytest
from test_certainty import MODEL, _reference
from test_gather_reference import POSITIONS

from zerochess.chess.expander import Expander
from zerochess.search.api import Searcher
from zerochess.search.config import SearchConfig

import searchers

BUDGET = 120


@pytest.fixture(scope="module")
def searcher():
    return Searcher(MODEL, max_nodes=searchers.NODES, leaves_per_step=1, expander=Expander(0),
                    groups=1, shards=1)


def _reference_stop(board, cfg, index, seed):
    """Simulations started when lc0's smart pruning stops the reference search."""
    ref = _reference(board, cfg, 1, seed, index)
    while ref.simulations < BUDGET:
        visits = sorted(ref.root_visits())
        losing = sum(1 for i, c in ref.root.children.items()
                     if c.n > 0 and c.proven() and c.lower == -1)
        win = any(c.n > 0 and c.proven() and c.lower == 1 for c in ref.root.children.values())
        runner_up = visits[-2] if len(visits) > 1 else 0
        gap = visits[-1] - runner_up > (BUDGET - ref.simulations) / cfg.smart_pruning_factor
        if len(ref.root.moves) <= losing + 1 or win or gap:
            break
        ref.run(1)
    return ref


@pytest.mark.parametrize("factor", [1.33, 4.0])
def test_stops_where_reference_stops(searcher, factor):
    cfg = SearchConfig(smart_pruning_factor=factor)
    boards = POSITIONS[:8]
    results = searcher.search(boards, cfg, num_simulations=BUDGET, seed=4)
    saved = 0
    for i, (board, res) in enumerate(zip(boards, results, strict=True)):
        ref = _reference_stop(board, cfg, i, 4)
        assert list(res.visits) == ref.root_visits(), (i, board.fen())
        saved += BUDGET - ref.simulations
    assert saved > 0, "smart pruning saved nothing: the test is idle"


def test_off_by_default_and_one_legal_move_stops_at_once(searcher):
    board = chess.Board("7k/8/8/8/8/8/6q1/7K w - - 0 1")  # Kxg2 only
    assert board.legal_moves.count() == 1
    batch = searcher.init([board, board], [SearchConfig(),
                                           SearchConfig(smart_pruning_factor=1.33)], seed=0)
    batch = searcher.run(batch, BUDGET)
    off, on = searcher.results(batch)
    assert off.playouts == BUDGET + 1
    assert on.playouts == 1
    assert list(batch.finished) == [True, True]
    more = searcher.results(searcher.run(batch, BUDGET))
    assert more[1].playouts == 1  # still decided with the larger budget


def test_proven_win_stops(searcher):
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")  # Ra8#
    full, pruned = searcher.search([board, board], [SearchConfig(),
                                                    SearchConfig(smart_pruning_factor=1.33)],
                                   num_simulations=BUDGET)
    assert pruned.best_move == full.best_move == chess.Move.from_uci("a1a8")
    assert pruned.mate() == 1 and pruned.playouts < full.playouts
