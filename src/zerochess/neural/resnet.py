"""lc0-style SE-ResNet in flax (linen), with lc0's classic heads."""

from __future__ import annotations

import functools
from typing import Any

import chess
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.policy_map import FROM_SQUARE, NUM_MOVES, PROMOTION, TO_SQUARE
from zerochess.errors import ConfigError, ModelError, quote
from zerochess.neural.model import NUM_PLANES, Model, ModelOutput

CONV_POLICY_PLANES = 73


def _conv_policy_index() -> np.ndarray:
    """int32 [1858]: for each lc0 move, its flat index ``plane * 64 + from_square`` in the
    convolutional policy output (lc0 ``kConvPolicyMap``, inverted).

    Planes (AlphaZero layout, mover's frame): 0..55 queen-line moves, direction
    N NE E SE S SW W NW (x7 distances 1..7); 56..63 knight moves (df, dr) = (1,2) (2,1)
    (2,-1) (1,-2) (-1,-2) (-2,-1) (-2,1) (-1,2); 64..72 promotions from the 7th rank,
    direction NW N NE x piece r b q. Knight promotions use the plain move's plane.
    """
    directions = [(0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1)]
    knight = [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)]
    promo_dirs = [(-1, 1), (0, 1), (1, 1)]
    promo_pieces = [chess.ROOK, chess.BISHOP, chess.QUEEN]
    index = np.full(NUM_MOVES, -1, np.int32)
    for i in range(NUM_MOVES):
        frm, to, promo = int(FROM_SQUARE[i]), int(TO_SQUARE[i]), int(PROMOTION[i])
        df = chess.square_file(to) - chess.square_file(frm)
        dr = chess.square_rank(to) - chess.square_rank(frm)
        if promo:
            plane = 64 + 3 * promo_dirs.index((df, dr)) + promo_pieces.index(promo)
        elif (df, dr) in knight:
            plane = 56 + knight.index((df, dr))
        else:
            steps = max(abs(df), abs(dr))
            plane = 7 * directions.index((int(np.sign(df)), int(np.sign(dr)))) + steps - 1
        index[i] = plane * 64 + frm
    assert len(set(index.tolist())) == NUM_MOVES and index.max() < CONV_POLICY_PLANES * 64
    return index


CONV_POLICY_INDEX = _conv_policy_index()
"""int32 [1858]: flat (plane * 64 + from-square) source of each move in the conv policy."""


def mish(x: jax.Array) -> jax.Array:
    return x * jnp.tanh(jax.nn.softplus(x))


_ACTIVATIONS = {"relu": jax.nn.relu, "mish": mish}


def _channel_major(x: jax.Array) -> jax.Array:
    """NHWC [B, 8, 8, C] -> [B, C * 64] in lc0's NCHW flattening order."""
    return x.transpose(0, 3, 1, 2).reshape(x.shape[0], -1)


class ResidualBlock(nn.Module):
    """Two 3x3 convs with an optional lc0 SE unit and the skip connection."""

    filters: int
    se_channels: int = 0
    activation: str = "relu"
    dtype: Any = jnp.float32
    precision: Any = None

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        act = _ACTIVATIONS[self.activation]
        conv = functools.partial(nn.Conv, self.filters, (3, 3), padding="SAME",
                                 dtype=self.dtype, precision=self.precision)
        y = act(conv(name="conv1")(x))
        y = conv(name="conv2")(y)
        if self.se_channels:
            dense = functools.partial(nn.Dense, dtype=self.dtype, precision=self.precision)
            pooled = jnp.mean(y, axis=(1, 2))  # [B, C]
            s = act(dense(self.se_channels, name="se_fc1")(pooled))
            s = dense(2 * self.filters, name="se_fc2")(s)
            gamma, beta = jnp.split(s, 2, axis=-1)
            y = jax.nn.sigmoid(gamma)[:, None, None, :] * y + beta[:, None, None, :]
        return act(y + x)


