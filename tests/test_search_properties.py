"""Invariants of the search (hypothesis), tree capacity, determinism, search-contempt
statistics, and mate-in-one on the built-in evaluator."""

from __future__ import annotations

import random

import chess
import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from zerochess.chess.expander import Expander
from zerochess.neural import load_model
from zerochess.neural.toy import linear_model
from zerochess.search.api import NoLegalMovesError, Searcher
from zerochess.search.config import SearchConfig
from zerochess.search.tree import bytes_per_node

from compile_count import count_compiles

BATCH, NODES = 4, 33


def _random_board(seed: int, plies: int) -> chess.Board:
    rng = random.Random(seed)
    board = chess.Board()
    for _ in range(plies):
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(rng.choice(moves))
    while board.is_game_over():
        board.pop()
    return board


@pytest.fixture(scope="module")
def searcher():
    return Searcher(linear_model(seed=2), max_nodes=NODES, expander=Expander(0))


def _check_tree(batch, boards):
    t = {k: np.asarray(v) for k, v in (
        ("visits", batch.state.tree.visits), ("in_flight", batch.state.tree.in_flight),
        ("wl_sum", batch.state.tree.wl_sum), ("d_sum", batch.state.tree.d_sum),
        ("num_legal", batch.state.tree.num_legal), ("status", batch.state.tree.status),
        ("parent", batch.state.tree.parent), ("node_count", batch.state.tree.node_count),
        ("edge_start", batch.state.tree.edge_start), ("edge_count", batch.state.tree.edge_count),
        ("child", batch.state.tree.edges.child), ("lower", batch.state.tree.lower),
        ("upper", batch.state.tree.upper))}
    for b in range(len(boards)):
        used = t["node_count"][b]
        owned = []
        for n in range(used):
            if t["status"][b, n] != 0 or t["visits"][b, n] == 0:
                continue
            start, count = t["edge_start"][b, n], t["num_legal"][b, n]
            owned.append((start, start + count))
            children = t["child"][b, start:start + count]
            kids = children[children >= 0]
            assert np.all(kids < used)
            assert np.all(t["parent"][b, kids] == n)
            if kids.size:  # an expanded node: its own evaluation + one visit per simulation
                if n > 0 and t["lower"][b, n] == t["upper"][b, n]:
                    # proven (certainty propagation): later visits stop here, as at lc0's
                    # terminal nodes, and back up its exact value
                    assert t["visits"][b, n] >= 1 + t["visits"][b, kids].sum()
                else:
                    assert t["visits"][b, n] == 1 + t["visits"][b, kids].sum()
            q = t["wl_sum"][b, n] / t["visits"][b, n]
            d = t["d_sum"][b, n] / t["visits"][b, n]
            assert -1 - 1e-5 <= q <= 1 + 1e-5 and -1e-5 <= d <= 1 + 1e-5
        owned.sort()  # edge runs are disjoint and inside the used part of the pool
        assert all(a[1] <= b_[0] for a, b_ in zip(owned, owned[1:], strict=False))
        assert not owned or owned[-1][1] <= t["edge_count"][b]
        assert np.all(t["visits"][b, used:] == 0)
        assert np.all(t["in_flight"][b] == 0)


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seeds=st.lists(st.integers(0, 10_000), min_size=BATCH, max_size=BATCH),
       plies=st.integers(0, 60), sims=st.integers(1, NODES - 1),
       cpuct=st.floats(0.1, 5.0), fpu=st.floats(0.0, 1.0), absolute=st.booleans(),
       n_scl=st.one_of(st.none(), st.integers(1, 20)), eps=st.floats(0.0, 0.5),
       seed=st.integers(0, 2**31))
