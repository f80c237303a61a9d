"""Training pieces: examples, lc0 losses (hand-computed values), trainer, buffer, resume."""

from __future__ import annotations

import math

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zerochess.chess.encoding import encode_board
from zerochess.games.plies import SearchedPosition
from zerochess.games.records import GameRecord
from zerochess.neural import Model, ModelOutput, make_resnet
from zerochess.training import (
    Checkpointer,
    Examples,
    LossConfig,
    NsclScheduleConfig,
    NsclState,
    OptimizerConfig,
    ReplayBuffer,
    Trainer,
    compact_planes,
    concat_examples,
    decisive_ratio,
    dense_policy,
    expand_planes,
    l2_penalty,
    loss_terms,
    lr_schedule,
    moves_left_loss,
    next_state,
    policy_loss,
    result_wdl,
    sample_rng,
    to_batch,
    wdl_loss,
)
from zerochess.training.examples import Batch, check_examples
from zerochess.training.selfplay_data import (
    examples_from_game,
    material_wdl,
    value_target,
)

# --- examples ----------------------------------------------------------------------------------


def _boards() -> list[chess.Board]:
    b = chess.Board()
    out = [b.copy()]
    for uci in ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "e1g1"]:
        b.push_uci(uci)
        out.append(b.copy())
    out.append(chess.Board("7k/8/8/8/8/8/8/K6Q b - - 37 90"))  # rule50 plane = 37, black
    return out


def test_planes_compact_and_expand_exactly():
    planes = np.stack([encode_board(b) for b in _boards()])
    bits, values = compact_planes(planes)
    assert bits.shape == (len(planes), 112, 8) and bits.dtype == np.uint8
    assert values[-1, 109] == 37.0  # lc0's rule50 plane holds the raw count
    np.testing.assert_array_equal(expand_planes(bits, values, np), planes)
    np.testing.assert_array_equal(np.asarray(jax.jit(expand_planes)(bits, values)), planes)
    # square a1 = bit 0 of byte 0: white's rook on a1 is in plane 3 (our rooks) at start
    assert bits[0, 3, 0] & 1 and planes[0, 3, 0, 0] == 1.0


def test_compact_planes_rejects_non_lc0_planes():
    planes = np.zeros((1, 112, 8, 8), np.float32)
    planes[0, 5, 0, 0], planes[0, 5, 0, 1] = 1.0, 2.0
    with pytest.raises(ValueError, match="more than one non-zero value"):
        compact_planes(planes)


def test_dense_policy_marks_illegal_moves_minus_one():
    index = np.array([[3, 1857, -1, -1], [0, -1, -1, -1]], np.int16)
    target = np.array([[0.25, 0.75, 0.0, 0.0], [1.0, 0, 0, 0]], np.float32)
    for xp in (np, jnp):
        dense = np.asarray(dense_policy(index, target, xp))
        assert dense.shape == (2, 1858)
        assert dense[0, 3] == 0.25 and dense[0, 1857] == 0.75 and dense[1, 0] == 1.0
        assert (dense[0] == -1).sum() == 1856 and (dense[1] == -1).sum() == 1857


def test_result_wdl_from_the_side_to_move():
    white = np.array([True, False])
    np.testing.assert_array_equal(result_wdl("1-0", white), [[1, 0, 0], [0, 0, 1]])
    np.testing.assert_array_equal(result_wdl("0-1", white), [[0, 0, 1], [1, 0, 0]])
    np.testing.assert_array_equal(result_wdl("1/2-1/2", white), [[0, 1, 0], [0, 1, 0]])
    with pytest.raises(ValueError, match="unknown game result"):
        result_wdl("*", white)


def _record(start_fen: str, termination: str, result: str = "1/2-1/2") -> GameRecord:
    return GameRecord(index=0, seed=0, white="a", black="b", opening="o", start_fen=start_fen,
                      moves=[], stats=[], result=result, termination=termination,
                      final_fen=start_fen, max_plies=40)


