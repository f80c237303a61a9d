"""Tree reuse (``Searcher.advance``): the rerooted tree against a plain-Python re-indexing
of the kept subtree (read from the original tree by its child links), two-fold draws
against python-chess's repetition rule, the root's history against python-chess's game,
search continuing after the advance, restarts, and no recompilation."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import chess
import jax
import numpy as np
import pytest

from zerochess.chess.encoding import encode_board, planes_from_arrays
from zerochess.chess.policy_map import index_to_move, move_to_index
from zerochess.chess.rules import GameStatus
from zerochess.chess.state import from_board
from zerochess.errors import PositionError
from zerochess.neural.toy import linear_model
from zerochess.search.api import NoLegalMovesError, Searcher
from zerochess.search.config import SearchConfig
from zerochess.search.history import input_history
from zerochess.search.reroot import MAX_PLIES

import searchers

MODEL = linear_model(seed=3)
NODES = searchers.NODES
BATCH = 2  # every batch of this module: one compiled set of programs
# kings and locked pawns: few moves, so the trees hold many repetitions
SHUFFLE = "k7/p7/P7/8/8/8/8/K7 w - - 0 1"
OPENING = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"


@pytest.fixture(scope="module")
def searcher() -> Searcher:
    return Searcher(MODEL, max_nodes=NODES, shards=1)


# --- the tree on the host ------------------------------------------------------------------


def host_tree(batch, b: int) -> dict:
    """Tree ``b`` of ``batch`` as Python dicts: per node its fields and, for expanded
    nodes, ``edges``: move index -> (child, prior, frozen)."""
    t = jax.tree.map(lambda a: np.asarray(a[b]), jax.device_get(batch.state.tree))
    nodes = {}
    for i in range(int(t.node_count)):
        node = dict(parent=int(t.parent[i]), depth=int(t.depth[i]), visits=int(t.visits[i]),
                    wl=float(t.wl_sum[i]), d=float(t.d_sum[i]), lower=int(t.lower[i]),
                    upper=int(t.upper[i]), plies=int(t.plies[i]), status=int(t.status[i]),
                    repetitions=int(t.repetitions[i]), raw_wdl=t.raw_wdl[i].copy(),
                    board=t.position.board[i].copy(), key=tuple(t.key[i]), edges={})
        if node["status"] == GameStatus.ONGOING and node["visits"] > 0:
            start = int(t.edge_start[i])
            for s in range(int(t.num_legal[i])):
                node["edges"][int(t.edges.move[start + s])] = (
                    int(t.edges.child[start + s]), float(t.edges.prior[start + s]),
                    int(t.edges.frozen[start + s]))
        nodes[i] = node
    return dict(nodes=nodes, root_prior=np.asarray(t.root_prior), history=t.root_history,
                tree=t)


def node_boards(tree: dict, board: chess.Board) -> dict[int, chess.Board]:
    """python-chess boards (game history included) of every evaluated node, by links."""
    out = {0: board.copy()}
    stack = [0]
    while stack:
        i = stack.pop()
        for move, (child, _, _) in tree["nodes"][i]["edges"].items():
            if child >= 0 and tree["nodes"][child]["visits"] > 0:
                b = out[i].copy()
                b.push(index_to_move(b, move))
                out[child] = b
                stack.append(child)
    return out


def twofold_draw(board: chess.Board, depth: int) -> bool:
    """The search's repetition rule by python-chess: the position occurred twice before
    (within the halfmove clock), or once at most ``depth`` plies back (inside the tree)."""
    key = board._transposition_key()
    replay = board.copy()
    count, nearest = 0, 0
    for back in range(1, min(board.halfmove_clock, len(board.move_stack)) + 1):
        replay.pop()
        if back % 2 == 0 and replay._transposition_key() == key:
            count += 1
            nearest = nearest or back
    return count >= 2 or (count == 1 and nearest <= depth)


def reference_reroot(old: dict, board: chess.Board, line: list[chess.Move], n_scl: int | None):
    """What the rerooted tree must hold, by old node index: plain Python over the old
    tree's child links and python-chess's repetition rule."""
    nodes = old["nodes"]
    boards = node_boards(old, board)
    root, b = 0, board.copy()
    for move in line:
        root = nodes[root]["edges"][move_to_index(b, move)][0]
        b.push(move)
    k = len(line)
    kept, stack = [], [root]
    while stack:  # the subtree by child links
        i = stack.pop()
        kept.append(i)
        stack += [c for c, _, _ in nodes[i]["edges"].values() if c >= 0 and nodes[c]["visits"]]
    removed = {i for i in kept if nodes[i]["status"] == GameStatus.REPETITION
               and not twofold_draw(boards[i], nodes[i]["depth"] - k)}
    order = sorted(set(kept) - removed)
    rank = {o: j for j, o in enumerate(order)}

    def ancestors(i):
        while i != root:
            i = nodes[i]["parent"]
            yield i

    expect = {o: dict(nodes[o]) for o in order}
    for r in removed:
        for dist, a in enumerate(ancestors(r), start=1):
            expect[a]["visits"] -= nodes[r]["visits"]
            expect[a]["wl"] -= (-1) ** dist * nodes[r]["wl"]
            expect[a]["d"] -= nodes[r]["d"]
    touched = {a for r in removed for a in ancestors(r)}
    for o in order:
        e = expect[o]
        e["depth"] = nodes[o]["depth"] - k
        e["parent"] = -1 if o == root else rank[nodes[o]["parent"]]
        edges = {}
        for move, (c, prior, frozen) in nodes[o]["edges"].items():
            child = rank.get(c, -1)
            if e["depth"] % 2 == 0:
                frozen = 0
            elif k % 2 == 1:  # newly an opponent node: frozen now if over the limit
                visits = nodes[c]["visits"] if c >= 0 else 0
                frozen = visits if n_scl is not None and e["visits"] - 1 >= n_scl else 0
            edges[move] = (child, prior, frozen)
        e["edges"] = edges
        e["touched"] = o in touched
    return expect, rank, root, removed, boards


def check_against_reference(new: dict, expect: dict, rank: dict) -> None:
    nodes = new["nodes"]
    assert len(nodes) == len(expect)
    for o, e in expect.items():
        got = nodes[rank[o]]
        for name in ("parent", "depth", "visits", "plies", "status", "repetitions", "key"):
            assert got[name] == e[name], (o, name, got[name], e[name])
        np.testing.assert_allclose(got["wl"], e["wl"], atol=1e-4)
        np.testing.assert_allclose(got["d"], e["d"], atol=1e-4)
        if not e["touched"]:
            assert (got["lower"], got["upper"]) == (e["lower"], e["upper"]), o
        assert got["lower"] <= got["upper"]
        np.testing.assert_array_equal(got["raw_wdl"], e["raw_wdl"])
        np.testing.assert_array_equal(got["board"], e["board"])
        assert got["edges"].keys() == e["edges"].keys()
        for move, (child, prior, frozen) in e["edges"].items():
            g = got["edges"][move]
            assert g[0] == child, (o, move)
            assert g[2] == frozen, (o, move, g[2], frozen)
            if rank[o] != 0:
                assert g[1] == prior


def best_line(batch, searcher, b: int, plies: int) -> list[chess.Move]:
    result = searcher.results(batch)[b]
    return result.pv[:plies]


# --- (a) (b) the kept subtree, node by node ------------------------------------------------


CASES = [  # (fen, plies advanced, config)
    (chess.STARTING_FEN, 1, SearchConfig()),
    (OPENING, 2, SearchConfig()),
    (OPENING, 1, SearchConfig(n_scl=3)),
    (chess.STARTING_FEN, 2, SearchConfig(n_scl=3)),
    (SHUFFLE, 1, SearchConfig()),
    (SHUFFLE, 2, SearchConfig(n_scl=4)),
]


@pytest.mark.parametrize("fen,plies,config", CASES)
def test_rerooted_tree_equals_python_reindexing(searcher, fen, plies, config):
    board = chess.Board(fen)
    other = chess.Board(OPENING)
    batch = searcher.run(searcher.init([board, other], [config, SearchConfig()], seed=5), 120)
    old, before = host_tree(batch, 0), host_tree(batch, 1)
    line = best_line(batch, searcher, 0, plies)
    assert len(line) == plies
    expect, rank, root, _, _ = reference_reroot(old, board, line, config.n_scl)
    after = board.copy()
    for move in line:
        after.push(move)
    new_batch = searcher.advance(batch, [line, []])
    new = host_tree(new_batch, 0)
    check_against_reference(new, expect, rank)
    result = searcher.results(new_batch)[0]
    assert result.reused_visits == expect[root]["visits"] == result.root_visits
    assert result.playouts == 0
    # no noise: the root's priors are its stored ones
    root_moves = sorted(new["nodes"][0]["edges"])
    np.testing.assert_array_equal(
        np.sort(new["root_prior"][:len(root_moves)]),
        np.sort([new["nodes"][0]["edges"][m][1] for m in root_moves]))
    # the untouched tree: same root, same statistics (plies 0 keeps it)
    kept = host_tree(new_batch, 1)  # (``advance`` consumed ``batch``, as ``run`` does)
    assert kept["nodes"].keys() == before["nodes"].keys()
    assert all(kept["nodes"][i]["visits"] == before["nodes"][i]["visits"] for i in kept["nodes"])
    np.testing.assert_array_equal(kept["root_prior"], before["root_prior"])


def test_root_position_and_history_equal_a_fresh_init(searcher):
    board = chess.Board(OPENING)
    for uci in ("f1c4", "g8f6"):  # a game history before the searched position
        board.push_uci(uci)
    batch = searcher.run(searcher.init([board, board], seed=1), 120)
    line = best_line(batch, searcher, 0, 2)
    after = board.copy()
    for move in line:
        after.push(move)
    new_batch = searcher.advance(batch, [line, line[:1]])
    fresh = searcher.init([after, after], seed=1)
    new_tree = jax.device_get(new_batch.state.tree)
    fresh_tree = jax.device_get(fresh.state.tree)
    for name in ("boards", "repeated", "keys", "num_keys", "repetitions"):
        np.testing.assert_array_equal(getattr(new_tree.root_history, name)[0],
                                      getattr(fresh_tree.root_history, name)[0], err_msg=name)
    pos = from_board(after)
    for name, value in pos._asdict().items():
        np.testing.assert_array_equal(getattr(new_tree.position, name)[0, 0], value,
                                      err_msg=name)
    np.testing.assert_array_equal(new_tree.key[0, 0], fresh_tree.key[0, 0])
    assert new_batch.boards[0].move_stack == after.move_stack
    # the network input of the root and of every kept node at depth 1 and 2, against
    # python-chess's game (lc0's encoder over the board's move stack)
    one = jax.tree.map(lambda a: a[0], new_tree)
    new = host_tree(new_batch, 0)
    boards = node_boards(new, after)
    for i, b in list(boards.items())[:12]:
        n = new["nodes"][i]
        hist_boards, repeated = input_history(one, np.int32(n["parent"]), np.int32(n["depth"]),
                                              one.position.board[i], n["repetitions"] > 0)
        planes = planes_from_arrays(np, np.asarray(hist_boards), np.asarray(repeated),
                                    np.int8(b.turn), np.int32(one.position.castling[i]),
                                    np.int32(b.halfmove_clock))
        np.testing.assert_array_equal(planes, encode_board(b), err_msg=b.fen())


# --- (c) search goes on ------------------------------------------------------------------


def check_visit_sums(tree: dict) -> None:
    """Every evaluated, unproven node: 1 + its children's visits (nothing in flight)."""
    for i, n in tree["nodes"].items():
        if n["visits"] == 0 or n["status"] != GameStatus.ONGOING or (
                n["lower"] == n["upper"] and i != 0):
            continue
        children = sum(tree["nodes"][c]["visits"] for c, _, _ in n["edges"].values() if c >= 0)
        assert n["visits"] == 1 + children, i


