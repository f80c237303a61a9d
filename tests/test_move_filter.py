"""Per-tree move filters (``MoveFilter``: UCI searchmoves, KataGo allowMoves/avoidMoves with
untilDepth): the device search against the plain-Python reference search with the filter
applied by python-chess, node by node; which edges a filter move names against
python-chess's ``parse_uci``; batch isolation, ``reset``, no recompilation, bad input."""

from __future__ import annotations

import functools

import chess
import numpy as np
import pytest
from test_certainty import MODEL, _device_nodes, _reference
from test_games_networks import _compiled

from zerochess.chess.expander import Expander
from zerochess.chess.policy_map import legal_move_indices
from zerochess.errors import ConfigError, PositionError
from zerochess.search import MoveFilter, SearchConfig, Searcher
from zerochess.search.move_filter import (
    NUM_KEYS,
    _board_codes,
    edge_keys,
    move_keys,
)

import gather_reference
import searchers
from gather_reference import walk

SIMS = 120
POSITIONS = [
    chess.Board(),
    chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"),
    chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"),
]
M = chess.Move.from_uci


def names(board: chess.Board, uci: str, move: chess.Move) -> bool:
    """python-chess reads ``uci`` as ``move`` in ``board`` (the reference semantics), and
    a promotion suffix names a promotion (python-chess reads "e1g1b" as castling)."""
    try:
        return board.parse_uci(uci) == move and (len(uci) == 4 or move.promotion is not None)
    except ValueError:
        return False


def reference_excluded(board: chess.Board, depth: int, f: MoveFilter) -> set[chess.Move]:
    """The legal moves of ``board`` (a node at ``depth``) ``f`` excludes, by python-chess;
    none when that would be all of them."""
    if depth >= f.until_depth:
        return set()
    out = set()
    for move in board.legal_moves:
        avoided = any(names(board, m.uci(), move) for m in f.avoid)
        outside = f.allow is not None and not any(names(board, m.uci(), move) for m in f.allow)
        if avoided or outside:
            out.add(move)
    return set() if out == set(board.legal_moves) else out


def filtered_reference(board, cfg, seed, index, f: MoveFilter | None, monkeypatch):
    """The plain-Python reference search with ``f`` applied in its child selection."""
    original = gather_reference._pick

    def pick(node, cfg, n_scl, uniform, draw, moves_left=False):
        if f is None or node.frozen is not None or (node.depth % 2 == 1 and node.n - 1 >= n_scl):
            return original(node, cfg, n_scl, uniform, draw, moves_left)
        excluded = reference_excluded(node.board, node.depth, f)
        scores = gather_reference._scores(node, cfg, moves_left)
        scores = [-np.inf if m in excluded else s for m, s in zip(node.moves, scores,
                                                                   strict=True)]
        return max(range(len(scores)), key=lambda i: (scores[i], -i))

    monkeypatch.setattr(gather_reference, "_pick", pick)
    ref = _reference(board, cfg, 1, seed, index)
    ref.run(SIMS)
    monkeypatch.setattr(gather_reference, "_pick", original)
    return ref


@functools.cache
def _searcher() -> Searcher:
    return Searcher(MODEL, max_nodes=searchers.NODES, leaves_per_step=1, expander=Expander(0),
                    groups=1, shards=1)


@pytest.fixture(scope="module")
def searcher() -> Searcher:
    return _searcher()


FILTERS = [  # (position, filter)
    (0, MoveFilter(allow=[M("a2a3"), M("g1f3"), M("e2e4")])),  # searchmoves
    (1, MoveFilter(avoid=[M("f1c4"), M("f1b5"), M("d2d4"), M("g8f6"), M("f8c5")],
                   until_depth=3)),
    (0, MoveFilter(allow=[M("d2d4"), M("e2e4"), M("e7e5"), M("d7d5"), M("g1f3")],
                   until_depth=3)),
    (2, MoveFilter(avoid=[M("a1a8"), M("g2g3")], until_depth=2)),
]


