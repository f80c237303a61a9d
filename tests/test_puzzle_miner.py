"""The puzzle miner (``zerochess.experiments.miner``) on planted positions, with a
plain-Python stand-in for the search: alpha-beta over python-chess at a depth set by the
node count (material only, mate = +-1). A mate in 2 and a knight fork are found with
their solution lines; a quiet position is not emitted; the Lichess CSV parses with ``csv``
into Lichess's columns and its ``Moves`` are legal from its ``FEN``."""

from __future__ import annotations

import csv
import functools
import io
import math

import chess
import pytest

from zerochess.experiments.deep_eval import Analysis
from zerochess.experiments.miner import (
    LICHESS_COLUMNS,
    MinerSettings,
    Source,
    is_clear,
    mine,
    rating_for,
    themes_of,
)

VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9,
          chess.KING: 0}
SHALLOW, DEEP = 2, 160
SETTINGS = MinerSettings(shallow_nodes=SHALLOW, deep_nodes=DEEP, ladder=(8, 32),
                         min_value=0.4, margin=0.5, max_solver_moves=3)


def static(board: chess.Board) -> float:
    """Material from the side to move, squashed to [-1, 1]."""
    diff = sum(VALUES[p.piece_type] * (1 if p.color == board.turn else -1)
               for p in board.piece_map().values())
    return math.tanh(diff / 5)


def negamax(board: chess.Board, depth: int, alpha: float = -2.0, beta: float = 2.0) -> float:
    if board.is_checkmate():
        return -1.0
    if board.is_stalemate() or board.is_insufficient_material():
        return 0.0
    if depth == 0:
        return static(board)
    best = -2.0
    for move in board.legal_moves:
        board.push(move)
        v = -negamax(board, depth - 1, -beta, -alpha)
        board.pop()
        best = max(best, v)
        alpha = max(alpha, v)
        if alpha >= beta:
            break
    return best


def depth_for(nodes: int) -> int:
    """The stand-in's depth: 1 ply below 100 nodes (a shallow search), else 3."""
    return 1 if nodes < 100 else 3


def stub_analyze(boards, nodes):
    return [_stub_one(board.fen(), depth_for(nodes)) for board in boards]


@functools.cache
def _stub_one(fen: str, depth: int) -> Analysis:
    """One position's stand-in analysis (cached: the tests ask for the same ones again)."""
    b = chess.Board(fen)
    moves = sorted(b.legal_moves, key=lambda m: m.uci())
    values = []
    for m in moves:
        b.push(m)
        values.append(-negamax(b, depth - 1))  # exact (no window) per move
        b.pop()
    order = sorted(range(len(moves)), key=lambda i: (-values[i], moves[i].uci()))
    best = moves[order[0]]
    return Analysis(raw=static(b), value=values[order[0]], best=best,
                    moves=[moves[i] for i in order], values=[values[i] for i in order],
                    visits=[1] * len(moves), pv=[best])


def planted(before_fen: str, last_uci: str) -> tuple[Source, chess.Board]:
    before = chess.Board(before_fen)
    move = chess.Move.from_uci(last_uci)
    assert move in before.legal_moves
    after = before.copy()
    after.push(move)
    return Source(before, move, 0, 1), after


def mine_one(before_fen: str, last_uci: str):
    source, board = planted(before_fen, last_uci)
    return mine([source], [board], stub_analyze([board], DEEP), stub_analyze, SETTINGS)


# a knight fork: after ...Qb8-a8?, Nc7+ forks the king and the queen (the h-pawn keeps the
# ending won after Nxa8: K+N alone is a draw)
FORK = ("1q2k3/8/8/1N6/8/8/7P/4K3 b - - 0 1", "b8a8")
# a mate in 2 from the CC0 Lichess puzzle database (008aL, in bench/data): after a4-a5?,
# ...Rb1+ Rd1 (the only reply) Rxd1#
MATE2 = ("7k/6p1/1r5p/5p2/P2Rp3/4P3/5PPP/6K1 w - - 0 39", "a4a5")
MATE2_LINE = ["b6b1", "d4d1", "b1d1"]
QUIET = ("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", "e7e5")


def test_the_planted_facts():
    # python-chess facts the miner's answers rest on, checked without the miner
    from zerochess.bench.puzzles import forces_mate

    _, fork = planted(*FORK)
    fork.push(chess.Move.from_uci("b5c7"))
    assert fork.is_check() and chess.A8 in fork.attacks(chess.C7)
    _, mate2 = planted(*MATE2)
    assert forces_mate(mate2, 2) and not forces_mate(mate2, 1)