def test_search_continues_after_advance(searcher):
    boards = [chess.Board(OPENING), chess.Board(SHUFFLE)]
    configs = [SearchConfig(), SearchConfig(n_scl=3, dirichlet_epsilon=0.25)]
    batch = searcher.run(searcher.init(boards, configs, seed=2), 100)
    lines = [best_line(batch, searcher, b, 2) for b in range(BATCH)]
    batch = searcher.advance(batch, lines)
    reused = [r.root_visits for r in searcher.results(batch)]
    batch = searcher.run(batch, 40)
    for b, result in enumerate(searcher.results(batch)):
        assert result.reused_visits == reused[b] > 1
        assert result.playouts == 40
        assert result.root_visits == reused[b] + 40 == 1 + result.visits.sum()
        assert result.best_move in result.board.legal_moves
        check_visit_sums(host_tree(batch, b))
    # the noisy tree's root priors are a distribution with fresh noise on them
    prior = host_tree(batch, 1)["root_prior"]
    assert abs(prior.sum() - 1) < 1e-3


def test_proven_mate_found_after_advance(searcher):
    # black to move; after ...Kh8 white mates with Ra8
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 b - - 0 1")
    batch = searcher.run(searcher.init([board, board], seed=0), 60)
    batch = searcher.advance(batch, [[chess.Move.from_uci("g8h8")], [chess.Move.from_uci("h7h6")]])
    batch = searcher.run(batch, 64)
    result = searcher.results(batch)[0]
    mated = result.board.copy()
    mated.push(result.best_move)
    assert mated.is_checkmate()
    assert result.proven(result.best_index) == 1 and result.mate() == 1


