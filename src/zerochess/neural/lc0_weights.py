"""Load lc0 network files (``.pb.gz`` / ``.pb``) into the flax SE-ResNet."""

from __future__ import annotations

import os
import struct
import zlib
from typing import Any

import numpy as np

from zerochess.errors import ModelFileError
from zerochess.neural.model import Model
from zerochess.neural.resnet import SEResNet, model_from_module
from zerochess.user_files import MAX_NETWORK_FILE_BYTES, read_user_bytes

# --- protobuf wire format --------------------------------------------------------------------

Message = dict[int, list[Any]]
"""A decoded message: field number -> raw values (int for varint/fixed, bytes for
length-delimited fields) in file order."""


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated protobuf varint")
        if shift > 63:
            raise ValueError("protobuf varint longer than 10 bytes")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def parse_message(buf: bytes) -> Message:
    """Decodes one protobuf message's fields (wire types 0, 1, 2, 5) without a schema."""
    fields: Message = {}
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            if pos + 8 > end:
                raise ValueError("truncated protobuf fixed64")
            value = int.from_bytes(buf[pos:pos + 8], "little")
            pos += 8
        elif wire == 2:
            length, pos = _varint(buf, pos)
            if pos + length > end:
                raise ValueError("truncated protobuf length-delimited field")
            value = bytes(buf[pos:pos + length])
            pos += length
        elif wire == 5:
            if pos + 4 > end:
                raise ValueError("truncated protobuf fixed32")
            value = int.from_bytes(buf[pos:pos + 4], "little")
            pos += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire} (field {field})")
        fields.setdefault(field, []).append(value)
    return fields


def _last(msg: Message, field: int, default: Any = None) -> Any:
    values = msg.get(field)
    return values[-1] if values else default


def _sub(msg: Message, field: int) -> Message:
    """A sub-message (merged like protobuf does for repeated occurrences)."""
    merged: Message = {}
    for raw in msg.get(field, []):
        for k, v in parse_message(raw).items():
            merged.setdefault(k, []).extend(v)
    return merged


def _float32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


# --- lc0 net.proto field numbers and enums ----------------------------------------------------

_NET_MAGIC, _NET_FORMAT, _NET_WEIGHTS, _NET_ONNX = 1, 4, 10, 11
_FORMAT_ENCODING, _FORMAT_NETWORK = 1, 2
_NF_INPUT, _NF_OUTPUT, _NF_NETWORK, _NF_POLICY, _NF_VALUE, _NF_MOVES_LEFT, _NF_ACTIVATION = (
    1, 2, 3, 4, 5, 6, 7)
_LAYER_MIN, _LAYER_MAX, _LAYER_PARAMS, _LAYER_ENCODING = 1, 2, 3, 4
_CONV_W, _CONV_B, _CONV_MEANS, _CONV_STDDIVS, _CONV_GAMMAS, _CONV_BETAS = 1, 2, 3, 4, 5, 6
_RES_CONV1, _RES_CONV2, _RES_SE = 1, 2, 3
_SE_W1, _SE_B1, _SE_W2, _SE_B2 = 1, 2, 3, 4
_W_INPUT, _W_RESIDUAL, _W_POLICY, _W_IP_POL_W, _W_IP_POL_B, _W_VALUE = 1, 2, 3, 4, 5, 6
_W_IP1_VAL_W, _W_IP1_VAL_B, _W_IP2_VAL_W, _W_IP2_VAL_B, _W_POLICY1 = 7, 8, 9, 10, 11
_W_MOVES_LEFT, _W_IP1_MOV_W, _W_IP1_MOV_B, _W_IP2_MOV_W, _W_IP2_MOV_B = 12, 13, 14, 15, 16
# Fields that only attention networks use (net.proto Weights): encoders, embeddings,
# attention policy, multi-head containers.
_W_ATTENTION_FIELDS = {
    17: "ip2_pol_w", 19: "ip3_pol_w", 21: "pol_encoder", 22: "ip4_pol_w", 25: "ip_emb_w",
    27: "encoder", 29: "ip_val_w", 31: "ip_mov_w", 33: "ip_mult_gate", 35: "smolgen_w",
    44: "value_heads", 45: "policy_heads",
}

LC0_MAGIC = 0x1C0

