"""Write flax SE-ResNets as lc0 network files (``.pb.gz``), so lc0 itself runs our nets."""

from __future__ import annotations

import gzip
import os
import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from zerochess.errors import ConfigError, ModelError, quote
from zerochess.neural.model import Model
from zerochess.neural.resnet import SEResNet, check_params

LC0_MAGIC = 0x1C0
ENCODINGS = {"linear16": 1, "float16": 2, "bfloat16": 3, "float32": 4}
# The classic formats are read since lc0 0.21; per-layer float encodings are not read by
# lc0 0.32.1 (see docs/DESIGN.md), so files using them require a later lc0.
MIN_VERSION = {"linear16": (0, 21, 0), "float16": (0, 33, 0), "bfloat16": (0, 33, 0),
               "float32": (0, 33, 0)}

BatchNormStats = Callable[[int], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
"""``channels -> (means, variances, gammas, betas)``: unfolded batch-norm statistics to
store with every conv block (for test networks; exported nets have none)."""


# --- protobuf wire format --------------------------------------------------------------------

def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def pb_varint(field: int, value: int) -> bytes:
    """A varint field (wire type 0)."""
    return _varint(field << 3) + _varint(value)


def pb_bytes(field: int, data: bytes) -> bytes:
    """A length-delimited field (wire type 2): bytes, strings, sub-messages."""
    return _varint((field << 3) | 2) + _varint(len(data)) + data


def pb_float(field: int, value: float) -> bytes:
    """A float field (wire type 5)."""
    return _varint((field << 3) | 5) + struct.pack("<f", value)


def pb_fixed32(field: int, value: int) -> bytes:
    """A fixed32 field (wire type 5)."""
    return _varint((field << 3) | 5) + struct.pack("<I", value)


# --- layers ----------------------------------------------------------------------------------

def _bfloat16_bits(v: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bit patterns, rounded to nearest even."""
    u = v.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype("<u2")


def encode_layer(values: np.ndarray, encoding: str = "linear16") -> bytes:
    """A ``Weights.Layer`` message holding ``values`` (flattened) in ``encoding``."""
    if encoding not in ENCODINGS:
        raise ConfigError(f"unknown lc0 layer encoding {quote(encoding)}; "
                         f"known: {sorted(ENCODINGS)}")
    v = np.asarray(values, np.float32).reshape(-1)
    if not np.all(np.isfinite(v)):
        raise ModelError("cannot export non-finite weights (NaN or inf) to lc0")
    if encoding == "linear16":
        lo, hi = (float(v.min()), float(v.max())) if v.size else (0.0, 0.0)
        if hi > lo:
            q = np.rint((v - lo) / (hi - lo) * 65535.0).astype("<u2")
        else:
            q = np.zeros(v.size, "<u2")
        return pb_float(1, lo) + pb_float(2, hi) + pb_bytes(3, q.tobytes())
    if encoding == "float16":
        data = v.astype("<f2").tobytes()
    elif encoding == "bfloat16":
        data = _bfloat16_bits(v).tobytes()
    else:
        data = v.astype("<f4").tobytes()
    return pb_bytes(3, data) + pb_varint(4, ENCODINGS[encoding])


def _conv_oihw(kernel: Any) -> np.ndarray:
    return np.asarray(kernel, np.float32).transpose(3, 2, 0, 1)


def _conv_block(p: dict[str, Any], encoding: str, batchnorm: BatchNormStats | None) -> bytes:
    """A ``ConvBlock``: weights (OIHW) and biases (+ optional unfolded batch norm)."""
    bias = np.asarray(p["bias"], np.float32)
    out = (pb_bytes(1, encode_layer(_conv_oihw(p["kernel"]), encoding))
           + pb_bytes(2, encode_layer(bias, encoding)))
    if batchnorm is not None:
        means, variances, gammas, betas = batchnorm(bias.size)
        for field, values in ((3, means), (4, variances), (5, gammas), (6, betas)):
            out += pb_bytes(field, encode_layer(values, encoding))
    return out


def _dense(p: dict[str, Any], encoding: str) -> tuple[bytes, bytes]:
    return (encode_layer(np.asarray(p["kernel"], np.float32).T, encoding),
            encode_layer(np.asarray(p["bias"], np.float32), encoding))


# --- network ---------------------------------------------------------------------------------

def resnet_config(module: SEResNet) -> dict[str, Any]:
    """The ``SEResNet`` fields that describe an lc0 network (``lc0_params``'s config)."""
    return {name: getattr(module, name) for name in (
        "blocks", "filters", "se_channels", "policy", "policy_channels", "value",
        "value_channels", "value_hidden", "moves_left", "mlh_channels", "mlh_hidden",
        "activation")}


def lc0_net_bytes(
    config: dict[str, Any],
    params: dict[str, Any],
    *,
    encoding: str = "linear16",
    batchnorm: BatchNormStats | None = None,
    network: int | None = None,
    input_format: int = 1,
    policy_format: int | None = None,
    value_format: int | None = None,
    moves_left_format: int | None = None,
    activation: int | None = None,
    extra_weights: bytes = b"",
    license_text: str | None = None,
) -> bytes:
    """An lc0 ``Net`` protobuf (uncompressed) for an ``SEResNet`` config and its params.

    Args:
      config: the ``SEResNet`` fields (:func:`resnet_config`).
      params: its flax parameter tree.
      encoding: layer encoding (``linear16``, ``float32``, ``float16``, ``bfloat16``).
      batchnorm: optional unfolded batch-norm statistics for every conv block.
      network, input_format, policy_format, value_format, moves_left_format, activation:
        lc0 format enums; default to what ``config`` implies (override only to write
        deliberately unusual files, e.g. in tests).
      extra_weights: raw protobuf appended to the ``Weights`` message.
      license_text: the ``Net.license`` string.
    """
    if config["policy_channels"] < 73 and config["policy"] == "conv":
        raise ModelError("a convolutional policy head needs >= 73 planes for lc0")
    w = pb_bytes(1, _conv_block(params["input"], encoding, batchnorm))
    for i in range(config["blocks"]):
        blk = params[f"block_{i}"]
        res = pb_bytes(1, _conv_block(blk["conv1"], encoding, batchnorm))
        res += pb_bytes(2, _conv_block(blk["conv2"], encoding, batchnorm))
        if config.get("se_channels"):
            w1, b1 = _dense(blk["se_fc1"], encoding)
            w2, b2 = _dense(blk["se_fc2"], encoding)
            res += pb_bytes(3, pb_bytes(1, w1) + pb_bytes(2, b1) + pb_bytes(3, w2)
                            + pb_bytes(4, b2))
        w += pb_bytes(2, res)
    if config["policy"] == "conv":
        w += pb_bytes(11, _conv_block(params["policy1"], encoding, batchnorm))
        w += pb_bytes(3, _conv_block(params["policy"], encoding, batchnorm))
    else:
        w += pb_bytes(3, _conv_block(params["policy"], encoding, batchnorm))
        pw, pb = _dense(params["policy_fc"], encoding)
        w += pb_bytes(4, pw) + pb_bytes(5, pb)
    w += pb_bytes(6, _conv_block(params["value"], encoding, batchnorm))
    for (fw, fb), name in (((7, 8), "value_fc1"), ((9, 10), "value_fc2")):
        lw, lb = _dense(params[name], encoding)
        w += pb_bytes(fw, lw) + pb_bytes(fb, lb)
    if config.get("moves_left"):
        w += pb_bytes(12, _conv_block(params["moves_left"], encoding, batchnorm))
        for (fw, fb), name in (((13, 14), "moves_left_fc1"), ((15, 16), "moves_left_fc2")):
            lw, lb = _dense(params[name], encoding)
            w += pb_bytes(fw, lw) + pb_bytes(fb, lb)
    w += extra_weights

    wdl = config["value"] == "wdl"
    nf = pb_varint(1, input_format)
    nf += pb_varint(2, 2 if wdl else 1)  # output: OUTPUT_WDL / OUTPUT_CLASSICAL
    nf += pb_varint(3, network if network is not None else (4 if config.get("se_channels")
                                                            else 3))
    nf += pb_varint(4, policy_format if policy_format is not None
                    else (2 if config["policy"] == "conv" else 1))
    nf += pb_varint(5, value_format if value_format is not None else (2 if wdl else 1))
    nf += pb_varint(6, moves_left_format if moves_left_format is not None
                    else int(bool(config.get("moves_left"))))
    nf += pb_varint(7, activation if activation is not None
                    else int(config.get("activation", "relu") == "mish"))
    fmt = pb_varint(1, 1) + pb_bytes(2, nf)  # weights_encoding LINEAR16 (layers override)
    major, minor, patch = MIN_VERSION[encoding]
    version = pb_varint(1, major) + pb_varint(2, minor) + pb_varint(3, patch)
    out = pb_fixed32(1, LC0_MAGIC)
    if license_text:
        out += pb_bytes(2, license_text.encode())
    return out + pb_bytes(3, version) + pb_bytes(4, fmt) + pb_bytes(10, w)


def write_lc0_net(path: str | os.PathLike[str], data: bytes) -> None:
    """Write protobuf ``data`` gzip-compressed (lc0's ``.pb.gz``), atomically; the gzip
    header holds no time stamp or name, so the same data always gives the same file (and
    the same SHA-256 in run records)."""
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                                mtime=0) as f:
        f.write(data)
    os.replace(tmp, path)


def export_lc0(path: str | os.PathLike[str], module: SEResNet | Model,
               params: dict[str, Any] | None = None, *, encoding: str = "linear16") -> None:
    """Write an SE-ResNet with its parameters as an lc0 ``.pb.gz`` network at ``path``.

    ``module``: an ``SEResNet`` (with ``params``), or a ``Model`` built on one
    (``make_resnet``, ``load_model`` of an lc0 file, a training run's network; its own
    parameters unless ``params`` is given). lc0's file format holds lc0's classic
    SE-ResNet only, so anything else (the built-in evaluator, a network of another
    architecture, parameters of another shape) is refused with a ``ModelError`` that
    says what can be exported.

    The file loads back with ``zerochess.load_model(path)`` (``--model path`` in the CLI)
    and runs in lc0 (``lc0 --weights=path``); ``encoding="float32"`` is exact but needs an
    lc0 newer than 0.32 (see docs/DESIGN.md).
    """
    module, params = _exportable(module, params)
    params = {k: _to_numpy(v) for k, v in dict(params).items()}
    write_lc0_net(path, lc0_net_bytes(resnet_config(module), params, encoding=encoding))


_EXPORTABLE = ("export_lc0 writes lc0's classic SE-ResNet (zerochess.neural.SEResNet with its "
               "parameters, or a Model built on one: make_resnet, load_model of an lc0 file, "
               "a training run's network)")


def _exportable(module: Any, params: Any) -> tuple[SEResNet, Any]:
    """(the SEResNet, its parameters) to export, or ``ModelError`` saying what can be."""
    if isinstance(module, Model):
        if not isinstance(module.module, SEResNet):
            raise ModelError(f"{_EXPORTABLE}; model {quote(module.name)} is not one (an lc0 "
                             "file holds no other architecture)")
        params = module.params if params is None else params
        module = module.module
    elif not isinstance(module, SEResNet):
        raise ModelError(f"{_EXPORTABLE}; got {quote(module, 60)} (a "
                         f"{type(module).__name__})")
    if params is None:
        raise ModelError("export_lc0 needs the parameters of the SEResNet (params=...)")
    if not hasattr(params, "items"):
        raise ModelError(f"{_EXPORTABLE}; its parameters must be a mapping of arrays "
                         f"(flax's params tree), got a {type(params).__name__}")
    if set(params) == {"params"}:  # flax's variables dict: the params tree inside it
        params = params["params"]
    check_params(module, params, "export_lc0")
    return module, params


def _to_numpy(tree: Any) -> Any:
    if isinstance(tree, dict) or hasattr(tree, "items"):
        return {k: _to_numpy(v) for k, v in tree.items()}
    return np.asarray(tree, np.float32)


__all__ = ["ENCODINGS", "encode_layer", "export_lc0", "lc0_net_bytes", "pb_bytes",
           "pb_fixed32", "pb_float", "pb_varint", "resnet_config", "write_lc0_net"]