# --- (d) search-contempt parity ------------------------------------------------------------


def test_frozen_counts_follow_the_parity(searcher):
    board = chess.Board(OPENING)
    config = SearchConfig(n_scl=2)
    batch = searcher.run(searcher.init([board, board], config, seed=3), 150)
    old = host_tree(batch, 0)
    frozen_odd = sum(1 for n in old["nodes"].values() if n["depth"] % 2 == 1
                     and any(f for _, _, f in n["edges"].values()))
    assert frozen_odd > 0  # the test sees frozen nodes
    one = best_line(batch, searcher, 0, 1)
    two = best_line(batch, searcher, 1, 2)
    olds = [old, host_tree(batch, 1)]
    new_batch = searcher.advance(batch, [one, two])
    for b, line in ((0, one), (1, two)):
        expect, rank, _, _, _ = reference_reroot(olds[b], board, line, 2)
        new = host_tree(new_batch, b)
        check_against_reference(new, expect, rank)
        for n in new["nodes"].values():
            if n["depth"] % 2 == 0:
                assert not any(f for _, _, f in n["edges"].values())
    # after one ply the former own-side nodes with n_scl visits are frozen now
    new = host_tree(new_batch, 0)
    assert any(any(f for _, _, f in n["edges"].values()) for n in new["nodes"].values()
               if n["depth"] % 2 == 1)
    searcher.results(searcher.run(new_batch, 30))