def test_filtered_search_equals_filtered_reference(searcher, monkeypatch):
    """Every node's visits equal the reference search whose selection skips the moves
    python-chess reads the filter as excluding; excluded moves get no visits at depths <
    until_depth and avoided moves are searched deeper."""
    boards = [POSITIONS[p] for p, _ in FILTERS]
    filters = [f for _, f in FILTERS]
    cfg = SearchConfig()
    batch = searcher.run(searcher.init(boards, cfg, seed=5, move_filters=filters), SIMS)
    for i, (board, f) in enumerate(zip(boards, filters, strict=True)):
        ref = filtered_reference(board, cfg, 5, i, f, monkeypatch)
        want = {path: n.n for path, n in walk(ref.root).items() if n.n > 0}
        got = {path: v[0] for path, v in _device_nodes(batch.state, i, board).items()}
        assert got == want, (i, sorted(set(got.items()) ^ set(want.items()))[:6])
        # and directly with python-chess: no visited child is an excluded move
        excluded_seen = 0
        for path in got:
            node = board.copy()
            for uci in path:
                node.push_uci(uci)
            if len(path) < f.until_depth:
                banned = reference_excluded(node, len(path), f)
                excluded_seen += len(banned)
                for move in banned:
                    assert (*path, move.uci()) not in got, (i, path, move)
        assert excluded_seen > 0, f"filter {i} excluded nothing: the test is idle"
    # avoided moves are searched past until_depth
    deep = [p for i, f in enumerate(filters) if f.avoid
            for p in _device_nodes(batch.state, i, boards[i])
            if len(p) > f.until_depth and p[-1] in {m.uci() for m in f.avoid}]
    assert deep, "no avoided move was searched past until_depth"


def test_results_show_only_searched_root_moves(searcher):
    board = POSITIONS[0]
    allow = [M("a2a3"), M("g1f3"), M("e2e4")]
    batch = searcher.run(searcher.init([board, board], SearchConfig(), seed=[1, 1],
                                       move_filters=[MoveFilter(allow=allow), None]), 40)
    filtered, plain = searcher.results(batch)
    assert set(filtered.moves) == set(allow)
    assert filtered.best_move in allow
    assert sum(filtered.visits) == 40 and len(filtered.pvs) == len(filtered.prior) == 3
    for k, move in enumerate(filtered.moves):  # the per-move arrays stay aligned
        j = plain.moves.index(move)
        assert filtered.prior[k] == plain.prior[j] and filtered.policy[k] == plain.policy[j]
    assert len(plain.moves) == 20


def test_other_trees_of_the_batch_do_not_see_a_filter(searcher):
    """Tree 1 (no filter) searches exactly as alone, next to tree 0 (filtered) and in a
    reset slot next to a filtered one."""
    board = POSITIONS[1]
    alone = searcher.run(searcher.init([POSITIONS[0], board], SearchConfig(), seed=[1, 7]), 60)
    solo = _device_nodes(alone.state, 1, board)
    top = max((p for p in solo if len(p) == 1), key=lambda p: solo[p][0])
    mixed = searcher.run(searcher.init(
        [board, board], SearchConfig(), seed=[9, 7],
        move_filters=[MoveFilter(avoid=[M(top[0])], until_depth=4), None]), 60)
    assert _device_nodes(mixed.state, 1, board) == solo
    assert _device_nodes(mixed.state, 0, board) != solo


def test_reset_with_and_without_filters_never_recompiles(searcher):
    boards = [POSITIONS[0], POSITIONS[1]]
    batch = searcher.run(searcher.init(boards, SearchConfig(), seed=0), 8)
    searcher.results(batch)
    # the same calls without filters first: what they compile is not the filters' doing
    batch = searcher.run(searcher.reset(batch, [0, 1], boards[::-1], seeds=[5, 6]), 8)
    searcher.results(batch)
    before = _compiled()
    allow = [M("b1c3"), M("h2h3")]
    batch = searcher.reset(batch, [0, 1], [POSITIONS[2], POSITIONS[0]], seeds=[2, 3],
                           move_filters=[None, MoveFilter(allow=allow)])
    batch = searcher.run(batch, 30)
    res = searcher.results(batch)
    assert set(res[1].moves) == set(allow)
    batch = searcher.reset(batch, [1, 0], [POSITIONS[2], POSITIONS[0]], seeds=[3, 4],
                           move_filters=[None, MoveFilter(avoid=[M("e2e4")], until_depth=9)])
    batch = searcher.run(batch, 30)
    res = searcher.results(batch)
    assert M("e2e4") not in res[0].moves and len(res[0].moves) == 19
    assert len(res[1].moves) == POSITIONS[2].legal_moves.count()  # the filter left slot 1
    assert _compiled() == before, "a new filter recompiled a program"


CASES = [  # positions with castling (standard and chess960), promotions, pawns on rank 7
    chess.Board("r3k2r/pPpp1ppp/8/8/8/8/PpPP1PPP/R3K2R w KQkq - 0 1"),
    chess.Board("r3k2r/pPpp1ppp/8/8/8/8/PpPP1PPP/R3K2R b KQkq - 0 1"),
    chess.Board("1r2k1r1/4P3/8/8/8/8/8/4K2R w Kk - 0 1"),
    chess.Board("4k3/8/8/8/8/8/8/Q3K1QR w - - 0 1"),
    chess.Board("4k3/8/8/8/8/8/8/4Q1KR w - - 0 1"),
    chess.Board("2r1k1r1/8/8/8/8/8/8/1R2K1R1 w KQkq - 0 1", chess960=True),
    chess.Board("1rk4r/8/8/8/8/8/8/1RK4R b KQkq - 0 1", chess960=True),
]


