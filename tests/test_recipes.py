"""The JAX RL recipes' helpers (issue 38): settings by player inside jit
(``search.per_player``), actions decoded to moves (``chess.actions``), value targets from
rewards and the dense/slot and packed/full layouts (``training.targets``).

References are independent: plain numpy loops, python-chess's legal moves, lc0's move
table read as text; conversions are checked both ways.
"""

from __future__ import annotations

import random

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zerochess import ConfigError, SearchConfig, UserError
from zerochess.chess.actions import actions_to_uci, boards_from_states, decode_actions
from zerochess.chess.policy_map import MOVES, NUM_MOVES
from zerochess.env import start_states
from zerochess.search import stack_configs
from zerochess.search.per_player import for_player, player_settings, stack_players
from zerochess.training.examples import dense_policy
from zerochess.training.targets import (
    dense_to_slots,
    legal_indices,
    pack_planes,
    returns,
    slots_to_dense,
    unpack_planes,
    value_targets,
    value_to_wdl,
)

B = 6


def _params(config: SearchConfig, seed: int):
    """SearchParams [B] of one config, with random move filters (trailing shapes [2, K])."""
    p = stack_configs([config] * B)
    rng = np.random.default_rng(seed)
    return p.replace(
        move_avoid=jnp.asarray(rng.integers(0, 9, p.move_avoid.shape), p.move_avoid.dtype),
        move_allowed=jnp.asarray(rng.random(p.move_allowed.shape) < 0.5),
        move_allow_until=jnp.asarray(rng.integers(0, 9, B), p.move_allow_until.dtype))