def test_material_wdl_by_hand():
    # tanh(3 / 6) = 0.462117, tanh(-9 / 6) = -0.905148
    np.testing.assert_allclose(material_wdl(3, 6.0), [0.462117, 0.537883, 0.0], atol=1e-6)
    np.testing.assert_allclose(material_wdl(-9, 6.0), [0.0, 0.094852, 0.905148], atol=1e-6)
    np.testing.assert_array_equal(material_wdl(0, 6.0), [0.0, 1.0, 0.0])
    # graded: one more pawn always raises the target, even far ahead (no saturation at 1)
    wins = [float(material_wdl(b, 6.0)[0]) for b in range(0, 30)]
    assert all(a < b for a, b in zip(wins, wins[1:], strict=False)) and wins[-1] < 1.0


def test_value_target_grades_capped_games_only():
    up_a_queen = "4k3/8/8/8/8/8/8/3QK3 b - - 0 1"  # white +9 (P1 N3 B3 R5 Q9)
    label, target = value_target(_record(up_a_queen, "move_cap"), material_scale=6.0)
    assert label == "material +9"
    np.testing.assert_allclose(target, [math.tanh(1.5), 1 - math.tanh(1.5), 0.0], atol=1e-6)
    # a game that ended on the board keeps its result; so does an even capped game
    assert value_target(_record(up_a_queen, "checkmate", "0-1"), material_scale=6.0) == (
        "0-1", "0-1")
    even = "4k3/3q4/8/8/8/8/8/3QK3 w - - 0 1"
    assert value_target(_record(even, "move_cap"), material_scale=6.0) == (
        "1/2-1/2", "1/2-1/2")
    # the hard adjudication is unchanged: >= 3 pawns ahead is a win
    assert value_target(_record(up_a_queen, "move_cap"), adjudicate_material=3) == (
        "1-0", "1-0")
    assert value_target(_record(up_a_queen, "move_cap")) == ("1/2-1/2", "1/2-1/2")


def test_graded_targets_are_from_the_side_to_move():
    board = chess.Board()
    bits, values = compact_planes(encode_board(board))
    index, target = np.full(218, -1, np.int16), np.zeros(218, np.float32)
    index[0], target[0] = 0, 1.0
    rows = [SearchedPosition(bits, values, index, target, 0.0, 0.0, 0.0, 0.0, white, ply)
            for ply, white in enumerate([True, False, True])]
    wdl = material_wdl(4, 6.0)  # white ahead
    ex = examples_from_game(rows, wdl, 3, game=0)
    np.testing.assert_array_equal(ex.result, [wdl, wdl[::-1], wdl])
    assert ex.result[1, 2] > ex.result[1, 0]  # black to move: white's lead is its loss


# --- losses (hand-computed references) ---------------------------------------------------------

def _policy_case() -> tuple[jax.Array, jax.Array]:
    logits = np.zeros((1, 1858), np.float32)
    logits[0, 10] = math.log(3.0)
    logits[0, 99] = 100.0  # an illegal move with a huge logit
    target = np.full((1, 1858), -1.0, np.float32)
    target[0, 5], target[0, 10] = 0.25, 0.75
    return jnp.asarray(logits), jnp.asarray(target)


def test_policy_cross_entropy_by_hand():
    logits, target = _policy_case()
    # masked: softmax over moves 5, 10 is (1/4, 3/4); CE = entropy of (1/4, 3/4)
    expected = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))
    assert float(policy_loss(logits, target)[0]) == pytest.approx(expected, abs=1e-6)
    # unmasked: log Z over all 1858 logits (1856 zeros, ln 3, 100)
    log_z = 100.0 + math.log1p((1856 + 3.0) * math.exp(-100.0))
    expected = log_z - 0.75 * math.log(3.0)
    assert float(policy_loss(logits, target, mask_illegal=False)[0]) == pytest.approx(
        expected, rel=1e-6)
    # temperature 0.5: target (1/4, 3/4) ** 2 renormalised = (0.1, 0.9)
    expected = -(0.1 * math.log(0.25) + 0.9 * math.log(0.75))
    assert float(policy_loss(logits, target, temperature=0.5)[0]) == pytest.approx(
        expected, abs=1e-6)


