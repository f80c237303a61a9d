"""Self-play on the device (``zerochess.training.device_selfplay``: one compiled scan over
plies): legal games that end where python-chess ends them (draws claimed, or the move
cap), games that depend on (seed, game, ply) only (not on the slot or the batch size),
finished slots refilled from the openings, and consistent training examples. That these
are the host loop's games is ``test_device_loop``'s part."""

from __future__ import annotations

import chess
import numpy as np
import pytest

from zerochess import SearchConfig, load_model
from zerochess.chess.policy_map import index_to_move
from zerochess.games.records import game_end
from zerochess.search.results import TemperatureSchedule
from zerochess.training.device_selfplay import play

pytestmark = pytest.mark.tier2  # whole self-play runs (one compiled scan each)

OPENINGS = ["6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",  # Rd8#
            "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",  # black to move: only Kh8-... none: stalemate?
            "8/8/8/8/8/5k2/8/5K1B b - - 0 1",  # bishop against king: insufficient at once
            chess.STARTING_FEN, chess.STARTING_FEN,
            "r1bqkbnr/pppp1ppp/2n5/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"]


@pytest.fixture(scope="module")
def model():
    return load_model("builtin")


def _boards():
    out = []
    for fen in OPENINGS:
        b = chess.Board(fen)
        if not b.is_game_over():
            out.append(b)
    return out


def _play(model, batch, seed=3):
    return play(model, _boards(), SearchConfig(), SearchConfig(n_scl=1), 16, batch=batch,
                seed=seed, max_plies=24, white_temperature=TemperatureSchedule(temperature=1.0),
                black_temperature=TemperatureSchedule(temperature=1.0), plies_per_call=12)


def test_games_are_legal_and_end_as_python_chess_says(model):
    boards = _boards()
    games = _play(model, batch=2)
    for board, moves, result, term in zip(boards, games.moves, games.results,
                                          games.terminations, strict=True):
        b = board.copy()
        for ply, m in enumerate(moves):
            assert game_end(b, ply, 24) is None  # not over before its last move
            b.push(index_to_move(b, m))  # raises if illegal
        # python-chess's end with draws claimed, or the move cap
        assert game_end(b, len(moves), 24) == (result, term)
    assert games.terminations[0] == "checkmate" and games.results[0] == "1-0"
    ex = games.examples
    assert len(ex) == sum(len(m) for m in games.moves)
    assert np.allclose(ex.policy_target.sum(axis=1), 1.0, atol=1e-5)
    for g, moves in enumerate(games.moves):  # moves left: plies to the game's end
        rows = ex.game == g
        assert np.array_equal(np.sort(ex.moves_left[rows])[::-1],
                              np.arange(len(moves), 0, -1, dtype=np.float32))
    # the result from the side to move: white's result flipped for black
    decided = ex.game == 0
    assert np.all(ex.result[decided] == np.array([1, 0, 0], np.float32))


@pytest.mark.slow
def test_games_depend_on_seed_game_and_ply_not_on_the_batch(model):
    two, four = _play(model, batch=2), _play(model, batch=4)
    assert two.moves == four.moves and two.results == four.results
    other = _play(model, batch=2, seed=4)
    assert other.moves != two.moves
