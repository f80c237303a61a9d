"""The pgx-style environment (``zerochess.env``) and its mctx example.

The rules themselves are tested move by move against python-chess in
``test_device_rules.py``; here: the API conventions (pgx's), illegal actions, finished
games, auto-reset, and the mctx Gumbel MuZero example inside one ``jax.jit``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zerochess import ConfigError, PositionError
from zerochess.chess import policy_map
from zerochess.env import NUM_ACTIONS, Env, auto_reset, start_states
from zerochess.neural import load_model

ROOT = Path(__file__).resolve().parents[1]


def test_init_follows_pgx_conventions():
    env = Env()
    states = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 16))
    assert states.observation.shape == (16, *env.observation_shape)
    assert states.legal_action_mask.shape == (16, NUM_ACTIONS)
    assert np.all(states.legal_action_mask.sum(axis=1) == 20)
    assert not states.terminated.any() and not states.truncated.any()
    # the player to move (white) is drawn per game: both player ids occur
    assert set(np.asarray(states.current_player).tolist()) == {0, 1}
    assert np.all(states.current_player == states.player_order[:, 0])


def test_illegal_action_loses_and_finished_games_stay():
    env = Env()
    state = env.init(jax.random.PRNGKey(1))
    mover = int(state.current_player)
    bad = env.step(state, jnp.int32(policy_map.MOVES.index("e2e5")))
    assert bool(bad.terminated)
    assert bad.rewards[mover] == -1.0 and bad.rewards[1 - mover] == 1.0
    again = env.step(bad, jnp.int32(policy_map.MOVES.index("e2e4")))
    assert np.array_equal(again.position.board, bad.position.board)
    assert np.all(again.rewards == 0.0)


def test_fools_mate_rewards_the_mating_player():
    env = Env()
    state = env.init(jax.random.PRNGKey(2))
    board = chess.Board()
    for uci in ("f2f3", "e7e5", "g2g4", "d8h4"):
        move = chess.Move.from_uci(uci)
        mover = int(state.current_player)
        state = env.step(state, jnp.int32(policy_map.move_to_index(board, move)))
        board.push(move)
    assert bool(state.terminated) and board.is_checkmate()
    assert state.rewards[mover] == 1.0 and state.rewards[1 - mover] == -1.0


def test_truncation_and_auto_reset():
    env = Env(max_steps=2)
    step = jax.jit(jax.vmap(auto_reset(env.step, env.init)))
    states = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(3), 4))
    e4 = jnp.full(4, policy_map.MOVES.index("e2e4"), jnp.int32)
    states = step(states, e4, jax.random.split(jax.random.PRNGKey(4), 4))
    states = step(states, e4, jax.random.split(jax.random.PRNGKey(5), 4))  # e7e5 mirrored
    assert states.truncated.all()
    # restarted at once: the start position, with the last step's flags kept
    assert np.all(states.legal_action_mask.sum(axis=1) == 20)
    assert np.all(states.step_count == 0)
    with pytest.raises(ConfigError):
        Env(max_steps=0)


def test_start_states_checks_boards():
    with pytest.raises(PositionError):
        start_states([chess.Board("8/8/8/8/8/8/8/8 w - - 0 1")])


def test_mctx_gumbel_example_plays_legal_games_in_one_jit():
    spec = importlib.util.spec_from_file_location("mctx_selfplay",
                                                  ROOT / "examples" / "mctx_selfplay.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    model = load_model("resnet:1x8")
    games, plies = 4, 6
    play = example.make_selfplay(model, games, plies, simulations=8)
    final, (actions, rewards, terminated) = play(model.params, jax.random.PRNGKey(0))
    assert actions.shape == (plies, games)
    assert play._cache_size() == 1
    # replay each game's actions with python-chess: every action was legal
    for g in range(games):
        board = chess.Board()
        for p in range(plies):
            move = policy_map.index_to_move(board, int(actions[p, g]))
            board.push(move)
            if terminated[p, g]:
                board = chess.Board()
