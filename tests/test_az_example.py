"""``examples/az_selfplay_train.py`` (issue 38): device self-play with search-contempt for
one player and PUCT for the other, targets, optax steps; the second round, with new
parameters, compiles nothing and the loss falls in both."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import chess
import jax
import numpy as np
import pytest

from zerochess.chess.actions import boards_from_states, decode_actions
from zerochess.neural import load_model

from compile_count import count_compiles

ROOT = Path(__file__).resolve().parents[1]


def _example():
    spec = importlib.util.spec_from_file_location("az_selfplay_train",
                                                  ROOT / "examples" / "az_selfplay_train.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_az_example_settings_give_player_0_search_contempt_and_player_1_puct():
    """The default-tier sibling: the example loads and its settings are per player."""
    example = _example()
    settings = example.make_settings(load_model("resnet:1x8"), 3)
    np.testing.assert_array_equal(np.asarray(settings.n_scl),
                                  [[5, 5, 5], [2**31 - 1] * 3])
    assert settings.move_avoid.shape[:2] == (2, 3)
    assert float(settings.dirichlet_epsilon[1, 0]) == pytest.approx(0.25)


@pytest.mark.tier2  # compiles a whole self-play scan (minutes on 2 cores)
def test_az_example_trains_and_its_second_round_compiles_nothing():
    example = _example()
    model = load_model("resnet:1x8")
    games, plies = 4, 6
    one_round, opt = example.make_round(model, games, plies, simulations=8, steps=8)
    settings = example.make_settings(model, games)
    assert settings.n_scl.shape == (2, games)
    params, opt_state = model.params, opt.init(model.params)
    first, second = jax.random.split(jax.random.PRNGKey(0))
    new_params, opt_state, losses, played = one_round(params, opt_state, settings, first)
    assert losses[-1] < losses[0], losses
    compiles, (_, _, losses2, played2) = count_compiles(
        lambda: one_round(new_params, opt_state, settings, second))
    assert compiles == 0
    assert losses2[-1] < losses2[0], losses2
    changed = [not np.array_equal(a, b) for a, b in zip(
        jax.tree.leaves(params), jax.tree.leaves(new_params), strict=True)]
    assert any(changed)
    # every game, replayed with python-chess from the decoded actions, passes through the
    # positions the environment recorded
    for _, actions, positions, valid in (played, played2):
        for g in range(games):
            board = chess.Board()
            for t in range(plies):
                if not valid[t, g]:
                    break
                at = jax.tree.map(lambda a, t=t, g=g: np.asarray(a)[t, g:g + 1], positions)
                here = boards_from_states(at)[0]
                assert (here.board_fen(), here.turn) == (board.board_fen(), board.turn)
                move = decode_actions(at, np.asarray(actions)[t, g:g + 1])[0]
                assert move in board.legal_moves
                board.push(move)
            assert board.ply() >= 1
