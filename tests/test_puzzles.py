"""The mate-puzzle set of ``bench --puzzles``: every solution checked with python-chess,
and the solver check against hand-picked moves."""

from __future__ import annotations

import chess

from zerochess.bench.puzzles import load_puzzles, solves, wilson


def test_every_solution_is_a_mate_of_its_length():
    puzzles = load_puzzles()
    themes = {p.theme for p in puzzles}
    assert themes == {"mateIn1", "mateIn2"}
    assert sum(p.theme == "mateIn1" for p in puzzles) >= 200
    assert sum(p.theme == "mateIn2" for p in puzzles) >= 200
    for p in puzzles:
        board = p.board.copy()
        for uci in p.solution:
            move = chess.Move.from_uci(uci)
            assert move in board.legal_moves, (p.id, uci)
            board.push(move)
        assert board.is_checkmate(), p.id
        assert len(p.solution) == {"mateIn1": 1, "mateIn2": 3}[p.theme], p.id
    assert len({p.id for p in puzzles}) == len(puzzles)


def test_solves_accepts_mates_only():
    p = next(p for p in load_puzzles() if p.theme == "mateIn2")
    key = chess.Move.from_uci(p.solution[0])
    assert solves(p, key)
    quiet = next(m for m in p.board.legal_moves if m != key and not p.board.gives_check(m))
    assert not solves(p, quiet)


def test_wilson_interval():
    low, high = wilson(99, 100)
    assert 0.94 < low < 0.95 and 0.998 < high <= 1.0  # Wilson 95% for 99/100: [0.9455, 0.9982]
    assert wilson(0, 10)[0] == 0.0