def test_wdl_and_moves_left_losses_by_hand():
    got = wdl_loss(jnp.array([[0.0, 0.0, 0.0], [math.log(2.0), 0.0, 0.0]]),
                   jnp.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]]))
    np.testing.assert_allclose(np.asarray(got), [math.log(3.0), 1.5 * math.log(2.0)], rtol=1e-6)
    # Huber(delta 10 / 20) of errors / 20: 30 plies off -> 0.5 * (1.5 - 0.25); 5 off -> 0.5 * .25^2
    got = moves_left_loss(jnp.array([30.0, 25.0, 0.0]), jnp.array([0.0, 20.0, 10.0]))
    np.testing.assert_allclose(np.asarray(got), [0.625, 0.03125, 0.125], rtol=1e-6)


def test_l2_covers_kernels_only():
    params = {"a": {"kernel": jnp.array([[1.0, 2.0]]), "bias": jnp.array([3.0])},
              "b": {"kernel": jnp.array([2.0])}}
    assert float(l2_penalty(params, 0.5)) == pytest.approx(0.5 * (1 + 4 + 4))


def test_total_loss_mixes_terms_like_lc0():
    logits, target = _policy_case()
    batch = Batch(planes=jnp.zeros((1, 112, 8, 8)), policy=target,
                  result=jnp.array([[1.0, 0.0, 0.0]]), best_wdl=jnp.array([[0.0, 1.0, 0.0]]),
                  root_wdl=jnp.array([[0.0, 0.0, 1.0]]), moves_left=jnp.array([0.0]))
    outputs = ModelOutput(logits, jnp.array([[0.0, 0.0, 0.0]]), jnp.array([30.0]))
    params = {"k": {"kernel": jnp.array([2.0])}}
    config = LossConfig(policy_weight=2.0, value_weight=0.5, moves_left_weight=3.0,
                        reg_weight=10.0, l2=0.25, q_ratio=0.25)
    total, m = loss_terms(outputs, params, batch, config)
    policy = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))
    value = math.log(3.0)  # any W/D/L target against uniform logits
    assert float(m["policy"]) == pytest.approx(policy, abs=1e-6)
    assert float(m["value"]) == pytest.approx(value, abs=1e-6)
    assert float(m["moves_left"]) == pytest.approx(0.625)
    assert float(m["reg"]) == pytest.approx(1.0)
    assert float(total) == pytest.approx(2 * policy + 0.5 * value + 3 * 0.625 + 10 * 1.0,
                                         abs=1e-5)
    # q_ratio 0.25 of best (0, 1, 0) + 0.75 result (1, 0, 0): E[score] = 0.75 - 0 -> mse vs 0
    assert float(m["value_mse"]) == pytest.approx(0.75 ** 2 / 4, abs=1e-6)
    root = LossConfig(q_ratio=1.0, q_source="root")
    assert float(loss_terms(outputs, params, batch, root)[1]["value_mse"]) == pytest.approx(
        1.0 / 4, abs=1e-6)
    no_head = ModelOutput(logits, jnp.zeros((1, 3)), None)
    assert float(loss_terms(no_head, params, batch, config)[1]["moves_left"]) == 0.0


def test_loss_config_rejects_bad_values():
    with pytest.raises(ValueError, match="q_ratio"):
        LossConfig(q_ratio=1.5)
    with pytest.raises(ValueError, match="q_source"):
        LossConfig(q_source="played")


# --- optimizer / trainer -----------------------------------------------------------------------

def test_lr_schedule_is_lc0s_piecewise_constant_with_warmup():
    sched = lr_schedule(OptimizerConfig(lr_values=(0.1, 0.01, 0.001), lr_boundaries=(10, 20),
                                        warmup_steps=4))
    got = [float(sched(s)) for s in (0, 1, 3, 9, 10, 19, 20, 100)]
    np.testing.assert_allclose(got, [0.025, 0.05, 0.1, 0.1, 0.01, 0.01, 0.001, 0.001],
                               rtol=1e-6)
    with pytest.raises(ValueError, match="lr_boundaries"):
        OptimizerConfig(lr_values=(0.1, 0.01), lr_boundaries=())


