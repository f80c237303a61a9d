"""One conformance test that every rules backend passes (as pgx's ``api_test`` does for
its environments): ``zerochess.chess.backend.Rules`` against python-chess, computed here
independently of any backend.

A new backend is added to ``BACKENDS`` and must pass unchanged.
"""

from __future__ import annotations

import random

import chess
import jax
import numpy as np
import pytest

from zerochess.chess import policy_map, state
from zerochess.chess.backend import DeviceRules, HostRules, NoLegalMovesError, Rules
from zerochess.chess.types import MAX_LEGAL_MOVES, Expansion, GameStatus, PositionArrays
from zerochess.errors import ConfigError, PositionError

BACKENDS = {"host": lambda: HostRules(num_workers=0), "device": DeviceRules}


@pytest.fixture(scope="module", params=sorted(BACKENDS))
def rules(request) -> Rules:
    backend = BACKENDS[request.param]()
    yield backend
    backend.close()


def _boards(count: int, seed: int) -> list[chess.Board]:
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        b = (chess.Board.from_chess960_pos(rng.randrange(960)) if rng.random() < 0.2
             else chess.Board())
        for _ in range(rng.randrange(0, 90)):
            moves = list(b.legal_moves)
            if not moves:
                break
            special = [m for m in moves if m.promotion or b.is_castling(m)
                       or b.is_en_passant(m) or b.gives_check(m)]
            b.push(rng.choice(special) if special and rng.random() < 0.4 else rng.choice(moves))
        if not b.is_game_over():
            out.append(b)
    return out


def _status(board: chess.Board) -> int:
    if not any(board.generate_legal_moves()):
        return GameStatus.CHECKMATE if board.is_check() else GameStatus.STALEMATE
    if board.is_insufficient_material():
        return GameStatus.INSUFFICIENT
    if board.halfmove_clock >= 100:
        return GameStatus.RULE50
    return GameStatus.ONGOING


def _first_mate(board: chess.Board) -> int:
    """The slot (ascending index) of the first move that mates at once, -1."""
    moves = sorted(board.legal_moves, key=lambda m: policy_map.move_to_index(board, m))
    for slot, move in enumerate(moves):
        board.push(move)
        mate = board.is_checkmate()
        board.pop()
        if mate:
            return slot
    return -1


def test_expand(rules: Rules):
    boards = _boards(120, seed=5)
    parent = state.stack([state.from_board(b) for b in boards])
    rng = random.Random(9)
    moves = [rng.choice(list(b.legal_moves)) if i % 7 else None for i, b in enumerate(boards)]
    index = np.array([-1 if m is None else policy_map.move_to_index(b, m)
                      for b, m in zip(boards, moves, strict=True)], np.int16)
    check = np.array([i % 3 == 0 for i in range(len(boards))])
    out = rules.expand(parent, index, check)
    assert isinstance(out, Expansion)
    empty = Expansion.empty(len(boards))
    for got, want in zip(out.arrays(), empty.arrays(), strict=True):  # shapes and dtypes
        assert got.shape == want.shape and got.dtype == want.dtype
    for i, (board, move) in enumerate(zip(boards, moves, strict=True)):
        child = board.copy()
        if move is not None:
            child.push(move)
        want = state.from_board(child)
        for name, a, b in zip(PositionArrays._fields, (f[i] for f in out.child), want,
                              strict=True):
            assert np.array_equal(a, b), (name, child.fen())
        legal = sorted(policy_map.move_to_index(child, m) for m in child.legal_moves)
        n = int(out.num_legal[i])
        assert out.legal[i, :n].tolist() == legal and np.all(out.legal[i, n:] == -1)
        assert out.status[i] == _status(child), child.fen()
        expected_mate = (_first_mate(child.copy(stack=False))
                         if check[i] and out.status[i] == GameStatus.ONGOING else -1)
        assert out.mate_slot[i] == expected_mate, child.fen()


