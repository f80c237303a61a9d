"""A compiled program's identity: a key of everything that decides what it compiles to (the
environment, the function and its static arguments, the argument shapes, the source)."""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import json
import os
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from zerochess.program_store import sources

MAGIC = b"ZCPROGRAM1\n"  # file format version: a change makes old files unreadable (stale)


class Unstable(Exception):
    """A static argument has no description that stays the same across processes."""


def _version(dist: str) -> str:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:  # noqa: BLE001 - not installed
        return "-"


@functools.cache
def environment_key() -> str:
    """Everything outside a program that decides what it compiles to (versions, backend,
    devices, jax settings that change programs, ``XLA_FLAGS``, Python), as one string."""
    devices = jax.devices()
    backend = devices[0].client
    config = jax.config
    parts = {
        "format": MAGIC.decode().strip(),
        "python": sys.version.split()[0],
        "jax": jax.__version__,
        "jaxlib": _version("jaxlib"),
        "flax": _version("flax"),
        "numpy": np.__version__,
        "platform": backend.platform,
        "platform_version": getattr(backend, "platform_version", ""),
        "devices": [len(devices), devices[0].device_kind],
        "x64": bool(config.jax_enable_x64),
        "matmul_precision": str(config.jax_default_matmul_precision),
        "prng": str(config.jax_default_prng_impl),
        "threefry_partitionable": bool(getattr(config, "jax_threefry_partitionable", False)),
        "dtype_promotion": str(getattr(config, "jax_numpy_dtype_promotion", "")),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
    }
    return json.dumps(parts, sort_keys=True)


def fingerprint(value: Any) -> str:
    """A description of a static argument that is the same in every process for the same
    program, or ``Unstable``. Functions must come from zerochess (their modules' source is
    covered by the key's ``source_digest``); their closures and defaults are described in
    turn."""
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, tuple | list):
        return f"{type(value).__name__}({','.join(fingerprint(v) for v in value)})"
    if isinstance(value, dict):
        items = sorted((fingerprint(k), fingerprint(v)) for k, v in value.items())
        return "dict(" + ",".join(f"{k}={v}" for k, v in items) + ")"
    if isinstance(value, enum.Enum):
        return f"enum:{type(value).__module__}.{type(value).__qualname__}.{value.name}"
    if isinstance(value, np.dtype):
        return f"dtype:{value.str}"
    if isinstance(value, np.generic):
        return f"np:{value.dtype.str}:{value.item()!r}"
    if isinstance(value, type):
        return f"type:{value.__module__}.{value.__qualname__}"
    if isinstance(value, np.ndarray | jax.Array):
        array = np.asarray(value)
        return (f"array:{array.dtype.str}{array.shape}:"
                f"{hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()}")
    if isinstance(value, functools.partial):
        return (f"partial({fingerprint(value.func)},{fingerprint(value.args)},"
                f"{fingerprint(value.keywords)})")
    if isinstance(value, types.MethodType):
        return f"method({fingerprint(value.__self__)},{fingerprint(value.__func__)})"
    if isinstance(value, types.FunctionType):
        module = value.__module__ or ""
        if module != "zerochess" and not module.startswith("zerochess."):
            raise Unstable(f"function {value.__qualname__} of {module or 'no module'}")
        cells = [fingerprint(c.cell_contents) for c in value.__closure__ or ()]
        extra = fingerprint((value.__defaults__, value.__kwdefaults__))
        return (f"fn:{module}.{value.__qualname__}@{_code_digest(value.__code__)}"
                f"[{','.join(cells)}]{extra}")
    if dataclasses.is_dataclass(value):
        cls = type(value)
        module = cls.__module__ or ""
        if module != "zerochess" and not module.startswith("zerochess."):
            raise Unstable(f"object of {module}.{cls.__qualname__}")
        fields = ",".join(f"{f.name}={fingerprint(getattr(value, f.name))}"
                          for f in dataclasses.fields(value))
        return f"obj:{module}.{cls.__qualname__}({fields})"
    raise Unstable(f"{type(value).__qualname__} value {value!r:.80}")


def _code_digest(code: types.CodeType) -> str:
    """A digest of a function's code (two lambdas of one function have one qualified name)."""
    digest = hashlib.sha256()

    def add(c: types.CodeType) -> None:
        digest.update(f"{c.co_qualname}:{c.co_firstlineno}:{c.co_names}:{c.co_varnames}"
                      .encode())
        digest.update(c.co_code)
        for const in c.co_consts:
            if isinstance(const, types.CodeType):
                add(const)
            else:
                digest.update(repr(const).encode())

    add(code)
    return digest.hexdigest()[:16]


def abstract(tree: Any) -> Any:
    """``tree`` with every array replaced by its ``jax.ShapeDtypeStruct`` (shape, dtype,
    weak type): what ``Program.precompile`` needs of arguments that are in use elsewhere."""
    def one(x: Any) -> Any:
        if isinstance(x, jax.Array | np.ndarray | np.generic):
            return jax.ShapeDtypeStruct(np.shape(x), x.dtype,
                                        weak_type=bool(getattr(x, "weak_type", False)))
        return x

    return jax.tree.map(one, tree)


def aval_key(x: Any) -> tuple:
    """(shape, dtype, weak type) of an argument leaf, the way jit specialises on it."""
    if isinstance(x, jax.ShapeDtypeStruct):
        return (x.shape, x.dtype, bool(x.weak_type))
    if isinstance(x, jax.Array):
        return (x.shape, x.dtype, x.weak_type)
    if isinstance(x, np.ndarray | np.generic):
        return (x.shape, x.dtype, False)
    aval = jax.api_util.shaped_abstractify(x)  # Python scalars: weak types
    return (aval.shape, aval.dtype, aval.weak_type)


def program_key(name: str, statics: Sequence[Any], treedef: Any,
                avals: Sequence[tuple], donate: Sequence[int]) -> str:
    """The key of a program (``Unstable`` if it has none)."""
    tree = str(treedef)
    if " at 0x" in tree:  # a pytree node whose description holds an address
        raise Unstable(f"argument structure {tree:.80}")
    parts = [name, *(fingerprint(s) for s in statics), tree,
             ";".join(f"{shape}{np.dtype(dtype).str}{'w' if weak else ''}"
                      for shape, dtype, weak in avals), f"donate={tuple(donate)}"]
    key = "\n".join(parts)
    return f"{key}\nsource={sources.source_digest(key)}"


def function_name(fn: Callable) -> str:
    """``module.qualname`` of ``fn``: a program's name."""
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


__all__ = ["MAGIC", "Unstable", "abstract", "aval_key", "environment_key", "fingerprint",
           "function_name", "program_key"]
