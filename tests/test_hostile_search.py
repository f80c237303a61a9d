"""Issue 39's classes that need the compiled pure search (``search.compiled.search``):
ended roots get their true value and no action, non-finite network outputs never become
an illegal move, per-tree settings out of range under jit are flagged. One compiled
program serves every case (the poison and the settings are data)."""

from __future__ import annotations

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zerochess import SearchConfig
from zerochess.chess.policy_map import index_to_move
from zerochess.env import start_states
from zerochess.neural.toy import linear_model
from zerochess.search import stack_configs
from zerochess.search.compiled import NO_ACTION, roots_from_env, search

import hostile

pytestmark = pytest.mark.tier2  # a compiled search (minutes on 2 cores)

SIMS = 4
DRAW = 0.25  # a draw score that no search value is by chance
ONGOING = [chess.STARTING_FEN,
           "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"]


def _states():
    """The ongoing positions, ``hostile.ENDED_ROOTS``, and a game lost by an illegal move
    (what ``Env.step`` leaves: the position unchanged, ``terminated``, no legal action;
    its player, still to move, lost)."""
    boards = [chess.Board(f) for f in ONGOING + [f for f, _ in hostile.ENDED_ROOTS]]
    boards.append(chess.Board())
    states = start_states(boards)
    n = len(boards) - 1
    states = states.replace(terminated=states.terminated.copy(),
                            legal_action_mask=states.legal_action_mask.copy())
    states.terminated[n] = True
    states.legal_action_mask[n] = False
    truth = [None] * len(ONGOING) + [DRAW if v == "draw" else v
                                     for _, v in hostile.ENDED_ROOTS] + [-1.0]
    return boards, jax.tree.map(jnp.asarray, states), truth


@pytest.fixture(scope="module")
def case():
    model = linear_model(0)
    boards, states, truth = _states()
    params = stack_configs([SearchConfig(draw_score=DRAW)] * len(boards), False, False)

    def apply(mp, planes):  # a tuple in float16, poisoned by data
        out = model.apply(mp["net"], planes)
        return ((out.policy_logits + mp["policy"]).astype(jnp.float16),
                (out.wdl_logits + mp["wdl"]).astype(jnp.float16), None)

    @jax.jit
    def run(mp, states, params, key):
        return search(mp, roots_from_env(states, key), params, SIMS, apply_fn=apply,
                      num_nodes=SIMS + 1)

    def call(policy=0.0, wdl=0.0, params=params):
        mp = {"net": model.params, "policy": jnp.broadcast_to(jnp.float32(policy), (1858,))
              if np.ndim(policy) == 0 else jnp.asarray(policy, jnp.float32),
              "wdl": jnp.float32(wdl)}
        return jax.device_get(run(mp, states, params, jax.random.key(0)))

    return boards, truth, params, call


def _legal(board, action) -> bool:
    return action >= 0 and index_to_move(board, int(action)) in board.legal_moves


def test_ended_roots_get_their_true_value_and_no_action(case):
    """A stalemated or mated root was searched anyway and its value drifted towards a win
    for the side that had lost; now: not searched, -1 when mated (or lost by an illegal
    move), the draw score for a draw, ``NO_ACTION``, no policy target, ``root_ended``."""
    boards, truth, _, call = case
    out = call()
    n = len(ONGOING)
    for i, board in enumerate(boards):
        if truth[i] is None:
            assert not out.root_ended[i] and _legal(board, out.action[i]), i
            assert abs(out.action_weights[i].sum() - 1) < 1e-5
            continue
        assert out.root_ended[i] and out.action[i] == NO_ACTION, i
        assert out.value[i] == pytest.approx(truth[i]), (i, out.value[i])
        want = [0.0, 0.0, 1.0] if truth[i] == -1.0 else [0.0, 1.0, 0.0]
        assert out.wdl[i].tolist() == want, i
        assert not out.action_weights[i].any() and not out.visits[i].any(), i
    assert not out.nonfinite_outputs.any() and not out.bad_settings.any()
    assert NO_ACTION == -1 and out.root_ended.sum() == len(boards) - n


@pytest.mark.parametrize("poison", ["policy NaN", "policy +inf", "some moves NaN",
                                    "WDL NaN", "WDL -inf"])