def test_invariants(searcher, seeds, plies, sims, cpuct, fpu, absolute, n_scl, eps, seed):
    boards = [_random_board(s, plies) for s in seeds]
    cfg = SearchConfig(cpuct=cpuct, fpu_value=fpu, fpu_absolute=absolute, n_scl=n_scl,
                       dirichlet_epsilon=eps)
    batch = searcher.run(searcher.init(boards, cfg, seed), sims)
    _check_tree(batch, boards)
    results = searcher.results(batch)
    for board, res in zip(boards, results, strict=True):
        assert res.root_visits == sims + 1
        assert res.visits.sum() == sims
        assert np.all(np.isnan(res.q) | (np.abs(res.q) <= 1 + 1e-5))
        # a move proven lost has no prior (lc0's MakeTerminal); the rest keep theirs
        lost = res.bound == -1
        assert np.all(res.prior[lost] == 0) and np.all(res.prior >= 0)
        assert res.prior.sum() <= 1 + 1e-4
        if not lost.any():
            assert abs(res.prior.sum() - 1) < 1e-4
        assert res.pv[0] == res.best_move and res.pv[1:] == res.pvs[res.best_index]
        for move, pv in zip(res.moves, res.pvs, strict=True):
            b = board.copy()
            for m in [move, *pv]:
                assert b.is_legal(m)
                b.push(m)
    again = searcher.results(searcher.run(searcher.init(boards, cfg, seed), sims))
    for x, y in zip(results, again, strict=True):  # determinism under a seed
        assert list(x.visits) == list(y.visits) and x.pv == y.pv
        np.testing.assert_array_equal(x.prior, y.prior)


def test_noise_depends_on_seed(searcher):
    boards = [_random_board(s, 10) for s in range(BATCH)]
    cfg = SearchConfig(dirichlet_epsilon=0.25)
    a = searcher.results(searcher.init(boards, cfg, seed=1))
    b = searcher.results(searcher.init(boards, cfg, seed=2))
    assert not np.allclose(a[0].prior, b[0].prior)


def test_resumable_equals_one_run(searcher):
    boards = [_random_board(s, 20) for s in range(BATCH)]
    cfg = SearchConfig(n_scl=3)
    one = searcher.results(searcher.run(searcher.init(boards, cfg, 4), 30))
    batch = searcher.init(boards, cfg, 4)
    for chunk in (7, 0, 13, 10):
        batch = searcher.run(batch, chunk)
        searcher.results(batch)  # reading in between must not disturb the search
    two = searcher.results(batch)
    for x, y in zip(one, two, strict=True):
        assert list(x.visits) == list(y.visits)


def test_full_tree_stops_cleanly():
    s = Searcher(linear_model(seed=2), max_nodes=10, expander=Expander(0))
    boards = [_random_board(s_, 12) for s_ in range(3)]
    batch = s.run(s.init(boards, SearchConfig(), 0), 40)
    _check_tree(batch, boards)
    for res in s.results(batch):
        assert res.nodes_used == 10
        assert res.out_of_nodes and res.dropped_simulations > 0
        assert res.root_visits + res.dropped_simulations >= 41 - 1


def test_bytes_per_node_target():
    assert bytes_per_node() <= 1024


def test_no_legal_moves_is_an_error(searcher):
    mated = chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1")
    with pytest.raises(NoLegalMovesError, match="checkmate"):
        searcher.init([mated], SearchConfig())