def frozen_flags(batch) -> tuple[list[bool], list[bool]]:
    """Each tree's ``has_frozen`` (what selection's shortcut reads) and whether the used
    part of its pool (entries before ``edge_count``; those past it are stale) holds a
    frozen count."""
    tree = jax.device_get(batch.shards[0].tree)
    return ([bool(x) for x in tree.has_frozen],
            [bool((row[:count] > 0).any())
             for row, count in zip(tree.edges.frozen, tree.edge_count, strict=True)])


def test_the_frozen_flag_follows_the_frozen_counts(searcher):
    """``Tree.has_frozen`` says exactly whether a tree holds frozen counts: set by the
    backup that freezes, recomputed by advance (a ply flips the parity), cleared by init."""
    board = chess.Board(OPENING)
    batch = searcher.run(searcher.init([board, board], [SearchConfig(n_scl=2), SearchConfig()],
                                       seed=3), 150)
    flags, counts = frozen_flags(batch)
    assert counts == [True, False] and flags == counts
    one = best_line(batch, searcher, 0, 1)
    batch = searcher.advance(batch, [one, []])
    flags, counts = frozen_flags(batch)
    assert counts[0] and flags == counts
    # two plies keep the parity; a line out of the tree starts afresh, with nothing frozen
    batch = searcher.run(batch, 60)
    two = best_line(batch, searcher, 0, 2)
    batch = searcher.advance(batch, [two, [chess.Move.from_uci("a2a3")]])
    flags, counts = frozen_flags(batch)
    assert flags == counts
    batch = searcher.init([board, board], [SearchConfig(), SearchConfig(n_scl=2)], seed=3)
    assert frozen_flags(batch) == ([False, False], [False, False])