class SEResNet(nn.Module):
    """lc0 classic SE-ResNet: ``[B, 112, 8, 8]`` planes -> :class:`ModelOutput`."""

    blocks: int
    filters: int
    se_channels: int = 0
    policy: str = "conv"  # "conv" | "classical"
    policy_channels: int = 80
    value: str = "wdl"  # "wdl" | "classical"
    value_channels: int = 32
    value_hidden: int = 128
    moves_left: bool = False
    mlh_channels: int = 8
    mlh_hidden: int = 128
    activation: str = "relu"  # "relu" | "mish"
    dtype: Any = jnp.float32
    precision: Any = None

    @nn.compact
    def __call__(self, planes: jax.Array) -> ModelOutput:
        if self.policy not in ("conv", "classical"):
            raise ConfigError(f"unknown policy head {quote(self.policy)}")
        if self.value not in ("wdl", "classical"):
            raise ConfigError(f"unknown value head {quote(self.value)}")
        act = _ACTIVATIONS[self.activation]
        conv = functools.partial(nn.Conv, padding="SAME", dtype=self.dtype,
                                 precision=self.precision)
        dense = functools.partial(nn.Dense, dtype=self.dtype, precision=self.precision)

        x = jnp.asarray(planes, self.dtype).transpose(0, 2, 3, 1)  # [B, 8, 8, 112]
        x = act(conv(self.filters, (3, 3), name="input")(x))
        for i in range(self.blocks):
            x = ResidualBlock(self.filters, self.se_channels, self.activation, self.dtype,
                              self.precision, name=f"block_{i}")(x)

        if self.policy == "conv":
            p = act(conv(self.filters, (3, 3), name="policy1")(x))
            p = conv(self.policy_channels, (3, 3), name="policy")(p)  # [B, 8, 8, P]
            # gather straight from the NHWC layout (no transpose to lc0's NCHW first)
            plane, square = np.divmod(CONV_POLICY_INDEX, 64)
            policy_logits = p.reshape(p.shape[0], -1)[
                :, jnp.asarray(square * self.policy_channels + plane)]
        else:
            p = act(conv(self.policy_channels, (1, 1), name="policy")(x))
            policy_logits = dense(NUM_MOVES, name="policy_fc")(_channel_major(p))

        v = act(conv(self.value_channels, (1, 1), name="value")(x))
        v = act(dense(self.value_hidden, name="value_fc1")(_channel_major(v)))
        if self.value == "wdl":
            wdl_logits = dense(3, name="value_fc2")(v).astype(jnp.float32)
        else:
            q = jnp.tanh(dense(1, name="value_fc2")(v)[:, 0].astype(jnp.float32))
            tiny = jnp.float32(1e-30)
            wdl_logits = jnp.stack(
                [jnp.log(jnp.maximum((1 + q) / 2, tiny)), jnp.full_like(q, jnp.log(tiny)),
                 jnp.log(jnp.maximum((1 - q) / 2, tiny))], axis=-1)

        moves_left = None
        if self.moves_left:
            m = act(conv(self.mlh_channels, (1, 1), name="moves_left")(x))
            m = act(dense(self.mlh_hidden, name="moves_left_fc1")(_channel_major(m)))
            moves_left = jax.nn.relu(dense(1, name="moves_left_fc2")(m)[:, 0]).astype(
                jnp.float32)
        return ModelOutput(policy_logits.astype(jnp.float32), wdl_logits, moves_left)


def init_params(module: SEResNet, seed: int = 0, *, bias_scale: float = 0.0) -> Any:
    """Random parameters for ``module`` drawn with numpy (no XLA compilation).

    Kernels are LeCun-normal (``N(0, 1 / fan_in)``, fan_in = every kernel dim but the
    last); biases are ``N(0, bias_scale)`` (zeros by default). Deterministic in ``seed``.
    """
    shapes = jax.eval_shape(module.init, jax.random.PRNGKey(0),
                            jnp.zeros((1, NUM_PLANES, 8, 8), jnp.float32))["params"]
    rng = np.random.default_rng(seed)

    def draw(path: Any, leaf: Any) -> np.ndarray:
        shape = tuple(leaf.shape)
        if jax.tree_util.keystr(path[-1:]).endswith("'kernel']"):
            fan_in = int(np.prod(shape[:-1]))
            return rng.normal(0.0, 1.0 / np.sqrt(fan_in), shape).astype(np.float32)
        return rng.normal(0.0, bias_scale, shape).astype(np.float32)

    return jax.tree_util.tree_map_with_path(draw, shapes)