def test_frozen_nodes_follow_frozen_distribution():
    """After freezing, visits at a frozen opponent node are multinomial(frozen / n_scl)."""
    n_scl, sims = 4, 120
    s = Searcher(linear_model(seed=4), max_nodes=sims + 1, expander=Expander(0))
    boards = [_random_board(seed, 8 + seed % 30) for seed in range(24)]
    batch = s.run(s.init(boards, SearchConfig(n_scl=n_scl), seed=0), sims)
    t = batch.state.tree
    frozen, child = np.asarray(t.frozen), np.asarray(t.edge_child)
    visits, depth = np.asarray(t.visits), np.asarray(t.depth)
    chi2, dof, nodes = 0.0, 0, 0
    for b, n in zip(*np.nonzero(frozen.sum(-1) > 0), strict=True):
        assert depth[b, n] % 2 == 1 and frozen[b, n].sum() == n_scl
        now = np.where(child[b, n] >= 0, visits[b, np.maximum(child[b, n], 0)], 0)
        after = now - frozen[b, n]
        assert np.all(after >= 0)
        assert np.all(after[frozen[b, n] == 0] == 0)  # never a child outside the frozen set
        total = after.sum()
        support = frozen[b, n] > 0
        if total < 10 or support.sum() < 2:
            continue
        expected = total * frozen[b, n][support] / n_scl
        chi2 += float((((after[support] - expected) ** 2) / expected).sum())
        dof += int(support.sum()) - 1
        nodes += 1
    assert nodes >= 5, "too few frozen nodes with enough visits to test"
    assert stats.chi2.sf(chi2, dof) > 1e-3, (chi2, dof)


MATES_IN_ONE = [  # (FEN, the mating move, checked against python-chess below)
    ("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", "a1a8"),
    ("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 4 4", "f3f7"),
    ("rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq g3 0 2", "d8h4"),
    ("6rk/6pp/8/6N1/8/8/8/6K1 w - - 0 1", "g5f7"),
    ("k7/8/1K6/8/8/8/8/7R w - - 0 1", "h1h8"),
    ("6k1/5ppp/8/8/8/8/1Q3PPP/6K1 w - - 0 1", "b2b8"),
]
PRIOR_AGAINST_MATE = "f3f7"  # the evaluator's policy prefers Bxf7+ to the mate Qxf7#


def _gives_mate(board: chess.Board, move: chess.Move) -> bool:
    after = board.copy()
    after.push(move)
    return after.is_checkmate()


def test_mate_in_one_wins_the_visits_on_builtin():
    """The search, not the best-move tie-break (a visited mate ranks first), finds the
    mate: its Q is exactly +1 (the terminal value backed up) and it holds more than twice
    the visits of any other move after 64 simulations, also where the prior prefers
    another move."""
    s = Searcher(load_model("builtin"), max_nodes=65)
    boards = [chess.Board(fen) for fen, _ in MATES_IN_ONE]
    for (_, uci), board in zip(MATES_IN_ONE, boards, strict=True):
        mates = [m.uci() for m in board.legal_moves if _gives_mate(board, m)]
        assert mates == [uci]
    # without the built-in evaluator's mate check, which would find it before any search
    for (fen, uci), res in zip(MATES_IN_ONE, s.search(boards, SearchConfig(mate_check=False),
                                                      64),
                               strict=True):
        i = [m.uci() for m in res.moves].index(uci)
        others = np.delete(res.visits, i)
        assert res.q[i] == 1.0, (fen, res.q[i])
        assert res.visits[i] > 2 * others.max(), (fen, res.visits[i], others.max())
        assert res.best_move.uci() == uci and res.mates[i]
        if uci == PRIOR_AGAINST_MATE:  # the prior alone would not pick the mate
            assert res.policy[i] < res.policy.max(), (fen, res.policy[i], res.policy.max())
            assert res.visits[i] >= 0.75 * res.visits.sum()


def test_changing_values_never_recompiles(searcher):
    boards = [_random_board(s, 14) for s in range(BATCH)]
    searcher.results(searcher.run(searcher.init(boards, SearchConfig(), 0), 3))
    mixed = [SearchConfig(cpuct=3.0, n_scl=2), SearchConfig(fpu_absolute=True, fpu_value=-0.5),
             SearchConfig(selection="alphazero"), SearchConfig(dirichlet_epsilon=0.3)]

    def searches():
        for sims in (1, 5, 11):
            batch = searcher.run(searcher.init(boards, mixed, sims), sims)
            searcher.results(searcher.reset(batch, [1], boards[:1], mixed[:1], 3))

    searches()  # network sizes not used yet may compile once
    assert count_compiles(searches)[0] == 0