INPUT_FORMATS = {
    0: "INPUT_UNKNOWN", 1: "INPUT_CLASSICAL_112_PLANE", 2: "INPUT_112_WITH_CASTLING_PLANE",
    3: "INPUT_112_WITH_CANONICALIZATION", 4: "INPUT_112_WITH_CANONICALIZATION_HECTOPLIES",
    132: "INPUT_112_WITH_CANONICALIZATION_HECTOPLIES_ARMAGEDDON",
    5: "INPUT_112_WITH_CANONICALIZATION_V2", 133: "INPUT_112_WITH_CANONICALIZATION_V2_ARMAGEDDON",
}
NETWORK_FORMATS = {
    0: "NETWORK_UNKNOWN", 1: "NETWORK_CLASSICAL", 2: "NETWORK_SE",
    3: "NETWORK_CLASSICAL_WITH_HEADFORMAT", 4: "NETWORK_SE_WITH_HEADFORMAT", 5: "NETWORK_ONNX",
    6: "NETWORK_ATTENTIONBODY_WITH_HEADFORMAT", 7: "NETWORK_ATTENTIONBODY_WITH_MULTIHEADFORMAT",
    134: "NETWORK_AB_LEGACY_WITH_MULTIHEADFORMAT",
}
POLICY_FORMATS = {0: "POLICY_UNKNOWN", 1: "POLICY_CLASSICAL", 2: "POLICY_CONVOLUTION",
                  3: "POLICY_ATTENTION"}
VALUE_FORMATS = {0: "VALUE_UNKNOWN", 1: "VALUE_CLASSICAL", 2: "VALUE_WDL", 3: "VALUE_PARAM"}
MOVES_LEFT_FORMATS = {0: "MOVES_LEFT_NONE", 1: "MOVES_LEFT_V1"}
ACTIVATIONS = {0: "DEFAULT_ACTIVATION_RELU", 1: "DEFAULT_ACTIVATION_MISH"}
LAYER_ENCODINGS = {0: "UNKNOWN_ENCODING", 1: "LINEAR16", 2: "FLOAT16", 3: "BFLOAT16", 4: "FLOAT32"}


def _name(table: dict[int, str], value: int) -> str:
    return table.get(value, f"unknown({value})")


# --- layers ----------------------------------------------------------------------------------

def decode_layer(layer: Message, default_encoding: int = 1) -> np.ndarray:
    """A ``Weights.Layer`` as a flat float32 array (empty if the layer is absent)."""
    params = _last(layer, _LAYER_PARAMS, b"")
    encoding = _last(layer, _LAYER_ENCODING, 0) or default_encoding
    if encoding == 1:  # LINEAR16, as lc0's LayerAdapter computes it in float32
        raw = np.frombuffer(params, "<u2").astype(np.float32)
        lo = np.float32(_float32(_last(layer, _LAYER_MIN, 0)))
        hi = np.float32(_float32(_last(layer, _LAYER_MAX, 0)))
        return raw / np.float32(65535.0) * (hi - lo) + lo
    if encoding == 2:
        return np.frombuffer(params, "<f2").astype(np.float32)
    if encoding == 3:
        return (np.frombuffer(params, "<u2").astype(np.uint32) << 16).view(np.float32).copy()
    if encoding == 4:
        return np.frombuffer(params, "<f4").astype(np.float32)
    raise ValueError(f"unsupported lc0 layer encoding {_name(LAYER_ENCODINGS, encoding)}")


def _conv_block(block: Message, enc: int) -> tuple[np.ndarray, np.ndarray]:
    """A ``ConvBlock`` as (weights flat [out * in * k * k], biases [out]), batch norm folded
    (lc0 ``LegacyWeights::ConvBlock``)."""
    w = decode_layer(_sub(block, _CONV_W), enc)
    b = decode_layer(_sub(block, _CONV_B), enc)
    means = decode_layer(_sub(block, _CONV_MEANS), enc)
    stddivs = decode_layer(_sub(block, _CONV_STDDIVS), enc)
    gammas = decode_layer(_sub(block, _CONV_GAMMAS), enc)
    betas = decode_layer(_sub(block, _CONV_BETAS), enc)
    if w.size == 0:
        raise ValueError("lc0 network has an empty convolution block")
    if betas.size == 0:
        betas = np.zeros_like(means)
        gammas = np.ones_like(means)
    if b.size == 0:
        b = np.zeros_like(means)
    if means.size == 0:
        return w, b
    gammas = gammas * (np.float32(1.0) / np.sqrt(stddivs + np.float32(1e-5)))
    means = means - b
    outputs = b.size
    w = (w.reshape(outputs, -1) * gammas[:, None]).reshape(-1)
    b = -gammas * means + betas
    return w.astype(np.float32), b.astype(np.float32)