# --- (e) two-fold draws whose first occurrence left the tree -------------------------------


def test_two_fold_draws_above_the_new_root_are_undone(searcher):
    board = chess.Board(SHUFFLE)
    batch = searcher.run(searcher.init([board, board], seed=4), 150)
    old = host_tree(batch, 0)
    boards = node_boards(old, board)
    # the search's draws agree with python-chess before the advance
    for i, b in boards.items():
        if old["nodes"][i]["status"] in (GameStatus.ONGOING, GameStatus.REPETITION):
            assert (old["nodes"][i]["status"] == GameStatus.REPETITION) == twofold_draw(
                b, old["nodes"][i]["depth"]), b.fen()
    # a root child whose subtree repeats the old root: that draw is gone after the move
    stale_lines = []
    for move, (child, _, _) in old["nodes"][0]["edges"].items():
        if child < 0:
            continue
        line = [index_to_move(board, move)]
        _, _, _, removed, _ = reference_reroot(old, board, line, None)
        if removed:
            stale_lines.append((len(removed), line, child))
    assert stale_lines, "the tree holds no two-fold draw of the root"
    _, line, child = max(stale_lines, key=lambda x: x[0])
    expect, rank, root, removed, _ = reference_reroot(old, board, line, None)
    new_batch = searcher.advance(batch, [line, []])
    new = host_tree(new_batch, 0)
    check_against_reference(new, expect, rank)
    assert searcher.results(new_batch)[0].reused_visits == (
        old["nodes"][child]["visits"] - sum(old["nodes"][r]["visits"] for r in removed))
    after = board.copy()
    after.push(line[0])
    for i, b in node_boards(new, after).items():
        n = new["nodes"][i]
        if n["status"] in (GameStatus.ONGOING, GameStatus.REPETITION):
            assert (n["status"] == GameStatus.REPETITION) == twofold_draw(b, n["depth"]), b.fen()
    # the undone positions are searched again, as new leaves judged with the game
    batch = searcher.run(new_batch, 60)
    tree = host_tree(batch, 0)
    check_visit_sums(tree)
    for i, b in node_boards(tree, after).items():
        n = tree["nodes"][i]
        if n["status"] in (GameStatus.ONGOING, GameStatus.REPETITION):
            assert (n["status"] == GameStatus.REPETITION) == twofold_draw(b, n["depth"]), b.fen()


# --- (f) restarts ---------------------------------------------------------------------------


def test_move_outside_the_tree_restarts_like_init(searcher):
    board = chess.Board()
    batch = searcher.run(searcher.init([board, board], seed=6), 8)
    tree = host_tree(batch, 0)
    unvisited = [index_to_move(board, m) for m, (c, _, _) in tree["nodes"][0]["edges"].items()
                 if c < 0]
    move = unvisited[0]
    after = board.copy()
    after.push(move)
    long_line = [chess.Move.from_uci(u) for u in
                 ("g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8", "e2e4")]
    far = board.copy()
    for m in long_line:
        far.push(m)
    assert len(long_line) > MAX_PLIES
    new = searcher.run(searcher.advance(batch, [[move], long_line]), 30)
    fresh = searcher.run(searcher.init([after, far], seed=99), 30)
    for got, want in zip(searcher.results(new), searcher.results(fresh), strict=True):
        assert got.board.fen() == want.board.fen()
        assert got.moves == want.moves
        np.testing.assert_array_equal(got.visits, want.visits)
        np.testing.assert_allclose(got.q, want.q, rtol=1e-5)
        assert got.reused_visits == 0 and got.playouts == want.playouts
        assert got.best_move == want.best_move