def random_examples(seed: int, n: int, game: int = 0) -> Examples:
    """Synthetic but well-formed examples: real positions' planes, random targets."""
    rng = np.random.default_rng(seed)
    boards = _boards()
    which = rng.integers(0, len(boards), n)
    bits, values = compact_planes(np.stack([encode_board(boards[i]) for i in which]))
    index = np.full((n, 218), -1, np.int16)
    target = np.zeros((n, 218), np.float32)
    for i, b in enumerate(which):  # targets are a function of the position: fittable
        brng = np.random.default_rng([seed, int(b)])
        k = int(brng.integers(1, 30))
        index[i, :k] = brng.choice(1858, k, replace=False)
        p = brng.random(k) ** 3
        target[i, :k] = p / p.sum()
    result = np.eye(3, dtype=np.float32)[which % 3]
    q = rng.uniform(-0.5, 0.5, n).astype(np.float32)
    d = rng.uniform(0, 0.5, n).astype(np.float32)
    ex = Examples(bits, values, index, target, result, q, d, q * 0.9, d, rng.integers(
        1, 80, n).astype(np.float32), np.full(n, game, np.int32), np.arange(n, dtype=np.int32))
    check_examples(ex)
    return ex


def test_training_fits_a_fixed_batch():
    model = make_resnet(1, 8, seed=0, moves_left=True)
    trainer = Trainer(model, LossConfig(), OptimizerConfig(lr_values=(0.05,)))
    state = trainer.init()
    batch = random_examples(1, 32)
    before = trainer.evaluate(state.params, batch)
    for _ in range(40):
        state, metrics = trainer.step(state, batch)
    after = trainer.evaluate(state.params, batch)
    assert int(state.step) == 40 and metrics["lr"] == pytest.approx(0.05)
    assert after["policy"] < before["policy"] - 0.2, (before, after)
    assert after["value"] < before["value"] and after["moves_left"] < before["moves_left"]


def test_any_apply_function_trains():
    """Not only the flax SE-ResNet: any Model(apply(params, planes) -> ModelOutput)."""

    def apply(params, planes):
        x = planes.reshape(planes.shape[0], -1)
        return ModelOutput(x @ params["p"]["kernel"], x @ params["v"]["kernel"], None)

    params = {"p": {"kernel": jnp.zeros((112 * 64, 1858))}, "v": {"kernel": jnp.zeros((7168, 3))}}
    model = Model("linear", apply, params)
    trainer = Trainer(model, optimizer=OptimizerConfig(type="adam", lr_values=(1e-4,)))
    state = trainer.init()
    batch = random_examples(2, 16)
    first = trainer.evaluate(state.params, batch)["loss"]
    for _ in range(10):
        state, _ = trainer.step(state, batch)
    assert trainer.evaluate(state.params, batch)["loss"] < first


def test_to_batch_shapes():
    b = jax.jit(to_batch)(random_examples(3, 5))
    assert b.planes.shape == (5, 112, 8, 8) and b.policy.shape == (5, 1858)
    assert b.best_wdl.shape == (5, 3) and b.moves_left.shape == (5,)
    np.testing.assert_allclose(np.asarray(b.best_wdl.sum(-1)), 1.0, rtol=1e-6)


# --- buffer ------------------------------------------------------------------------------------

def test_buffer_keeps_a_window_of_games():
    buf = ReplayBuffer(window_games=3)
    for g in range(5):
        buf.add_game(random_examples(g, 4 + g, game=g))
    assert buf.num_games == 3 and buf.games_added == 5 and len(buf) == 6 + 7 + 8
    assert set(buf.examples().game.tolist()) == {2, 3, 4}
    sample = buf.sample(64, np.random.default_rng(0))
    assert set(sample.game.tolist()) <= {2, 3, 4} and len(sample) == 64
    back = ReplayBuffer.from_state_dict(buf.state_dict())
    for a, b in zip(back.examples(), buf.examples(), strict=True):
        np.testing.assert_array_equal(a, b)
    assert back.num_games == 3 and back.games_added == 5
    with pytest.raises(ValueError, match="empty"):
        ReplayBuffer(2).sample(1, np.random.default_rng(0))


# --- resume: interrupted + resumed == uninterrupted, bit for bit ------------------------------