def test_per_tree_budgets_and_seeds(searcher):
    boards = [_random_board(s, 16) for s in range(BATCH)]
    cfg = SearchConfig(n_scl=2, dirichlet_epsilon=0.25)
    budgets = [3, 0, 17, 9]
    seeds = [10, 11, 12, 13]
    res = searcher.results(searcher.run(searcher.init(boards, cfg, seeds), budgets))
    assert [r.root_visits - 1 for r in res] == budgets
    for i in (0, 2):  # a tree's search depends only on its position, config, seed and budget
        alone = searcher.results(searcher.run(
            searcher.init([boards[i]] * BATCH, cfg, [seeds[i]] * BATCH), budgets[i]))
        assert list(alone[BATCH - 1].visits) == list(res[i].visits)
        np.testing.assert_array_equal(alone[0].prior, res[i].prior)


def test_sharding_does_not_change_results():
    boards = [_random_board(s, 6 + s) for s in range(16)]
    cfgs = [SearchConfig(n_scl=2 + i % 3, dirichlet_epsilon=0.2 * (i % 2)) for i in range(16)]
    out = []
    for shards in (1, 2):
        s = Searcher(linear_model(seed=2), max_nodes=NODES, expander=Expander(0), shards=shards)
        batch = s.run(s.init(boards, cfgs, seed=7), [NODES - 1 - i % 5 for i in range(16)])
        assert len(batch.shards) == shards
        out.append(s.results(batch))
    for x, y in zip(*out, strict=True):
        assert list(x.visits) == list(y.visits) and x.pv == y.pv
        np.testing.assert_array_equal(x.prior, y.prior)


def test_search_programs_have_no_host_callbacks(searcher):
    """Only programs without host callbacks can be kept in jax's persistent cache."""
    from zerochess.search import api

    boards = [_random_board(s, 12 + s) for s in range(BATCH)]
    batch = searcher.init(boards, SearchConfig(n_scl=2), seed=3)
    state = batch.state
    limit = state.tree.simulations + 4
    texts = [api._select.lower(state, limit, num_leaves=1).as_text()]
    state, leaves, request, _ = searcher._select(state, limit)
    expansion = searcher.host_expand(jax.device_get(request))
    texts.append(api._prepare.lower(state, None, leaves, expansion, history_length=7).as_text())
    prepared, net = searcher._prepare(state, None, leaves, expansion)
    texts.append(api._network.lower(searcher.model.apply, searcher.model.params, net,
                                    rows=BATCH).as_text())
    outputs = searcher._network(BATCH)(searcher.model.params, net)
    texts.append(api._finish.lower(state, None, leaves, prepared, outputs).as_text())
    assert int(net.count) > 0
    for text in texts:
        assert "callback" not in text.lower()


def test_a_consumed_batch_is_a_user_error(searcher):
    """``run`` updates the trees in place (their device buffers are donated): reading or
    running the batch that was passed to it is a ``UserError`` that names the fix, not
    jax's "Array has been deleted"; the returned batch works (issue 26, item 9)."""
    from zerochess.errors import UserError

    batch = searcher.init([chess.Board()] * BATCH, SearchConfig(), seed=0)
    new = searcher.run(batch, 2)
    uses = {
        "run": lambda: searcher.run(batch, 1),
        "results": lambda: searcher.results(batch),
        "advance": lambda: searcher.advance(batch, [[]] * BATCH),
        "reset": lambda: searcher.reset(batch, [0], [chess.Board()]),
        "state": lambda: batch.state,
        "finished": lambda: batch.finished,
    }
    for name, use in uses.items():
        with pytest.raises(UserError, match="use the batch that call returned") as err:
            use()
        assert "\n" not in str(err.value), name
    assert [r.root_visits for r in searcher.results(new)] == [3] * BATCH