def model_from_module(module: SEResNet, params: Any, name: str) -> Model:
    """Wraps ``module`` and its ``params`` as a :class:`Model`.

    The parameter tree must match ``module.init``'s structure and shapes exactly
    (``ModelError``, a ``ValueError``, otherwise). Arrays are converted to float32 jax
    arrays.
    """
    check_params(module, params, name)
    params = jax.tree_util.tree_map(lambda a: jnp.asarray(a, jnp.float32), params)

    def apply(params: Any, planes: jax.Array) -> ModelOutput:
        return module.apply({"params": params}, planes)

    return Model(name=name, apply=apply, params=params, has_moves_left=module.moves_left,
                 module=module)


def check_params(module: SEResNet, params: Any, name: str) -> None:
    """``ModelError`` unless ``params`` has exactly ``module.init``'s structure and shapes
    (the message names up to 8 parameters that are missing, extra or of another shape)."""
    expected = jax.eval_shape(module.init, jax.random.PRNGKey(0),
                              jnp.zeros((1, NUM_PLANES, 8, 8), jnp.float32))["params"]
    exp_shapes = jax.tree_util.tree_map(lambda a: tuple(a.shape), expected)
    try:
        got_shapes = jax.tree_util.tree_map(lambda a: tuple(np.shape(a)), params)
    except Exception:
        raise ModelError(f"{name}: the parameters are not a tree of arrays: "
                         f"{quote(params)}") from None
    flat_exp = dict(jax.tree_util.tree_flatten_with_path(exp_shapes)[0])
    flat_got = dict(jax.tree_util.tree_flatten_with_path(got_shapes)[0])
    if flat_exp != flat_got:
        diff = sorted(
            jax.tree_util.keystr(k) for k in set(flat_exp) ^ set(flat_got)
        ) or sorted(jax.tree_util.keystr(k) for k in flat_exp if flat_exp[k] != flat_got.get(k))
        raise ModelError(f"{name}: parameters do not match the network structure: {diff[:8]}")


def make_resnet(
    blocks: int,
    filters: int,
    seed: int = 0,
    *,
    se_ratio: int | None = 4,
    policy: str = "conv",
    value: str = "wdl",
    moves_left: bool = False,
    activation: str = "relu",
    dtype: Any = jnp.float32,
    precision: Any = None,
) -> Model:
    """A randomly initialised lc0-style SE-ResNet ``blocks`` x ``filters``.

    Args:
      blocks, filters: residual tower size.
      seed: PRNG seed of the initialisation.
      se_ratio: SE hidden size is ``filters // se_ratio``; None or 0 = no SE units.
      policy: ``"conv"`` (lc0 convolutional policy) or ``"classical"``.
      value: ``"wdl"`` or ``"classical"``.
      moves_left: add lc0's moves-left head.
      activation: ``"relu"`` or ``"mish"``.
      dtype: compute dtype (params are float32).
      precision: ``jax.lax.Precision`` for convs / dense layers.
    """
    if blocks < 0 or filters <= 0:
        raise ModelError(f"bad resnet size {blocks}x{filters}")
    se_channels = max(1, filters // se_ratio) if se_ratio else 0
    module = SEResNet(
        blocks=blocks, filters=filters, se_channels=se_channels, policy=policy,
        policy_channels=80 if policy == "conv" else 32, value=value, moves_left=moves_left,
        activation=activation, dtype=dtype, precision=precision,
    )
    params = init_params(module, seed)
    return model_from_module(module, params, f"resnet:{blocks}x{filters}:{seed}")
