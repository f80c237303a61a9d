"""Our jitted search against a plain-Python reference MCTS (dicts and recursion).

The reference follows lc0's formulas as written in lc0 (search.cc / params.cc) and
the search-contempt paper, with python-chess for every rule. It shares with the
code under test only the evaluator (a fixed random linear net on the host-encoded
112 planes) and, for search-contempt, the uniform draws (``contempt_uniform``).
"""

from __future__ import annotations

import math

import chess
import numpy as np
import pytest

from zerochess.chess.expander import Expander
from zerochess.neural.toy import linear_model
from zerochess.search.api import Searcher, tree_key
from zerochess.search.config import SearchConfig

from strategies import seeded_positions
from tree_walk import contempt_uniform, network_evaluate, sorted_legal

SIMS = 40
MODEL = linear_model(seed=3)


def _earlier_occurrences(board: chess.Board) -> tuple[int, int]:
    """(count, plies to the nearest) of earlier occurrences of the current position."""
    key = board._transposition_key()
    b = board.copy()
    count, nearest = 0, 0
    for plies in range(1, min(board.halfmove_clock, len(board.move_stack)) + 1):
        b.pop()
        if plies % 2 == 0 and b._transposition_key() == key:
            count += 1
            nearest = nearest or plies
    return count, nearest


class RefNode:
    def __init__(self, board: chess.Board, depth: int, cfg: SearchConfig, is_root: bool):
        self.board, self.depth, self.children = board, depth, {}
        self.n, self.wl, self.d = 0, 0.0, 0.0
        self.frozen: dict[int, int] | None = None
        self.terminal: tuple[float, float] | None = None
        moves = sorted_legal(board)
        if not moves:
            self.terminal = (1.0, 0.0) if board.is_check() else (0.0, 1.0)
        elif not is_root:
            count, nearest = _earlier_occurrences(board)
            if (board.is_insufficient_material() or board.halfmove_clock >= 100
                    or count >= 2 or (count == 1 and nearest <= depth)):
                self.terminal = (0.0, 1.0)
        if self.terminal is None:
            self.moves, self.priors, wdl = network_evaluate(MODEL, board, cfg.policy_temperature)
            self.value = (wdl[2] - wdl[0], wdl[1])  # mover-into-node perspective
        else:
            self.moves, self.priors, self.value = moves, np.zeros(len(moves)), self.terminal


def _score(node: RefNode, cfg: SearchConfig) -> list[float]:
    is_root = node.depth == 0
    c = cfg.cpuct_root if is_root and cfg.cpuct_root is not None else cfg.cpuct
    cpuct = c + cfg.cpuct_factor * math.log((node.n + cfg.cpuct_base) / cfg.cpuct_base)
    mult = cpuct * math.sqrt(max(node.n - 1, 1))
    ds = cfg.draw_score if node.depth % 2 == 0 else -cfg.draw_score
    visited_p = sum(p for i, p in enumerate(node.priors) if i in node.children
                    and node.children[i].n > 0)
    fpu = -node.wl / node.n + ds * node.d / node.n - cfg.fpu_value * math.sqrt(visited_p)
    if cfg.fpu_absolute:
        fpu = cfg.fpu_value
    scores = []
    for i, p in enumerate(node.priors):
        child = node.children.get(i)
        n = child.n if child else 0
        q = (child.wl + ds * child.d) / n if n else fpu
        scores.append(q + mult * p / (1 + n))
    return scores


def _simulate(node: RefNode, cfg: SearchConfig, key, sim: int, n_scl: float) -> tuple:
    if node.n == 0:  # a new leaf: its evaluation is its first visit
        wl, d = node.value
    elif node.terminal is not None:
        wl, d = node.terminal
    else:
        children_visits = node.n - 1
        if node.depth % 2 == 1 and node.frozen is None and children_visits >= n_scl:
            node.frozen = {i: c.n for i, c in node.children.items() if c.n > 0}
        if node.depth % 2 == 1 and node.frozen is not None:
            u = contempt_uniform(key, sim, node.depth)
            slots = sorted(node.frozen)
            total, acc, pick = sum(node.frozen.values()), 0, slots[-1]
            for s in slots:
                acc += node.frozen[s]
                if acc > u * total:
                    pick = s
                    break
        else:
            scores = _score(node, cfg)
            pick = max(range(len(scores)), key=lambda i: (scores[i], -i))
        if pick not in node.children:
            b = node.board.copy()
            b.push(node.moves[pick])
            node.children[pick] = RefNode(b, node.depth + 1, cfg, is_root=False)
        cwl, d = _simulate(node.children[pick], cfg, key, sim, n_scl)
        wl = -cwl
    node.n += 1
    node.wl += wl
    node.d += d
    return wl, d