def _with_tree(batch, tree):
    """``batch`` with its one shard's trees replaced by ``tree`` (host arrays)."""
    state = batch.shards[0].replace(tree=jax.device_put(tree))
    return dataclasses.replace(batch, shards=(state,))


def _fill_past(arr: np.ndarray, end: int, value) -> np.ndarray:
    out = np.array(arr)
    out[:, end:] = value
    return out


def test_advance_leaves_the_unused_pool_alone(searcher):
    """The pool is re-packed in place up to its used entries: entries past every tree's
    ``edge_count`` are neither read nor written (they were cleared before: a pass over the
    whole pool, 2.6M entries per tree at the UCI engine's default size)."""
    board = chess.Board(OPENING)
    batch = searcher.run(searcher.init([board, board], seed=4), 100)
    tree = jax.device_get(batch.shards[0].tree)
    end = int(tree.edge_count.max())
    marks = {"move": 1234, "prior": 0.5, "child": 777, "frozen": 99}
    tree = tree.replace(edges=tree.edges.replace(**{
        name: _fill_past(getattr(tree.edges, name), end, value)
        for name, value in marks.items()}))
    batch = _with_tree(batch, tree)
    line = best_line(batch, searcher, 0, 1)
    expect, rank, _, _, _ = reference_reroot(host_tree(batch, 0), board, line, None)
    new = searcher.advance(batch, [line, []])
    after = jax.device_get(new.shards[0].tree)
    for name, value in marks.items():
        assert (np.asarray(getattr(after.edges, name))[:, end:] == value).all(), name
    # and the tree was rerooted from the marked pool as from any other
    check_against_reference(host_tree(new, 0), expect, rank)


def test_a_tree_given_no_moves_is_left_exactly_as_it_was(searcher):
    """``None`` leaves a tree untouched, every array of it whole, while the other tree
    of the batch is moved in place by the same loops (its writes are per tree)."""
    board = chess.Board(OPENING)
    batch = searcher.run(searcher.init([chess.Board(), board], SearchConfig(n_scl=3),
                                       seed=7), 120)
    before = jax.tree.map(lambda a: np.asarray(a)[1], jax.device_get(batch.shards[0].tree))
    line = best_line(batch, searcher, 0, 1)
    new = searcher.advance(batch, [line, None])
    after = jax.tree.map(lambda a: np.asarray(a)[1], jax.device_get(new.shards[0].tree))
    for path, (x, y) in zip(jax.tree_util.tree_leaves_with_path(before),
                            zip(jax.tree.leaves(before), jax.tree.leaves(after), strict=True),
                            strict=True):
        np.testing.assert_array_equal(x, y, err_msg=jax.tree_util.keystr(path[0]))
    assert searcher.results(new)[0].reused_visits > 1  # the other tree was moved


