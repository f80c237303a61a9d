"""Helpers shared by the analysis-engine tests (``test_analysis_engine``, ``test_analysis_fuzz``).

References: python-chess for positions, legality, FENs and Zobrist keys; the library's
``Searcher`` run on one position alone for what each search must return; a plain-Python
walk of that reference tree for PV visits.
"""

from __future__ import annotations

import itertools
import time

import chess
import chess.polyglot
import numpy as np
import pytest

from zerochess.analysis import Client
from zerochess.chess.policy_map import move_to_index
from zerochess.search import Searcher
from zerochess.search.config import SearchConfig

FOOLS_MATE = ["f2f3", "e7e5", "g2g4", "d8h4"]
STALEMATE = "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"
ITALIAN = "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3"


def reference_search(searcher: Searcher):
    """``search(board, visits, config, seed, tree=False)``: one position searched alone with
    the library (what the engine must return for it), and its tree with ``tree=True``."""

    def search(board: chess.Board, visits: int, config: SearchConfig = SearchConfig(),
               seed: int = 0, tree: bool = False):
        batch = searcher.init([board], [config], seed=[seed])
        batch = searcher.run(batch, visits - 1)
        result = searcher.results(batch)[0]
        return (result, batch.state.tree) if tree else result

    return search


def board_at(moves: list[str], fen: str | None = None, turn: int | None = None) -> chess.Board:
    board = chess.Board(fen) if fen else chess.Board()
    for uci in moves[:turn]:
        board.push_uci(uci)
    return board


def check_response(resp: dict, board: chess.Board, max_visits: int, pv_len: int = 15,
                   policy: bool = False, pv_visits: bool = False) -> None:
    """What any final response must satisfy, checked with python-chess."""
    root = resp["rootInfo"]
    assert resp["isDuringSearch"] is False
    assert root["fen"] == board.fen()
    assert root["thisHash"] == f"{chess.polyglot.zobrist_hash(board):016X}"
    assert root["currentPlayer"] == ("w" if board.turn else "b")
    legal = {m.uci() for m in board.legal_moves}
    if not legal:
        assert resp["moveInfos"] == [] and root["gameOver"] in ("checkmate", "stalemate")
        return
    assert root["visits"] == max_visits
    infos = resp["moveInfos"]
    assert sum(m["visits"] for m in infos) == max_visits - 1
    assert [m["order"] for m in infos] == list(range(len(infos)))
    for m in infos:
        assert m["visits"] > 0 and m["move"] in legal
        assert 0 <= m["winrate"] <= 1 and 0 <= m["drawrate"] <= 1
        assert m["pv"][0] == m["move"] and 1 <= len(m["pv"]) <= 1 + pv_len
        b = board.copy()
        for uci in m["pv"]:
            assert chess.Move.from_uci(uci) in b.legal_moves
            b.push_uci(uci)
        assert ("scoreCp" in m) != ("scoreMate" in m)
        if pv_visits:
            assert len(m["pvVisits"]) == len(m["pv"]) and m["pvVisits"][0] == m["visits"]
            assert all(a >= b >= 1 for a, b in itertools.pairwise(m["pvVisits"]))
            assert m["pvEdgeVisits"] == m["pvVisits"]
        else:
            assert "pvVisits" not in m
    assert ("policy" in resp) == policy
    if policy:
        assert set(resp["policy"]) == legal
        assert abs(sum(resp["policy"].values()) - 1) < 1e-4


def assert_matches(resp: dict, ref, pv_len: int = 15) -> None:
    """The engine's response is the library's search of the position alone."""
    root = resp["rootInfo"]
    assert root["visits"] == ref.root_visits
    assert root["winrate"] == pytest.approx(float(ref.root_wdl[0]), abs=1e-6)
    assert root["drawrate"] == pytest.approx(float(ref.root_wdl[1]), abs=1e-6)
    assert root["rawWdl"] == pytest.approx([float(x) for x in ref.raw_wdl], abs=1e-6)
    expected = [i for i in ref.order() if ref.visits[i] > 0]
    assert [m["move"] for m in resp["moveInfos"]] == [ref.moves[i].uci() for i in expected]
    for m, i in zip(resp["moveInfos"], expected, strict=True):
        assert m["visits"] == int(ref.visits[i])
        assert m["q"] == pytest.approx(float(ref.q[i]), abs=1e-6)
        assert m["prior"] == pytest.approx(float(ref.prior[i]), abs=1e-7)
        assert m["pv"] == [x.uci() for x in [ref.moves[i], *ref.pvs[i]]][:1 + pv_len]
    if "policy" in resp:
        for move, p in zip(ref.moves, ref.policy, strict=True):
            assert resp["policy"][move.uci()] == pytest.approx(float(p), abs=1e-7)


def tree_pv_visits(board: chess.Board, tree, pv: list[str]) -> list[int]:
    """Plain-Python walk of a reference tree (batch of one) along a PV."""
    edge_move = np.asarray(tree.edge_move[0])
    edge_child = np.asarray(tree.edge_child[0])
    visits = np.asarray(tree.visits[0])
    node, b, out = 0, board.copy(), []
    for uci in pv:
        move = chess.Move.from_uci(uci)
        index = move_to_index(b, move)
        slot = list(edge_move[node]).index(index)
        node = int(edge_child[node, slot])
        out.append(int(visits[node]))
        b.push(move)
    return out


def finals(client: Client, qid: str) -> list[dict]:
    return [r.data for r in client.messages(qid) if r.data.get("isDuringSearch") is False]


def wait_until(predicate, timeout: float = 120.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.01)