def _conv_kernel(flat: np.ndarray, outputs: int, k: int) -> np.ndarray:
    """lc0 OIHW flat weights -> flax HWIO kernel."""
    inputs = flat.size // (outputs * k * k)
    if inputs * outputs * k * k != flat.size:
        raise ValueError(f"lc0 conv weights of size {flat.size} do not fit {outputs} outputs")
    return np.ascontiguousarray(flat.reshape(outputs, inputs, k, k).transpose(2, 3, 1, 0))


def _dense(w_flat: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """lc0 [out, in] row-major dense weights -> flax {kernel [in, out], bias [out]}."""
    outputs = b.size
    if outputs == 0 or w_flat.size % outputs:
        raise ValueError(f"lc0 dense weights of size {w_flat.size} do not fit {outputs} outputs")
    return {"kernel": np.ascontiguousarray(w_flat.reshape(outputs, -1).T), "bias": b}


def _conv(block: Message, enc: int, k: int) -> dict[str, np.ndarray]:
    w, b = _conv_block(block, enc)
    return {"kernel": _conv_kernel(w, b.size, k), "bias": b}


# --- network ---------------------------------------------------------------------------------

MAX_NETWORK_BYTES = 2**31  # decompressed; classic lc0 networks are at most a few hundred MB


def read_lc0_file(path: str | os.PathLike[str]) -> bytes:
    """The raw protobuf bytes of an lc0 network file (one gzip stream, or plain).

    Raises:
      ModelFileError: the file is missing, a folder, a device or a pipe, larger than
        ``MAX_NETWORK_FILE_BYTES``, empty, a damaged gzip stream (cut short, corrupt,
        trailing bytes, several streams), or an lc0 text weights file.
    """
    where = os.fspath(path)
    data = read_user_bytes(path, "network file", MAX_NETWORK_FILE_BYTES, ModelFileError)
    if not data:
        raise ModelFileError(f"network file {where} is empty")
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(data, where)
    if data[:2] in (b"1\n", b"2\n"):
        raise ModelFileError(f"{where}: lc0 text weight files are not supported")
    return data


def _gunzip(data: bytes, where: str) -> bytes:
    """Exactly one gzip stream, checked (CRC and length), with nothing after it."""
    stream = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = stream.decompress(data, MAX_NETWORK_BYTES + 1)
    except zlib.error as err:
        raise ModelFileError(f"network file {where} is damaged: corrupt gzip data "
                             f"({err})") from None
    if len(out) > MAX_NETWORK_BYTES:
        raise ModelFileError(f"network file {where} decompresses to more than "
                             f"{MAX_NETWORK_BYTES // 2**30} GiB: not an lc0 network")
    if not stream.eof:
        raise ModelFileError(f"network file {where} is truncated: its gzip stream ends early "
                             f"after {len(data):,} bytes (an interrupted download?)")
    extra = stream.unused_data
    if extra[:2] == b"\x1f\x8b":
        raise ModelFileError(f"network file {where} holds more than one gzip stream (files "
                             "concatenated?); an lc0 network is one stream")
    if extra:
        raise ModelFileError(f"network file {where} has {len(extra):,} bytes of trailing data "
                             "after its gzip stream (damaged?)")
    return out


def lc0_net_format(net: Message) -> dict[str, int]:
    """lc0's network format, upgraded like lc0's ``FixOlderWeightsFile``."""
    fmt = _sub(net, _NET_FORMAT)
    has_nf = _NET_FORMAT in net and _FORMAT_NETWORK in fmt
    nf = _sub(fmt, _FORMAT_NETWORK)
    out = {
        "input": _last(nf, _NF_INPUT, 0),
        "output": _last(nf, _NF_OUTPUT, 0),
        "network": _last(nf, _NF_NETWORK, 0),
        "policy": _last(nf, _NF_POLICY, 0),
        "value": _last(nf, _NF_VALUE, 0),
        "moves_left": _last(nf, _NF_MOVES_LEFT, 0),
        "activation": _last(nf, _NF_ACTIVATION, 0),
        "weights_encoding": _last(fmt, _FORMAT_ENCODING, 0),
    }
    if not has_nf:
        out.update(input=1, output=1, network=3, value=1, policy=1)
    elif out["network"] == 1:
        out.update(network=3, value=1, policy=1)
    elif out["network"] == 2:
        out.update(network=4, value=1, policy=1)
    return out


def _check_supported(net: Message, fmt: dict[str, int], weights: Message, where: str) -> None:
    def fail(what: str) -> None:
        raise ModelFileError(f"{where}: unsupported lc0 network: {what}")

    if _last(net, _NET_MAGIC) != LC0_MAGIC:
        fail("bad magic (not an lc0 protobuf network file)")
    if _NET_WEIGHTS not in net:
        fail("no weights" + (" (ONNX model, NETWORK_ONNX)" if _NET_ONNX in net else ""))
    if fmt["network"] not in (3, 4):
        fail(f"network format {_name(NETWORK_FORMATS, fmt['network'])}")
    attention = sorted(name for field, name in _W_ATTENTION_FIELDS.items() if field in weights)
    if attention:
        fail(f"attention / multi-head weights present ({', '.join(attention)})")
    if fmt["input"] != 1:
        fail(f"input format {_name(INPUT_FORMATS, fmt['input'])}")
    if fmt["policy"] not in (1, 2):
        fail(f"policy format {_name(POLICY_FORMATS, fmt['policy'])}")
    if fmt["value"] not in (1, 2):
        fail(f"value format {_name(VALUE_FORMATS, fmt['value'])}")
    if fmt["moves_left"] not in (0, 1):
        fail(f"moves left format {_name(MOVES_LEFT_FORMATS, fmt['moves_left'])}")
    if fmt["activation"] not in (0, 1):
        fail(f"default activation {_name(ACTIVATIONS, fmt['activation'])}")
    if fmt["weights_encoding"] not in (0, 1):
        fail(f"weights encoding {fmt['weights_encoding']}")
    if not weights.get(_W_RESIDUAL):
        fail("no residual blocks")


def lc0_params(data: bytes, where: str = "lc0 network") -> tuple[dict[str, Any], dict[str, Any]]:
    """Parses lc0 protobuf bytes (``ModelFileError`` naming ``where`` if they are not a
    supported, intact classic lc0 network).

    Returns:
      (config, params): ``config`` holds the :class:`zerochess.neural.resnet.SEResNet`
      fields (blocks, filters, se_channels, policy, value, moves_left, activation and head
      sizes); ``params`` is the matching flax parameter tree (numpy float32 arrays).
    """
    try:
        config, params = _lc0_params(data, where)
    except ModelFileError:
        raise
    except (ValueError, IndexError, KeyError, OverflowError, ZeroDivisionError,
            struct.error) as err:
        raise ModelFileError(f"{where}: not a valid lc0 network (damaged file?): {err}") from None
    for name, leaf in _leaves(params):
        if not np.all(np.isfinite(leaf)):
            raise ModelFileError(f"{where}: layer {name} holds NaN or infinite weights")
    return config, params


def _leaves(tree: Any, prefix: str = "") -> list[tuple[str, np.ndarray]]:
    if isinstance(tree, dict):
        return [leaf for k, v in tree.items() for leaf in _leaves(v, f"{prefix}{k}/")]
    return [(prefix.rstrip("/"), tree)]


def _lc0_params(data: bytes, where: str) -> tuple[dict[str, Any], dict[str, Any]]:
    net = parse_message(data)
    if len(net.get(_NET_MAGIC, ())) > 1 or len(net.get(_NET_WEIGHTS, ())) > 1:
        # protobuf would merge them: more residual blocks, a different network
        raise ModelFileError(f"{where}: holds more than one lc0 network (files concatenated?)")
    fmt = lc0_net_format(net)
    weights = _sub(net, _NET_WEIGHTS)
    _check_supported(net, fmt, weights, where)
    enc = fmt["weights_encoding"] or 1

    params: dict[str, Any] = {}
    params["input"] = _conv(_sub(weights, _W_INPUT), enc, 3)
    filters = params["input"]["bias"].size
    if params["input"]["kernel"].shape[2] != 112:
        raise ModelFileError(f"{where}: input convolution does not take 112 planes")

    residuals = [parse_message(raw) for raw in weights[_W_RESIDUAL]]
    has_se = {(_RES_SE in r) for r in residuals}
    if len(has_se) != 1:
        raise ModelFileError(
            f"{where}: mixed residual blocks with and without SE are not supported")
    se_channels = 0
    for i, res in enumerate(residuals):
        block: dict[str, Any] = {
            "conv1": _conv(_sub(res, _RES_CONV1), enc, 3),
            "conv2": _conv(_sub(res, _RES_CONV2), enc, 3),
        }
        if _RES_SE in res:
            se = _sub(res, _RES_SE)
            block["se_fc1"] = _dense(decode_layer(_sub(se, _SE_W1), enc),
                                     decode_layer(_sub(se, _SE_B1), enc))
            block["se_fc2"] = _dense(decode_layer(_sub(se, _SE_W2), enc),
                                     decode_layer(_sub(se, _SE_B2), enc))
            se_channels = block["se_fc1"]["bias"].size
            if block["se_fc2"]["bias"].size != 2 * filters:
                raise ModelFileError(f"{where}: SE unit of block {i} does not output 2 x filters")
        params[f"block_{i}"] = block

    def layer(field: int) -> np.ndarray:
        return decode_layer(_sub(weights, field), enc)

    policy = "conv" if fmt["policy"] == 2 else "classical"
    if policy == "conv":
        params["policy1"] = _conv(_sub(weights, _W_POLICY1), enc, 3)
        params["policy"] = _conv(_sub(weights, _W_POLICY), enc, 3)
        policy_channels = params["policy"]["bias"].size
        if policy_channels < 73:
            raise ModelFileError(
                f"{where}: convolutional policy has {policy_channels} < 73 planes")
    else:
        params["policy"] = _conv(_sub(weights, _W_POLICY), enc, 1)
        params["policy_fc"] = _dense(layer(_W_IP_POL_W), layer(_W_IP_POL_B))
        policy_channels = params["policy"]["bias"].size
        if params["policy_fc"]["bias"].size != 1858:
            raise ModelFileError(f"{where}: classical policy head does not output 1858 moves")

    value = "wdl" if fmt["value"] == 2 else "classical"
    params["value"] = _conv(_sub(weights, _W_VALUE), enc, 1)
    params["value_fc1"] = _dense(layer(_W_IP1_VAL_W), layer(_W_IP1_VAL_B))
    params["value_fc2"] = _dense(layer(_W_IP2_VAL_W), layer(_W_IP2_VAL_B))
    if params["value_fc2"]["bias"].size != (3 if value == "wdl" else 1):
        raise ModelFileError(f"{where}: value head output size does not match {value}")

    moves_left = fmt["moves_left"] == 1
    mlh_channels = mlh_hidden = 0
    if moves_left:
        params["moves_left"] = _conv(_sub(weights, _W_MOVES_LEFT), enc, 1)
        params["moves_left_fc1"] = _dense(layer(_W_IP1_MOV_W), layer(_W_IP1_MOV_B))
        params["moves_left_fc2"] = _dense(layer(_W_IP2_MOV_W), layer(_W_IP2_MOV_B))
        mlh_channels = params["moves_left"]["bias"].size
        mlh_hidden = params["moves_left_fc1"]["bias"].size

    config = {
        "blocks": len(residuals),
        "filters": filters,
        "se_channels": se_channels,
        "policy": policy,
        "policy_channels": policy_channels,
        "value": value,
        "value_channels": params["value"]["bias"].size,
        "value_hidden": params["value_fc1"]["bias"].size,
        "moves_left": moves_left,
        "mlh_channels": mlh_channels,
        "mlh_hidden": mlh_hidden,
        "activation": "mish" if fmt["activation"] == 1 else "relu",
    }
    return config, params


def load_lc0(path: str | os.PathLike[str], *, dtype: Any = None,
             precision: Any = None) -> Model:
    """Loads an lc0 ``.pb.gz`` / ``.pb`` network as a :class:`Model`.

    Args:
      path: the network file.
      dtype: compute dtype of the flax module (default float32; params stay float32).
      precision: ``jax.lax.Precision`` for convolutions and dense layers (default: jax's,
        which on recent GPUs may run float32 convolutions in TF32; pass
        ``jax.lax.Precision.HIGHEST`` for full float32 there; the lc0 equivalence tests
        run on CPU).

    Raises:
      ModelFileError: the file is missing, damaged or not a supported classic lc0
        network (the message names the file and the format).
    """
    config, params = lc0_params(read_lc0_file(path), where=os.fspath(path))
    kwargs: dict[str, Any] = {}
    if dtype is not None:
        kwargs["dtype"] = dtype
    module = SEResNet(precision=precision, **config, **kwargs)
    name = f"lc0:{os.path.basename(os.fspath(path))}"
    try:
        return model_from_module(module, params, name)
    except ValueError as err:
        raise ModelFileError(f"{os.fspath(path)}: layer sizes do not fit together "
                             f"(damaged file?): {err}") from None


__all__ = ["ACTIVATIONS", "INPUT_FORMATS", "LAYER_ENCODINGS", "LC0_MAGIC", "MAX_NETWORK_BYTES",
           "MOVES_LEFT_FORMATS", "NETWORK_FORMATS", "POLICY_FORMATS", "VALUE_FORMATS",
           "decode_layer", "lc0_net_format", "lc0_params", "load_lc0", "parse_message",
           "read_lc0_file"]