def test_for_player_takes_every_field_of_the_mover_whatever_its_shape():
    sc = _params(SearchConfig(n_scl=5, hybrid_ratio_mode="manual_schedule",
                              hybrid_ratio_schedule="10:0.5 200:0.9"), 1)
    puct = _params(SearchConfig(cpuct=2.5), 2)
    assert sc.move_avoid.ndim == 3 and sc.hybrid_nodes.ndim == 2  # not [B]
    player = np.array([0, 1, 1, 0, 1, 0], np.int32)
    both = jax.jit(stack_players)(sc, puct)
    out = jax.jit(for_player)(both, jnp.asarray(player))
    names = [f for f in sc.keys()]
    assert len(names) == len(jax.tree.leaves(sc))
    for name in names:
        got = np.asarray(out[name])
        ref = np.stack([np.asarray((sc if player[b] == 0 else puct)[name])[b]
                        for b in range(B)])
        assert got.shape == ref.shape and got.dtype == ref.dtype, name
        np.testing.assert_array_equal(got, ref, err_msg=name)
    np.testing.assert_array_equal(np.asarray(out.n_scl), np.where(player == 0, 5, 2**31 - 1))
    same = jax.jit(player_settings)([sc, puct], jnp.asarray(player))
    for a, b in zip(jax.tree.leaves(same), jax.tree.leaves(out), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_per_player_refuses_mismatched_shapes_quoting_them():
    sc = stack_configs([SearchConfig(n_scl=5)] * B)
    with pytest.raises(ConfigError, match=r"\[6, 3\]"):
        stack_players(sc, stack_configs([SearchConfig()] * 3))
    with pytest.raises(ConfigError, match="not SearchParams"):
        stack_players(sc, SearchConfig())
    with pytest.raises(ConfigError, match=r"\(6,\).*\(4,\)"):
        for_player(stack_players(sc, sc), jnp.zeros(4, jnp.int32))
    with pytest.raises(ConfigError, match="stack_players"):
        for_player(sc, jnp.zeros(B, jnp.int32))


def _reference_move(board: chess.Board, index: int) -> chess.Move:
    """lc0's move string in the mover's frame, mirrored for black, castling king-to-rook."""
    text = MOVES[index]
    frm, to = chess.parse_square(text[:2]), chess.parse_square(text[2:4])
    if board.turn == chess.BLACK:
        frm, to = chess.square_mirror(frm), chess.square_mirror(to)
    promo = chess.Piece.from_symbol(text[4]).piece_type if len(text) > 4 else None
    if board.piece_type_at(frm) == chess.PAWN and chess.square_rank(to) in (0, 7):
        promo = promo or chess.KNIGHT
    if (board.piece_type_at(frm) == chess.KING and board.piece_at(to) is not None
            and board.piece_at(to) == chess.Piece(chess.ROOK, board.turn)):
        if not board.chess960:  # python-chess writes standard castling as the king's move
            to = chess.square(6 if to > frm else 2, chess.square_rank(frm))
        return chess.Move(frm, to)
    return chess.Move(frm, to, promo)


def _positions() -> list[chess.Board]:
    rng = random.Random(0)
    boards = [chess.Board("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q2/PPPBBPpP/R3K2R b KQkq - 0 1"),
              chess.Board("4k3/1P6/8/8/8/8/6p1/4K3 w - - 0 1"),
              chess.Board("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
                          chess960=True)]
    for _game in range(6):
        board = chess.Board()
        for _ in range(rng.randrange(1, 60)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        boards.append(board)
    return [b for b in boards if not b.is_game_over()]


def test_decoded_actions_are_python_chess_legal_moves():
    boards = _positions()
    states = start_states(boards)
    assert [b.fen() for b in boards_from_states(states)] == [b.fen() for b in boards]
    turns = {b.turn for b in boards}
    assert turns == {chess.WHITE, chess.BLACK}
    for i, board in enumerate(boards):
        legal = np.flatnonzero(states.legal_action_mask[i])
        rows = np.full(len(legal), i)
        one = jax.tree.map(lambda a, rows=rows: a[rows], states)
        moves = decode_actions(one, legal)
        assert set(moves) == set(board.legal_moves), board.fen()
        assert moves == [_reference_move(board, int(a)) for a in legal], board.fen()
        assert actions_to_uci(one, legal) == [m.uci() for m in moves]


def test_decode_actions_no_move_and_bad_actions():
    states = start_states([chess.Board(), chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")])
    e2e4 = MOVES.index("e2e4")
    assert actions_to_uci(states, [e2e4, -1]) == ["e2e4", None]
    assert actions_to_uci(jax.tree.map(jnp.asarray, states), jnp.array([e2e4, -1])) == [
        "e2e4", None]
    with pytest.raises(UserError, match="1858"):
        decode_actions(states, [e2e4, NUM_MOVES])
    with pytest.raises(UserError, match="tree 1.*not legal"):
        decode_actions(states, [e2e4, e2e4])
    with pytest.raises(UserError, match=r"\[2\]"):
        decode_actions(states, [e2e4])


def _returns_reference(rewards: np.ndarray, done: np.ndarray) -> np.ndarray:
    out = np.zeros_like(rewards)
    t_max, batch, _ = rewards.shape
    for b in range(batch):
        for t in range(t_max):
            total = np.zeros(2, np.float32)
            for u in range(t, t_max):
                total += rewards[u, b]
                if done[u, b]:
                    break
            out[t, b] = total
    return out


def test_value_targets_follow_each_game_to_its_end():
    rng = np.random.default_rng(0)
    t_max, batch = 12, 5
    done = rng.random((t_max, batch)) < 0.25
    sign = rng.choice([-1.0, 0.0, 1.0], (t_max, batch))
    rewards = np.where(done, sign, 0.0)[..., None] * np.array([1.0, -1.0])
    rewards = rewards.astype(np.float32)
    player = rng.integers(0, 2, (t_max, batch))
    ref = _returns_reference(rewards, done)
    np.testing.assert_allclose(np.asarray(jax.jit(returns)(rewards, done)), ref)
    z = np.asarray(jax.jit(value_targets)(rewards, player, done))
    np.testing.assert_allclose(z, np.take_along_axis(ref, player[..., None], -1)[..., 0])
    # one game, no restart: player 1 (black here) mates at step 3; alternate movers
    r = np.zeros((5, 1, 2), np.float32)
    r[3, 0] = [-1.0, 1.0]
    mover = np.array([[0], [1], [0], [1], [0]])
    np.testing.assert_array_equal(np.asarray(value_targets(r, mover))[:, 0],
                                  [-1, 1, -1, 1, 0])
    np.testing.assert_array_equal(np.asarray(value_to_wdl(jnp.array([1.0, 0.0, -1.0]))),
                                  np.eye(3))
    with pytest.raises(UserError, match=r"\(5, 1\)"):
        value_targets(r, mover[:4])


def _random_slots(rng, batch):
    legal = np.full((batch, 218), -1, np.int16)
    values = np.zeros((batch, 218), np.float32)
    for b in range(batch):
        n = rng.integers(0, 219)
        legal[b, :n] = rng.choice(NUM_MOVES, n, replace=False)
        values[b, :n] = rng.random(n)
    return legal, values


def test_dense_and_slot_targets_convert_both_ways():
    rng = np.random.default_rng(1)
    legal, values = _random_slots(rng, 7)
    ref = np.zeros((7, NUM_MOVES), np.float32)
    for b in range(7):
        for k in range(218):
            if legal[b, k] >= 0:
                ref[b, legal[b, k]] = values[b, k]
    on = np.zeros_like(ref, bool)
    for b in range(7):
        on[b, legal[b][legal[b] >= 0]] = True

    def convert(xp):
        dense = slots_to_dense(legal, values, xp=xp)
        return (dense, dense_to_slots(dense, legal, xp=xp),
                slots_to_dense(legal, values, illegal=-1.0, xp=xp))

    for dense, back, lc0 in (jax.jit(lambda: convert(jnp))(), convert(np)):
        np.testing.assert_array_equal(np.asarray(dense), ref)
        np.testing.assert_array_equal(np.asarray(back), values)
        np.testing.assert_array_equal(np.asarray(lc0), np.where(on, ref, -1.0))
        np.testing.assert_array_equal(np.asarray(lc0), dense_policy(legal, values, np))
    mask = rng.random((3, 2, NUM_MOVES)) < 0.05
    idx = np.asarray(jax.jit(legal_indices)(mask))
    for a in range(3):
        for b in range(2):
            want = np.flatnonzero(mask[a, b])[:218]
            np.testing.assert_array_equal(idx[a, b, :len(want)], want)
            assert np.all(idx[a, b, len(want):] == -1)
    with pytest.raises(UserError, match="218"):
        dense_to_slots(ref, legal[:, :10])


def test_packed_and_full_planes_convert_both_ways():
    boards = _positions()
    planes = np.asarray(start_states(boards).observation)  # [N, 112, 8, 8] real lc0 input
    rng = np.random.default_rng(2)
    planes = np.concatenate([planes, (rng.random((2, 112, 8, 8)) < 0.3) * rng.random(
        (2, 112, 1, 1)).astype(np.float32)])
    bits, values = pack_planes(planes)
    assert bits.shape == (len(planes), 112, 8) and bits.dtype == np.uint8
    # square s of plane p is bit s % 8 of byte s // 8 (lc0's mask order)
    flat = planes.reshape(len(planes), 112, 64)
    ref_bits = np.zeros_like(bits)
    for s in range(64):
        ref_bits[..., s // 8] |= (flat[..., s] != 0).astype(np.uint8) << (s % 8)
    np.testing.assert_array_equal(bits, ref_bits)
    jbits, jvalues = jax.jit(lambda p: pack_planes(p, xp=jnp))(planes)
    np.testing.assert_array_equal(np.asarray(jbits), bits)
    np.testing.assert_array_equal(np.asarray(jvalues), values)
    for xp in (jnp, np):
        np.testing.assert_array_equal(np.asarray(unpack_planes(bits, values, xp=xp)), planes)
    with pytest.raises(UserError, match="more than one"):
        pack_planes(planes * rng.random(planes.shape).astype(np.float32))