def _run(trainer: Trainer, ckpt_dir, generations: int, stop_after: int | None = None,
         seed: int = 7):
    """A miniature training loop: each generation adds 2 games, trains 3 steps, saves."""
    ckpt = Checkpointer(ckpt_dir, keep=2)
    state, buf, gen = trainer.init(), ReplayBuffer(window_games=3), 0
    if ckpt.latest() is not None:
        state, buf, meta = ckpt.restore(ckpt.latest(), like=state)
        gen = meta["generation"]
    while gen < generations:
        for j in range(2):
            buf.add_game(random_examples(1000 * gen + j, 5 + j, game=2 * gen + j))
        for _ in range(3):
            state, _ = trainer.step(state, buf.sample(8, sample_rng(seed, int(state.step))))
        gen += 1
        ckpt.save(gen, state, buf, {"generation": gen})
        if stop_after is not None and gen >= stop_after:
            break
    ckpt.close()
    return state, buf


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_resume_is_bit_exact(tmp_path, opt):
    model = make_resnet(1, 8, seed=3, moves_left=True)
    trainer = Trainer(model, optimizer=OptimizerConfig(type=opt, lr_values=(0.01, 0.005),
                                                       lr_boundaries=(5,), warmup_steps=2))
    full, full_buf = _run(trainer, tmp_path / "a", 4)
    _run(trainer, tmp_path / "b", 4, stop_after=2)  # "interrupted" after 2 generations
    resumed, resumed_buf = _run(trainer, tmp_path / "b", 4)  # restored from disk
    assert int(resumed.step) == int(full.step) == 12
    for a, b in zip(jax.tree.leaves(full), jax.tree.leaves(resumed), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    for a, b in zip(full_buf.examples(), resumed_buf.examples(), strict=True):
        np.testing.assert_array_equal(a, b)
    # the check can fail: one training step more is a different network
    other, _ = trainer.step(jax.tree.map(jnp.array, full), full_buf.sample(8, sample_rng(7, 0)))
    assert not np.array_equal(np.asarray(other.params["input"]["kernel"]),
                              np.asarray(full.params["input"]["kernel"]))


def test_checkpoint_with_empty_buffer(tmp_path):
    trainer = Trainer(make_resnet(0, 4, seed=0))
    state = trainer.init()
    with Checkpointer(tmp_path) as ckpt:
        ckpt.save(0, state, ReplayBuffer(4), {"generation": 0})
        back, buf, meta = ckpt.restore(0, like=state)
    assert len(buf) == 0 and buf.num_games == 0 and meta["generation"] == 0
    assert concat_examples([]).plane_bits.shape == (0, 112, 8)


# --- N_scl schedule ----------------------------------------------------------------------------

def test_nscl_schedule_moves_toward_the_band():
    cfg = NsclScheduleConfig(enabled=True, initial_n_scl=8, target_low=0.8, target_high=1.25,
                             factor=2.0, min_n_scl=2, max_n_scl=32)
    s = NsclState(n_scl=8, nodes=100)
    assert decisive_ratio(6, 4, 4) == 2.5 and decisive_ratio(3, 0, 1) == math.inf
    assert next_state(cfg, s, 6, 4, 4).n_scl == 16  # too decisive -> more PUCT-like
    assert next_state(cfg, s, 1, 8, 1).n_scl == 4  # too drawish -> more contempt
    same = next_state(cfg, s, 5, 10, 5)  # ratio 1: inside the band
    assert same.n_scl == 8 and same.unchanged == 1
    assert next_state(cfg, NsclState(32, 100), 9, 0, 1).n_scl == 32  # clipped at max
    assert next_state(cfg, NsclState(2, 100), 0, 9, 0).n_scl == 2  # clipped at min
    assert next_state(NsclScheduleConfig(), s, 9, 0, 0) == s  # disabled: never moves
    small = NsclScheduleConfig(enabled=True, initial_n_scl=1, factor=1.2)
    assert next_state(small, NsclState(1, 10), 9, 1, 0).n_scl == 2  # moves by >= 1
    doubling = NsclScheduleConfig(enabled=True, stable_generations=2, max_nodes=250)
    s = NsclState(5, 100)
    s = next_state(doubling, s, 2, 4, 2)
    assert s.nodes == 100
    s = next_state(doubling, s, 2, 4, 2)
    assert s.nodes == 200 and s.unchanged == 0
    s = next_state(doubling, next_state(doubling, s, 2, 4, 2), 2, 4, 2)
    assert s.nodes == 200  # 400 would pass max_nodes