def test_roots(rules: Rules):
    boards = _boards(20, seed=6) + [chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")]
    roots = rules.roots(boards, np.ones(len(boards), bool))
    assert roots.legal.shape == (len(boards), MAX_LEGAL_MOVES)
    for i, board in enumerate(boards):
        legal = sorted(policy_map.move_to_index(board, m) for m in board.legal_moves)
        assert roots.legal[i, :roots.num_legal[i]].tolist() == legal
        assert roots.status[i] == GameStatus.ONGOING
    assert roots.mate_slot[-1] >= 0
    mating = policy_map.index_to_move(boards[-1], int(roots.legal[-1, roots.mate_slot[-1]]))
    assert mating.uci() == "d1d8"
    with pytest.raises(NoLegalMovesError):
        rules.roots([chess.Board("7k/5QQ1/8/8/8/8/8/6K1 b - - 0 1")])


def test_follow(rules: Rules):
    board = chess.Board()
    after, indices = rules.follow(board, [chess.Move.from_uci("e2e4"),
                                          chess.Move.from_uci("e7e5")], "moves")
    assert after.fen() == "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
    assert indices == [policy_map.move_to_index(chess.Board(), chess.Move.from_uci("e2e4")),
                       policy_map.MOVES.index("e2e4")]  # black's e7e5, mirrored
    with pytest.raises(PositionError, match="e2e5"):
        rules.follow(board, [chess.Move.from_uci("e2e5")], "moves")
    with pytest.raises(ConfigError):
        rules.follow(board, "e2e4", "moves")
    fools = chess.Board("rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2")
    with pytest.raises(NoLegalMovesError):
        rules.follow(fools, [chess.Move.from_uci("d8h4")], "moves")


def test_device_expand_is_jax(rules: Rules):
    """A device backend's expansion runs under ``jax.jit`` (no host callback); a host
    backend has none."""
    if not rules.on_device:
        assert rules.device_expand is None
        return
    board = chess.Board()
    parent = state.stack([state.from_board(board)])
    out = jax.jit(rules.device_expand)(parent, np.array([-1], np.int16), np.zeros(1, bool),
                                       np.ones(1, bool))
    assert int(out.num_legal[0]) == 20
    assert "callback" not in str(jax.make_jaxpr(rules.device_expand)(
        parent, np.array([-1], np.int16), np.zeros(1, bool), np.ones(1, bool)))


# --- the seam: the search core does not import python-chess ---------------------------------

CORE = ("zerochess.search.tree", "zerochess.search.gather", "zerochess.search.step",
        "zerochess.search.loop", "zerochess.search.reroot", "zerochess.search.compiled",
        "zerochess.search.view", "zerochess.search.selection", "zerochess.search.history",
        "zerochess.search.cache", "zerochess.search.config", "zerochess.search.contempt",
        "zerochess.chess.device")


def _imports(module: str) -> set[str]:
    """The modules ``module``'s source imports when it is imported (absolute names; its
    top-level statements: an import inside a function runs only when that function does,
    e.g. the device rules' ``from_board`` at the python-chess boundary)."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec(module)
    tree = ast.parse(open(spec.origin).read())
    out = set()
    package = module if spec.submodule_search_locations else module.rpartition(".")[0]
    for node in tree.body:
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names
                    if importlib.util.find_spec(base) is not None
                    and _is_module(f"{base}.{a.name}")}
    return out


def _is_module(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def test_search_core_imports_no_python_chess():
    """Following each core module's own imports through zerochess (not the packages'
    ``__init__`` re-exports, which the core does not use), python-chess is never reached:
    the core can take a rules backend that is not python-chess. (The test can fail: it
    did, through ``move_filter``, before the filters' device half moved to
    ``filter_keys``.)"""
    for root in CORE:
        seen, stack = set(), [root]
        while stack:
            module = stack.pop()
            if module in seen:
                continue
            seen.add(module)
            for name in _imports(module):
                top = name.split(".")[0]
                assert top != "chess", f"{root} reaches python-chess through {module}"
                if top == "zerochess" and _is_module(name) and name not in (
                        "zerochess", "zerochess.search", "zerochess.chess"):
                    stack.append(name)
