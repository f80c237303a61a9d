"""The UCI engine's search driver compiles nothing inside a timed search: after ``warmup``
(what ``isready`` runs), searches of positions with other numbers of legal moves, with
``searchmoves``, and the views of their results run without a single JAX compile.

(Regressions seen: slicing device arrays to the number of legal moves compiled new slice
ops for every new count, 1-2 s inside timed searches of a real-clock match; a leaf that
ends the game runs an evaluation program of its own that warmup had not compiled.)
"""

from __future__ import annotations

import logging

import chess
import jax
import pytest

from zerochess.neural import load_model
from zerochess.program_store import LOAD_MESSAGE
from zerochess.search.config import SearchConfig
from zerochess.uci.driver import SearchDriver

POSITIONS = [
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",  # 48 moves
    "rnbqkbnr/ppp2ppp/8/3pp3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 0 3",
    "4k3/8/8/8/8/8/4q3/4K3 w - - 0 1",  # in check, one legal move: a terminal leaf
    "8/8/8/4k3/8/8/3P4/4K3 w - - 0 1",
    "r1bq1rk1/pp2bppp/2n2n2/3p4/3P4/2NB1N2/PP3PPP/R1BQ1RK1 b - - 3 10",
]


class _Compiles(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        if msg.startswith(("Compiling", LOAD_MESSAGE)):  # compiled, or loaded from disk
            self.messages.append(msg[:160])


@pytest.fixture(scope="module")
def driver():
    # the engine's defaults: MinibatchSize 0 -> 16 leaves per step, an evaluation cache
    drv = SearchDriver(load_model("builtin"), 2048,
                       searcher_kwargs={"leaves_per_step": 16, "cache_size": 4096})
    drv.warmup()
    return drv


def test_no_compile_inside_searches_after_warmup(driver):
    handler = _Compiles()
    logger = logging.getLogger("jax")
    logger.addHandler(handler)
    logging.getLogger("zerochess.programs").addHandler(handler)
    old_level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        with jax.log_compiles(True):
            counts = set()
            for fen in POSITIONS:
                board = chess.Board(fen)
                counts.add(board.legal_moves.count())
                for allow in (None, list(board.legal_moves)[:1]):
                    driver.start(board, SearchConfig(), seed=7, allow=allow)
                    driver.search(3, None, lambda _: False)
                    steps: list = []

                    def on_step(res, steps=steps):  # the info path: a step's picture
                        steps.append(len(driver.pvs(res).pvs))
                        return False

                    driver.search(40, None, on_step)  # steps of a full minibatch (16 leaves)
                    assert steps
                    result = driver.result()
                    assert result.best_move in board.legal_moves
                    best = result.best_index  # a line after it, unless it ends the game
                    assert result.pvs[best] or result.proven(best) is not None
                    if allow:  # searchmoves: every simulation went to the one allowed move
                        assert result.moves == allow and result.visits.sum() == 3 + 40
                driver.policy_move(board)
    finally:
        logger.removeHandler(handler)
        logging.getLogger("zerochess.programs").removeHandler(handler)
        logger.setLevel(old_level)
    assert len(counts) == len(POSITIONS)  # really different legal-move counts
    assert handler.messages == []
    # warm-up ran the network at every evaluation batch size a 16-leaf step can use
    assert set(driver.searcher._networks) >= {1, 4, 16}


def _subtree_visits(driver, line: list[chess.Move]) -> int:
    """Visits of the node ``line`` leads to in the driver's tree, by its child links."""
    import numpy as np

    from zerochess.chess.policy_map import move_to_index

    t = jax.tree.map(lambda a: np.asarray(a[0]), jax.device_get(driver.batch.state.tree))
    node, board = 0, driver.board.copy()
    for move in line:
        start, count = int(t.edge_start[node]), int(t.num_legal[node])
        moves = list(t.edges.move[start:start + count])
        node = int(t.edges.child[start + moves.index(move_to_index(board, move))])
        if node < 0:
            return 0
        board.push(move)
    return int(t.visits[node])


def test_a_position_that_continues_the_game_reuses_the_tree(driver):
    """lc0 ResetToPosition: the tree of the last search moves down the moves played; a
    different game, other settings or ``forget`` (ucinewgame) start a new tree. No
    compile inside the search either."""
    board = chess.Board(POSITIONS[1])
    driver.start(board, SearchConfig(), seed=3)
    assert driver.reused_visits == 0
    driver.search(120, None, lambda _: False)
    result = driver.result()
    line = [result.best_move, result.pvs[result.best_index][0]]
    expected = _subtree_visits(driver, line)
    assert expected > 1
    after = board.copy()
    for move in line:
        after.push(move)
    handler = _Compiles()
    logger = logging.getLogger("jax")
    logger.addHandler(handler)
    logging.getLogger("zerochess.programs").addHandler(handler)
    old_level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        with jax.log_compiles(True):
            driver.start(after, SearchConfig(), seed=3)
            assert driver.reused_visits == expected == driver.result().root_visits
            assert driver.moves == list(after.legal_moves) or set(driver.moves) == set(
                after.legal_moves)
            driver.search(10, None, lambda _: False)
            assert driver.result().root_visits == expected + 10
    finally:
        logger.removeHandler(handler)
        logging.getLogger("zerochess.programs").removeHandler(handler)
        logger.setLevel(old_level)
    assert handler.messages == []
    # other settings: a new tree
    driver.start(after, SearchConfig(cpuct=2.0), seed=3)
    assert driver.reused_visits == 0 and driver.result().root_visits == 1
    # the KLD-gain stopper's settings are no tree setting: the tree is kept
    driver.start(after, SearchConfig(cpuct=2.0, minimum_kld_gain_per_node=1e-5), seed=3)
    assert driver.reused_visits == 1
    params = jax.device_get(driver.batch.shards[0].params)
    assert float(params.kld_min_gain[0]) == pytest.approx(1e-5)
    driver.start(after, SearchConfig(cpuct=2.0), seed=3)
    # the same position again: the tree is kept; forget() drops it
    driver.search(20, None, lambda _: False)
    driver.start(after, SearchConfig(cpuct=2.0), seed=3)
    assert driver.reused_visits == 21
    driver.forget()
    driver.start(after, SearchConfig(cpuct=2.0), seed=3)
    assert driver.reused_visits == 0


def test_cache_answers_a_repeated_search_and_configs_are_data(driver):
    """NNCacheSize > 0: a second search of the same position is answered by the cache
    (hits counted, fewer network evaluations). The per-search options (MaxCollision*,
    StickyEndgames) reach the tree's parameters as data: no compile."""
    board = chess.Board(POSITIONS[3])
    driver.forget()
    driver.clear_cache()
    driver.start(board, SearchConfig(), seed=5)
    driver.search(40, None, lambda _: False)
    first = driver.result()
    assert first.nn_evals > 0
    driver.forget()
    config = SearchConfig(max_collision_events=3, max_collision_visits=9,
                          max_collision_visits_scaling_start=2,
                          max_collision_visits_scaling_end=50,
                          max_collision_visits_scaling_power=2.0,
                          certainty_propagation=False)
    handler = _Compiles()
    logger = logging.getLogger("jax")
    logger.addHandler(handler)
    logging.getLogger("zerochess.programs").addHandler(handler)
    old_level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        with jax.log_compiles(True):
            driver.start(board, config, seed=5)
            assert driver.reused_visits == 0
            driver.search(40, None, lambda _: False)
            second = driver.result()
    finally:
        logger.removeHandler(handler)
        logging.getLogger("zerochess.programs").removeHandler(handler)
        logger.setLevel(old_level)
    assert handler.messages == []
    assert second.cache_hits > first.cache_hits
    assert second.nn_evals < first.nn_evals
    params = jax.device_get(driver.batch.shards[0].params)
    assert int(params.max_collision_events[0]) == 3
    assert int(params.max_collision_visits[0]) == 9
    assert float(params.collision_scaling_power[0]) == 2.0
    assert not bool(params.certainty[0])


def test_pv_lines_follow_the_best_child_from_each_root_move(driver):
    """The continuations the driver reads (``search.view``'s scanned loop) against a
    plain-Python walk of the same tree: from each root move's child, lc0's best child
    (most visits, then Q from the mover's side, then prior) until a node has no visited
    child or the length runs out."""
    import numpy as np

    from zerochess.chess.policy_map import index_to_move
    from zerochess.uci.driver import PV_LENGTH

    board = chess.Board(POSITIONS[4])
    driver.start(board, SearchConfig(), seed=5)
    driver.search(300, None, lambda _: False)
    t = jax.tree.map(lambda a: np.asarray(a[0]), jax.device_get(driver.batch.state.tree))
    rows = list(range(min(8, len(driver.moves))))
    result = driver.result(rows)
    deep = 0
    for row in rows:
        start = int(t.edge_start[0])
        node, expected, b = int(t.edges.child[start + row]), [], board.copy()
        b.push(driver.moves[row])
        while len(expected) < PV_LENGTH and node >= 0:
            s, n = int(t.edge_start[node]), int(t.num_legal[node])
            kids = [int(c) for c in t.edges.child[s:s + n]] if t.status[node] == 0 else []
            visited = [(k, c) for k, c in enumerate(kids) if c >= 0 and t.visits[c] > 0]
            if not visited:
                break
            k, node = max(visited, key=lambda kc: (
                t.visits[kc[1]], (t.wl_sum[kc[1]] / t.visits[kc[1]]),
                float(t.edges.prior[s + kc[0]])))
            move = index_to_move(b, int(t.edges.move[s + k]))
            expected.append(move)
            b.push(move)
        deep = max(deep, len(expected))
        if result.visits[result.moves.index(driver.moves[row])] > 0:
            assert result.pvs[result.moves.index(driver.moves[row])] == expected, f"row {row}"
    assert deep >= 3  # the search is deep enough that the walk is more than one step


def test_a_new_tree_written_over_the_last_is_a_new_drivers_tree(driver):
    """A position that does not continue the last search gets a new tree written over the
    last one (``Searcher.reset``: allocating one cost more than the rest of a start at
    the default size): its search is the one a new driver makes (same seed, same
    settings, empty caches), and a ``searchmoves`` list applies as there."""
    board = chess.Board(POSITIONS[3])
    config = SearchConfig(dirichlet_epsilon=0.25)  # the tree's random key matters
    other = SearchDriver(load_model("builtin"), 2048,
                         searcher_kwargs={"leaves_per_step": 16, "cache_size": 4096})
    for allow in (None, [chess.Move.from_uci("e1d1"), chess.Move.from_uci("d2d4")]):
        driver.start(chess.Board(POSITIONS[4]), SearchConfig(n_scl=3), seed=1)
        driver.search(80, None, lambda _: False)
        assert driver.batch is not None  # the next start writes over this tree
        driver.clear_cache()
        driver.start(board, config, seed=5, allow=allow)
        assert driver.reused_visits == 0
        driver.search(64, None, lambda _: False)
        got = driver.result()
        other.forget()
        other.clear_cache()
        other.start(board, config, seed=5, allow=allow)
        other.search(64, None, lambda _: False)
        want = other.result()
        assert got.moves == want.moves
        assert got.visits.tolist() == want.visits.tolist()
        assert got.root_visits == want.root_visits == 65
        assert got.best_move == want.best_move
        if allow:
            assert {m for m, v in zip(got.moves, got.visits, strict=True) if v} <= set(allow)


def test_a_deferred_warmup_never_compiles_in_a_search():
    """``warmup(defer=True)`` (what ``isready`` waits for in ``zerochess uci``): until
    ``warmup_rest`` has run, a continued game starts a new tree and a time-trouble move
    comes from the root's priors, both without compiling; afterwards the tree is reused.
    (A driver of its own, first in no particular order: the module's driver compiles the
    same programs, so this one may find them compiled; it checks the fallbacks' paths.)"""
    drv = SearchDriver(load_model("builtin"), 2048,
                       searcher_kwargs={"leaves_per_step": 16, "cache_size": 4096})
    drv.warmup(defer=True)
    assert not drv.reuse_ready and not drv.policy_ready
    board = chess.Board()
    board.push_san("e4")
    handler = _Compiles()
    logging.getLogger("jax").addHandler(handler)
    try:
        with jax.log_compiles(True):
            drv.start(board, SearchConfig(), seed=1)
            drv.search(24, None, lambda _: False)
            best = drv.result().best_move
            board.push(best)
            board.push(next(iter(board.legal_moves)))
            if not drv.reuse_ready:  # not compiled yet (another test may have): new tree
                drv.start(board, SearchConfig(), seed=1)
                assert drv.reused_visits == 0
            move = drv.policy_move(board)
            assert move in board.legal_moves
    finally:
        logging.getLogger("jax").removeHandler(handler)
    assert [m for m in handler.messages if "advance" in m or "policy" in m] == []
    drv.warmup_rest()
    assert drv.reuse_ready and drv.policy_ready
    drv.start(board, SearchConfig(), seed=1)
    drv.search(24, None, lambda _: False)
    board.push(drv.result().best_move)
    drv.start(board, SearchConfig(), seed=1)
    assert drv.reused_visits > 0  # tree reuse once compiled