def reference_root_visits(board: chess.Board, cfg: SearchConfig, sims: int, key) -> list[int]:
    root = RefNode(board, 0, cfg, is_root=True)
    n_scl = math.inf if cfg.n_scl is None else cfg.n_scl
    _simulate(root, cfg, key, -1, n_scl)  # the root's own evaluation
    for sim in range(sims):
        _simulate(root, cfg, key, sim, n_scl)
    return [root.children[i].n if i in root.children else 0 for i in range(len(root.moves))]


def _positions(count: int, seed: int = 7) -> list[chess.Board]:
    out = seeded_positions(count, seed, 80)
    # a position whose tree can walk into a repetition of game history
    rep = chess.Board()
    for m in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6"]:
        rep.push_uci(m)
    out[-1] = rep
    # more legal moves than 64 at the root (71) and at most of its children (four queens a
    # side): where a descent that read fewer edge slots than K would go wrong
    out[-2] = chess.Board("4k3/1q3q2/8/2q2q2/2Q2Q2/8/1Q3Q2/4K3 w - - 0 1")
    return out


POSITIONS = _positions(50)


@pytest.fixture(scope="module")
def searcher():
    return Searcher(MODEL, max_nodes=SIMS + 1, expander=Expander(0))


# the single-leaf reference has no bounds (gather_reference has: test_certainty)
@pytest.mark.parametrize("cfg", [
    SearchConfig(certainty_propagation=False),
    # contempt6-absfpu covers search-contempt in the default run
    pytest.param(SearchConfig(n_scl=3, certainty_propagation=False), marks=pytest.mark.slow),
    SearchConfig(cpuct=2.5, fpu_value=0.2, draw_score=0.3, policy_temperature=1.0,
                 certainty_propagation=False),
    SearchConfig(fpu_absolute=True, fpu_value=-1.0, n_scl=6, certainty_propagation=False),
], ids=["puct", "contempt3", "puct-drawscore", "contempt6-absfpu"])
def test_root_visits_equal_reference(searcher, cfg):
    results = searcher.search(POSITIONS, cfg, num_simulations=SIMS, seed=11)
    mismatches = []
    for i, (board, res) in enumerate(zip(POSITIONS, results, strict=True)):
        ref = reference_root_visits(board, cfg, SIMS, tree_key(11, i))
        assert [m for m in res.moves] == sorted_legal(board)
        if list(res.visits) != ref:
            mismatches.append((i, board.fen(), list(res.visits), ref))
    assert not mismatches, mismatches[:2]


def test_contempt_changes_search(searcher):
    """A check that can fail the other way: n_scl = 1 must differ from PUCT somewhere."""
    a = searcher.search(POSITIONS, SearchConfig(), num_simulations=SIMS, seed=1)
    b = searcher.search(POSITIONS, SearchConfig(n_scl=1), num_simulations=SIMS, seed=1)
    assert any(list(x.visits) != list(y.visits) for x, y in zip(a, b, strict=True))


def test_infinite_nscl_is_puct(searcher):
    """n_scl never reached (or None) gives exactly PUCT's full tree."""
    a = searcher.init(POSITIONS, SearchConfig(), seed=5)
    b = searcher.init(POSITIONS, SearchConfig(n_scl=SIMS + 10), seed=9)
    a, b = searcher.run(a, SIMS), searcher.run(b, SIMS)
    for name in ("visits", "wl_sum", "edge_child", "frozen"):
        np.testing.assert_array_equal(np.asarray(getattr(a.state.tree, name)),
                                      np.asarray(getattr(b.state.tree, name)))


def test_mixed_configs_in_one_batch_match_separate_runs(searcher):
    cfgs = [SearchConfig(n_scl=2) if i % 2 else SearchConfig() for i in range(len(POSITIONS))]
    mixed = searcher.search(POSITIONS, cfgs, num_simulations=SIMS, seed=3)
    for i, board in enumerate(POSITIONS[:6]):
        ref = reference_root_visits(board, cfgs[i], SIMS, tree_key(3, i))
        assert list(mixed[i].visits) == ref