def test_a_run_that_would_move_up_the_pool_restarts_the_tree(searcher):
    """In-place re-packing needs every kept node's edge run to move down the pool or stay:
    runs are allocated in node order, so every tree a search makes keeps it. A tree that
    breaks it (two runs swapped; the tree is otherwise the same) is not re-packed from a
    half-written pool: the advance starts it afresh, as for a move outside the tree."""
    board = chess.Board(OPENING)
    batch = searcher.run(searcher.init([board, board], seed=4), 100)
    before = searcher.results(batch)
    tree = jax.device_get(batch.shards[0].tree)
    expanded = [i for i in range(1, int(tree.node_count[0]))
                if tree.status[0, i] == GameStatus.ONGOING and tree.visits[0, i] > 0]
    a, b = next((a, b) for a in expanded for b in expanded
                if a < b and tree.num_legal[0, a] == tree.num_legal[0, b])
    starts = np.array(tree.edge_start)
    run_a = slice(int(starts[0, a]), int(starts[0, a]) + int(tree.num_legal[0, a]))
    run_b = slice(int(starts[0, b]), int(starts[0, b]) + int(tree.num_legal[0, b]))
    assert run_a.start < run_b.start  # allocated in node order
    starts[0, a], starts[0, b] = run_b.start, run_a.start

    def swapped(arr):
        out = np.array(arr)
        out[0, run_a], out[0, run_b] = np.array(arr)[0, run_b], np.array(arr)[0, run_a]
        return out

    tree = tree.replace(edge_start=starts, edges=jax.tree.map(swapped, tree.edges))
    new = searcher.advance(_with_tree(batch, tree), [[], []])
    got = searcher.results(new)
    assert got[0].reused_visits == 0 and got[0].root_visits == 1  # started afresh
    assert got[1].reused_visits == before[1].root_visits  # the other tree kept whole


def test_bad_moves_are_clear_errors(searcher):
    board = chess.Board()
    batch = searcher.init([board, board], seed=0)
    with pytest.raises(PositionError, match="e2e5"):
        searcher.advance(batch, [[chess.Move.from_uci("e2e5")], []])
    with pytest.raises(ValueError, match="2 trees"):
        searcher.advance(batch, [[]])
    mate = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    batch = searcher.init([mate, mate], seed=0)
    with pytest.raises(NoLegalMovesError):
        searcher.advance(batch, [[chess.Move.from_uci("a1a8")], []])


def test_advance_is_reproducible(searcher):
    boards = [chess.Board(OPENING), chess.Board()]
    config = SearchConfig(dirichlet_epsilon=0.25, n_scl=3)

    def play():
        batch = searcher.run(searcher.init(boards, config, seed=8), 60)
        lines = [best_line(batch, searcher, b, 2) for b in range(BATCH)]
        batch = searcher.run(searcher.advance(batch, lines), 40)
        return [(r.visits.tolist(), r.prior.tolist()) for r in searcher.results(batch)]

    assert play() == play()


# --- (g) no recompilation -------------------------------------------------------------------


class _Compiles(logging.Handler):
    def __init__(self):
        super().__init__()
        self.names: list[str] = []

    def emit(self, record):
        message = record.getMessage()
        if "Compiling" in message or "compiling" in message:
            self.names.append(message[:120])


def test_advance_does_not_recompile(searcher):
    boards = [chess.Board(OPENING), chess.Board(SHUFFLE)]
    batch = searcher.run(searcher.init(boards, seed=1), 50)
    lines = [best_line(batch, searcher, b, 2) for b in range(BATCH)]
    batch = searcher.run(searcher.advance(batch, lines), 20)  # everything compiled
    searcher.results(batch)
    handler = _Compiles()
    logger = logging.getLogger("jax")
    logger.addHandler(handler)
    old_level = logger.level
    logger.setLevel(logging.DEBUG)
    jax.config.update("jax_log_compiles", True)
    try:
        lines = [best_line(batch, searcher, 0, 1), []]  # other lengths, other moves
        batch = searcher.run(searcher.advance(batch, lines), 20)
        searcher.results(batch)
        assert handler.names == []
        jax.jit(lambda x: x * 3 + 1)(np.float32(2))  # a new program: the handler sees it
        assert handler.names
    finally:
        jax.config.update("jax_log_compiles", False)
        logger.removeHandler(handler)
        logger.setLevel(old_level)


# --- the README's example -------------------------------------------------------------------


@pytest.mark.slow  # the built-in network and its own compiled searcher: minutes on 2 cores
def test_readme_tree_reuse_example_runs(capsys):
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = text.split("<!-- tree-reuse -->", 1)[1].split("```python", 1)[1].split("```")[0]
    assert len(block.strip().splitlines()) <= 12
    exec(compile(block, "README.md", "exec"), {})
    reused, playouts, root = map(int, capsys.readouterr().out.split())
    assert reused > 1 and playouts == 200 and root == reused + playouts