def test_non_finite_network_outputs_never_become_an_illegal_move(case, poison):
    boards, truth, _, call = case
    policy = np.zeros(1858, np.float32)
    policy[::3] = np.nan
    change = {"policy NaN": dict(policy=np.nan), "policy +inf": dict(policy=np.inf),
              "some moves NaN": dict(policy=policy), "WDL NaN": dict(wdl=np.nan),
              "WDL -inf": dict(wdl=-np.inf)}[poison]
    out = call(**change)
    # every root is evaluated; a policy is read only at the legal moves (none at a mate)
    logits = np.broadcast_to(change.get("policy", np.float32(0)), (1858,))
    legal = [np.asarray(out.legal[i][out.legal[i] >= 0]) for i in range(len(boards))]
    want = [True] * len(boards) if "wdl" in change else [
        bool(np.any(~np.isfinite(logits[m]))) for m in legal]
    assert out.nonfinite_outputs.tolist() == want, (out.nonfinite_outputs, want)
    assert np.all(np.isfinite(out.value)) and np.all(np.isfinite(out.wdl))
    for i, board in enumerate(boards):
        if truth[i] is None:
            assert _legal(board, out.action[i]), (poison, i, out.action[i])
            assert abs(out.action_weights[i].sum() - 1) < 1e-5
        else:
            assert out.value[i] == pytest.approx(truth[i])


def test_per_tree_settings_out_of_range_under_jit_are_flagged(case):
    """Traced per-tree data cannot raise: a tree with a NaN temperature, a 0 temperature
    or a NaN draw score is not searched (``NO_ACTION``, ``bad_settings``); the other trees
    are searched as before."""
    boards, truth, params, call = case
    good = call()
    temperature = np.asarray(params.policy_temperature).copy()
    draw = np.asarray(params.draw_score).copy()
    temperature[0], draw[1], temperature[2] = np.nan, np.nan, 0.0
    out = call(params=params.replace(policy_temperature=jnp.asarray(temperature),
                                     draw_score=jnp.asarray(draw)))
    assert out.bad_settings.tolist() == [True, True, True] + [False] * (len(boards) - 3)
    assert out.action[0] == out.action[1] == NO_ACTION
    for i in range(3, len(boards)):
        assert out.action[i] == good.action[i] and out.value[i] == good.value[i], i


def test_selection_and_n_scl_out_of_range_under_jit_are_flagged(case):
    """A selection rule index past ``SELECTION_NAMES`` ran as another rule, and ``n_scl``
    0 was searched, without a word; under jit such a tree is now not searched
    (``NO_ACTION``, ``bad_settings``), the others as before."""
    boards, truth, params, call = case
    good = call()
    selection = np.asarray(params.selection).copy()
    n_scl = np.asarray(params.n_scl).copy()
    selection[0], n_scl[1] = 7, 0
    out = call(params=params.replace(selection=jnp.asarray(selection),
                                     n_scl=jnp.asarray(n_scl)))
    assert out.bad_settings.tolist() == [True, True] + [False] * (len(boards) - 2)
    assert out.action[0] == out.action[1] == NO_ACTION
    for i in range(2, len(boards)):
        assert out.action[i] == good.action[i] and out.value[i] == good.value[i], i
    assert not good.dropped.any()  # a tree of num_simulations + 1 nodes never fills


def test_a_full_tree_reports_the_simulations_it_dropped():
    """A tree smaller than ``num_simulations + 1`` nodes ran its last simulations as
    no-ops with no word (the root had fewer visits than asked); ``dropped`` counts them:
    with 3 nodes and 6 simulations from the start position (no terminal node within two
    plies), two simulations make the two nodes below the root and the other 4 are
    dropped."""
    model = linear_model(0)
    states = jax.tree.map(jnp.asarray, start_states([chess.Board()]))
    params = stack_configs([SearchConfig()], False, False)
    out = jax.device_get(jax.jit(lambda mp, key: search(
        mp, roots_from_env(states, key), params, 6, apply_fn=model.apply, num_nodes=3))(
        model.params, jax.random.key(0)))
    assert int(out.visits[0].sum()) == 2 and int(out.dropped[0]) == 4, (out.visits[0].sum(),
                                                                         out.dropped)
    assert not out.root_ended[0] and out.action[0] >= 0


def test_roots_and_params_made_on_the_host_trace_under_jit():
    """``RootInputs`` of numpy arrays (made on the host, as ``hostile.host_roots`` does)
    failed under a trace with jax's ``TracerArrayConversionError`` (the root mate check
    indexed a numpy array with a traced row), and ``SearchParams`` with numpy fields (edited
    on the host, an integer ``cpuct``) with ``'numpy.ndarray' object has no attribute
    'at'``; both are read as jax arrays now."""
    model = linear_model(0)
    roots = hostile.host_roots([chess.Board(), chess.Board()])
    params = stack_configs([SearchConfig()] * 2, False, False)
    for p in (params, jax.tree.map(np.asarray, params).replace(cpuct=np.array([1, 2]))):
        out = jax.eval_shape(lambda p=p: search(model.params, roots, p, 4,
                                                apply_fn=model.apply))
        assert out.action.shape == (2,) and out.dropped.shape == (2,)