@pytest.mark.parametrize("board", CASES, ids=range(len(CASES)))
def test_move_keys_name_what_python_chess_reads(board):
    """For every legal move of the position and every UCI move that could name it (all
    legal moves' UCI, king-to-rook and two-square castling, every promotion piece), the
    key tables match exactly when python-chess's ``parse_uci`` reads the UCI move as it."""
    legal, indices = legal_move_indices(board)
    keys = edge_keys(np, _board_codes(board), np.int8(board.turn == chess.WHITE), indices)
    candidates = {m.uci() for m in legal}
    for m in legal:
        if board.piece_type_at(m.from_square) == chess.KING:  # castling's notations
            candidates |= {chess.square_name(m.from_square) + chess.square_name(t)
                           for t in range(64) if t != m.from_square}
        candidates |= {m.uci()[:4] + p for p in "nbrq"}
    side = 0 if board.turn == chess.WHITE else 1
    checked = 0
    for uci in sorted(candidates):
        move = chess.Move.from_uci(uci)
        mine = set(move_keys(move, side))
        for k, edge in zip(keys, legal, strict=True):
            assert (int(k) in mine) == names(board, uci, edge), (board.fen(), uci, edge.uci())
            checked += names(board, uci, edge)
    assert checked >= len(legal)
    assert int(keys.max()) < NUM_KEYS


@pytest.mark.parametrize("kwargs,error", [
    ({"allow": "e2e4"}, "MoveFilter.allow must be a list of chess.Move, got 'e2e4'"),
    ({"avoid": ["e2e4"]}, "MoveFilter.avoid[0] must be a chess.Move, got 'e2e4'"),
    ({"avoid": [chess.Move.null()]}, "'0000' is not a chess move"),
    ({"avoid": [M("e2e4")], "until_depth": 0}, "until_depth"),
    ({"avoid": [M("e2e4")], "until_depth": True}, "until_depth"),
    ({"avoid": [M("e2e4")], "until_depth": 10**10}, "until_depth"),
    ({"avoid": [M("e2e4")], "until_depth": 1.5}, "until_depth"),
])
def test_bad_filters_are_refused(kwargs, error):
    with pytest.raises(ConfigError, match=error.replace("[", r"\[").replace("]", r"\]")):
        MoveFilter(**kwargs)


@pytest.mark.parametrize("f,error", [
    (MoveFilter(allow=[M("e2e4"), M("e2e5")]), r"allowed move\(s\) \['e2e5'\] are not legal"),
    (MoveFilter(allow=[M("e7e5"), M("d7d5")], until_depth=2), "none of the allowed moves"),
    (MoveFilter(avoid=[m for m in chess.Board().legal_moves]), "excludes every legal move"),
])
def test_filters_that_do_not_fit_the_root_are_refused(searcher, f, error):
    with pytest.raises(PositionError, match=error):
        searcher.init([chess.Board()], move_filters=[f])
    batch = searcher.init([chess.Board()] * 2)
    with pytest.raises(PositionError, match=error):
        searcher.reset(batch, [0], [chess.Board()], move_filters=[f])


def test_move_filters_argument_is_checked(searcher):
    with pytest.raises(ConfigError, match="2 move filters for 1 positions"):
        searcher.init([chess.Board()], move_filters=[None, None])
    with pytest.raises(ConfigError, match="one MoveFilter"):
        searcher.init([chess.Board()], move_filters=MoveFilter())
    with pytest.raises(ConfigError, match=r"move_filters\[0\] must be a MoveFilter"):
        searcher.init([chess.Board()], move_filters=["e2e4"])
    # allow with until_depth > 1 may name replies that are not legal at the root
    batch = searcher.init([chess.Board()] * 2, move_filters=[
        MoveFilter(allow=[M("e2e4"), M("e7e5")], until_depth=2), None])
    assert searcher.results(searcher.run(batch, 5))[0].moves == [M("e2e4")]


def test_advance_drops_the_filter_of_a_moved_tree(searcher):
    """A filter belongs to its search: after ``advance`` the moved tree's new root is
    searched with every move, the untouched tree keeps its filter."""
    board = POSITIONS[0]
    allow = [M("e2e4")]
    # were it kept, the new root (White to move, depth 0 < 3) could play only g1f3
    batch = searcher.init([board, board], seed=[1, 2], move_filters=[
        MoveFilter(allow=[M("e2e4"), M("g1f3")], until_depth=3), MoveFilter(allow=allow)])
    batch = searcher.run(batch, 20)
    batch = searcher.run(searcher.advance(batch, [[M("e2e4"), M("e7e5")], None]), 20)
    moved, kept = searcher.results(batch)
    assert kept.moves == allow
    assert len(moved.moves) == moved.board.legal_moves.count() == 29
    assert (moved.visits > 0).sum() > 1