def test_fork_is_found_with_its_line():
    found = mine_one(*FORK)
    assert len(found) == 1
    p = found[0]
    assert p.line[0] == chess.Move.from_uci("b5c7")
    assert p.line[2] == chess.Move.from_uci("c7a8")  # the queen falls after the king moves
    assert len(p.line) == 3
    assert "fork" in p.themes
    assert p.shallow_best != p.line[0]  # the 1-ply stand-in misses it
    assert p.found_at == DEEP  # the ladder's 8 and 32 nodes are 1 ply too


def test_mate_in_two_is_found_with_a_mating_line():
    found = mine_one(*MATE2)
    assert len(found) == 1
    p = found[0]
    assert [m.uci() for m in p.line] == MATE2_LINE
    board = chess.Board(p.fen)
    for m in p.moves:
        assert m in board.legal_moves
        board.push(m)
    assert board.is_checkmate() and len(p.line) == 3
    assert {"mate", "mateIn2"} <= set(p.themes)


def test_quiet_position_is_not_emitted():
    assert mine_one(*QUIET) == []
    _, board = planted(*QUIET)
    assert not is_clear(board, stub_analyze([board], DEEP)[0], SETTINGS)


def test_a_move_the_shallow_search_finds_is_not_a_puzzle():
    source, board = planted(*FORK)
    s = SETTINGS._replace(shallow_nodes=DEEP - 1)  # depth 3 too: no miss, no puzzle
    assert mine([source], [board], stub_analyze([board], DEEP), stub_analyze, s) == []


def test_lichess_csv_columns_and_legal_moves():
    puzzles = mine_one(*FORK) + mine_one(*MATE2)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(LICHESS_COLUMNS))
    w.writeheader()
    for p in puzzles:
        w.writerow(p.lichess_row(SHALLOW, "zerochess:test"))
    rows = list(csv.DictReader(io.StringIO(buf.getvalue())))
    assert list(rows[0]) == ["PuzzleId", "FEN", "Moves", "Rating", "RatingDeviation",
                             "Popularity", "NbPlays", "Themes", "GameUrl", "OpeningTags"]
    assert len(rows) == 2
    for r in rows:
        board = chess.Board(r["FEN"])
        moves = r["Moves"].split()
        assert len(moves) % 2 == 0  # the opponent's move, then solver/reply pairs ending
        for uci in moves:         # with the solver's move
            move = chess.Move.from_uci(uci)
            assert move in board.legal_moves, (r["FEN"], uci)
            board.push(move)
        assert int(r["Rating"]) == rating_for(DEEP, SHALLOW)
        assert set(r["Themes"].split()) <= {
            "mate", "mateIn1", "mateIn2", "mateIn3", "fork", "hangingPiece", "promotion",
            "advantage", "crushing", "oneMove", "short", "long", "veryLong"}


def test_rating_grows_with_the_difficulty():
    assert rating_for(2, 2) == 1000 and rating_for(8, 2) == 1500


@pytest.mark.parametrize("fen,uci,theme", [
    ("4k3/8/8/8/8/8/6p1/4K2R b - - 0 1", None, None),
])
def test_themes_promotion_and_hanging(fen, uci, theme):
    # promotion: black's g1=Q is a promotion (a solver move)
    board = chess.Board(fen)
    assert "promotion" in themes_of(board, [chess.Move.from_uci("g2h1q")], 0.9)
    # hanging piece: the black knight on d5 is undefended; Qxd5 takes it
    b = chess.Board("4k3/8/8/3n4/8/8/8/3QK3 w - - 0 1")
    assert "hangingPiece" in themes_of(b, [chess.Move.from_uci("d1d5")], 0.6)


class FakeJudge:
    """A stand-in for Stockfish: the stand-in search at depth 3, top two moves."""

    def __init__(self, tie: bool = False):
        self.tie = tie

    def judge(self, board, multipv=1):
        from zerochess.experiments.judge import Judged

        a = stub_analyze([board], DEEP)[0]
        values = list(a.values[:multipv])
        if self.tie and len(values) > 1:
            values[1] = values[0]  # a second move as good: not unique
        return Judged(values[0], list(a.moves[:multipv]), values)


def test_validate_with_a_stand_in_judge():
    from zerochess.experiments.miner import validate

    fork, mate2 = mine_one(*FORK)[0], mine_one(*MATE2)[0]
    assert validate(fork, FakeJudge(), 0.3)["passed"]
    assert validate(mate2, FakeJudge(), 0.3)["passed"]
    assert not validate(fork, FakeJudge(tie=True), 0.3)["passed"]
    assert not validate(mate2, FakeJudge(tie=True), 0.3)["passed"]  # Rb1+ is not mate
    # a mating move passes even when the judge sees a second move as good (any mate counts)
    before = chess.Board(mate2.fen)
    for m in mate2.moves[:2]:
        before.push(m)
    mate1 = mate2._replace(source=Source(before, mate2.line[1], 0, 3), line=[mate2.line[2]])
    assert validate(mate1, FakeJudge(tie=True), 0.3)["passed"]
