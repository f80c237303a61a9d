"""Compiled programs kept on disk whole, so that a new process neither traces nor compiles.

jax's persistent compilation cache (``zerochess.compile_cache``) skips XLA compilation
only: a new process still traces every program (and its vmaps and loops) and lowers it
to find the cache key, which is most of the start-up of ``zerochess analyse`` or of the
UCI engine. ``Program`` (a ``jax.jit`` for zerochess's device programs) keeps the
compiled executable itself (``jax.experimental.serialize_executable``) in a file named
by everything that determines the program:

- the environment: jax, jaxlib, flax and numpy versions, the backend, its devices and
  platform version, jax settings that change programs (x64, matmul precision, PRNG),
  ``XLA_FLAGS`` and the Python version;
- the program: its function (module and name), its static arguments (numbers, strings,
  zerochess functions and the closures they carry, e.g. a network's architecture; not
  array *values*: network parameters are arguments), the structure of its arguments
  and the shape, dtype and weak type of every array, and what it donates;
- the source of the zerochess code it can run: every module the key names (the
  function's, its static functions' and objects'), the modules they import (at module
  level or inside functions, not under ``TYPE_CHECKING``), transitively, and their
  parent packages, this file included (``source_closure``). A change to any of them
  makes the program stale; a change elsewhere in the package (the UCI driver, the CLI,
  the tests' helpers) does not.

A later process with the same key loads the file (a few ms) instead of tracing and
compiling (seconds). Anything wrong with a file (truncated, corrupt, another key, another
jax) is logged and the program is compiled again and the file rewritten: loading never
raises. A program whose identity cannot be pinned down (a function from outside
zerochess, e.g. a user's network, or a static argument without a stable description) is
kept in memory only, as ``jax.jit`` would.

Where: ``zerochess-programs/`` in jax's compilation cache directory
(``zerochess.compile_cache``: ``$ZEROCHESS_JAX_CACHE``, else ``~/.cache/zerochess/jax``);
no such directory (``ZEROCHESS_JAX_CACHE=""``): memory only. ``jax.clear_caches()`` also
drops the programs held in memory. Every change of the sources a program depends on or
of the environment makes new files, so the directory is kept to ``MAX_BYTES`` (least recently
used files removed first: a load refreshes a file's time) each time a program is stored.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import hashlib
import inspect
import json
import logging
import os
import pickle
import re
import sys
import tempfile
import threading
import time
import types
import weakref
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import jax
import numpy as np

LOG = logging.getLogger("zerochess.programs")
SUBDIR = "zerochess-programs"
MAGIC = b"ZCPROGRAM1\n"  # file format version: a change makes old files unreadable (stale)
SUFFIX = ".zxp"
LOAD_MESSAGE = "Loading compiled program"  # the log line of a program loaded from disk
MAX_BYTES = 1 << 30  # the store's size cap (a process's programs take 20-100 MB)

# What happened in this process (tests and start-up profiles read it): "traced" counts
# traces of stored programs' functions, "loaded" programs read from disk, "compiled"
# programs compiled (and "stored": written), "memory_only" programs that cannot be stored,
# "rejected" unusable files, "preloaded" loaded programs that a ``preloading`` block had
# deserialized ahead.
STATS: Counter[str] = Counter()


class Unstable(Exception):
    """A static argument has no description that stays the same across processes."""


# --- the environment -----------------------------------------------------------------------


PACKAGE_DIR = Path(__file__).resolve().parent
_IMPORT = re.compile(r"^\s*(?:from\s+(zerochess[\w.]*|\.+[\w.]*)\s+import\s+(.*)"
                     r"|import\s+(zerochess[\w.]*))")
_NAMED = re.compile(r"\bzerochess(?:\.\w+)+|\bzerochess\b")


@functools.lru_cache(maxsize=4096)
def _module_file(name: str, root: Path) -> Path | None:
    """The source file of module ``name`` (``zerochess.x.y``) under ``root`` (the
    ``zerochess`` package directory), or None if it is not a module there."""
    parts = name.split(".")[1:]
    candidates = [root.joinpath(*parts, "__init__.py")]
    if parts:
        candidates.append(root.joinpath(*parts[:-1], parts[-1] + ".py"))
    return next((c for c in candidates if c.is_file()), None)


def _as_module(dotted: str, root: Path) -> str | None:
    """The longest prefix of ``dotted`` (a module, function or class path) that is a
    zerochess module."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        if _module_file(".".join(parts[:end]), root) is not None:
            return ".".join(parts[:end])
    return None


@functools.lru_cache(maxsize=1024)
def _imports(name: str, root: Path) -> frozenset[str]:
    """The zerochess modules module ``name`` imports at run time: every ``import`` /
    ``from ... import`` line, in functions too, but not in an ``if TYPE_CHECKING:`` block
    (a line scan, several times faster than parsing; a name imported from a package
    that exports it lazily (``_EXPORTS``) counts as its home module)."""
    path = _module_file(name, root)
    if path is None:
        return frozenset()
    lines = path.read_text(encoding="utf-8").splitlines()
    found: set[str] = set()
    skip_indent: int | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        indent = len(line) - len(line.lstrip())
        if skip_indent is not None:
            if not line.strip() or indent > skip_indent:
                continue
            skip_indent = None
        if re.match(r"\s*if\s+(typing\.)?TYPE_CHECKING\s*:", line):
            skip_indent = indent
            continue
        match = _IMPORT.match(line)
        if not match:
            continue
        if match.group(3):
            found.add(match.group(3))
            continue
        source, names = match.group(1), match.group(2)
        if source.startswith("."):  # relative: from the module's package up
            dots = len(source) - len(source.lstrip("."))
            package = name if path.name == "__init__.py" else name.rpartition(".")[0]
            base = package.split(".")[:len(package.split(".")) - dots + 1]
            source = ".".join(base + ([source.lstrip(".")] if source.lstrip(".") else []))
        if names.strip().startswith("(") and ")" not in names:
            while i < len(lines) and ")" not in names:
                names += " " + lines[i]
                i += 1
        found.add(source)
        lazy = _lazy_exports(source, root)
        for item in re.findall(r"[A-Za-z_]\w*(?:\s+as\s+\w+)?", names.replace("(", " ")):
            item = item.split()[0]
            if _module_file(f"{source}.{item}", root) is not None:
                found.add(f"{source}.{item}")
            elif item in lazy:
                found.add(lazy[item])
    return frozenset(m for m in (_as_module(f, root) for f in found) if m)


@functools.lru_cache(maxsize=1024)
def _file_digest(name: str, root: Path) -> bytes:
    return hashlib.sha256(_module_file(name, root).read_bytes()).digest()


@functools.lru_cache(maxsize=256)
def _lazy_exports(package: str, root: Path) -> dict[str, str]:
    """``_EXPORTS`` (name -> module) of a package that exports lazily, else {}."""
    path = _module_file(package, root)
    if path is None or path.name != "__init__.py":
        return {}
    text = path.read_text(encoding="utf-8")
    if "_EXPORTS" not in text:
        return {}
    return dict(re.findall(r'^\s*"(\w+)":\s*"(zerochess[\w.]*)"', text, re.M))


def source_closure(modules: Sequence[str] | set[str], root: Path | None = None) -> list[str]:
    """The zerochess modules whose source a program of ``modules`` can run: those, the
    modules they import, transitively, and every parent package (importing
    ``zerochess.a.b`` runs ``zerochess/__init__.py`` and ``zerochess/a/__init__.py``)."""
    root = PACKAGE_DIR if root is None else Path(root)
    todo = [m for m in (_as_module(n, root) for n in modules) if m]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        todo.extend(".".join(parts[:k]) for k in range(1, len(parts)))
        todo.extend(_imports(name, root))
    return sorted(seen)


@functools.lru_cache(maxsize=256)
def _closure_digest(modules: frozenset[str], root: Path) -> str:
    digest = hashlib.sha256()
    for name in source_closure(modules, root):
        digest.update(name.encode() + b"\0" + _file_digest(name, root))
    return digest.hexdigest()


def forget_sources() -> None:
    """Read the sources again (a process whose files changed under it; tests)."""
    for cached in (_module_file, _imports, _lazy_exports, _file_digest, _closure_digest):
        cached.cache_clear()


def source_digest(key: str, root: Path | None = None) -> str:
    """sha256 of the source of every zerochess module a program with this ``key`` can run:
    ``source_closure`` of the modules the key names, and of this module."""
    root = PACKAGE_DIR if root is None else Path(root)
    named = frozenset(_NAMED.findall(key)) | {__name__}
    return _closure_digest(named, root)


def _version(dist: str) -> str:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:  # noqa: BLE001 - not installed
        return "-"


@functools.cache
def environment_key() -> str:
    """Everything outside a program that decides what it compiles to (see the module
    docstring), as one string."""
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


# The store's directory: None follows jax's compilation cache directory (``SUBDIR`` in it);
# a path: that directory; "": none (memory only).
DIRECTORY: str | None = None


def store_dir() -> Path | None:
    """The directory programs are kept in (None: memory only)."""
    if DIRECTORY is not None:
        return Path(DIRECTORY) if DIRECTORY else None
    base = jax.config.jax_compilation_cache_dir
    if not base or "://" in str(base):  # off, or a remote cache: ours are local files
        return None
    return Path(base) / SUBDIR


# --- program identity ----------------------------------------------------------------------


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
    return f"{key}\nsource={source_digest(key)}"


def _file_name(name: str, digest: str) -> str:
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[-80:]
    return f"{safe}-{digest[:40]}{SUFFIX}"


def _digest(key: str) -> str:
    return hashlib.sha256((environment_key() + "\n" + key).encode()).hexdigest()


# --- files ---------------------------------------------------------------------------------
# MAGIC, an 8-byte big-endian header length, a JSON header (the key's digest, the payload's
# sha256, the caller's ``extra``), then the payload: a pickle of (executable, in_tree,
# out_tree) from ``serialize_executable.serialize``. The checksum is verified before the
# payload reaches the deserializer.


def save(name: str, key: str, compiled: Any, extra: dict | None = None) -> bool:
    """Write ``compiled`` (a ``jax.stages.Compiled``) under ``key``; False if it cannot be
    stored (never raises)."""
    directory = store_dir()
    if directory is None:
        return False
    try:
        from jax.experimental.serialize_executable import serialize

        executable, in_tree, out_tree = serialize(compiled)
        payload = pickle.dumps((executable, in_tree, out_tree), protocol=pickle.HIGHEST_PROTOCOL)
        digest = _digest(key)
        header = json.dumps({"name": name, "key": digest, "extra": extra or {},
                             "sha256": hashlib.sha256(payload).hexdigest()}).encode()
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=SUFFIX)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(MAGIC + len(header).to_bytes(8, "big") + header + payload)
            os.replace(tmp, directory / _file_name(name, digest))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        STATS["stored"] += 1
        prune(directory, MAX_BYTES)
        return True
    except Exception as err:  # noqa: BLE001 - a program that cannot be stored still runs
        LOG.debug("zerochess: program %s not stored on disk (%s: %s)", name,
                  type(err).__name__, err)
        return False


def prune(directory: Path, max_bytes: int) -> int:
    """Remove the least recently used program files of ``directory`` until the rest take
    at most ``max_bytes``; returns the number removed (files another process removes
    meanwhile are skipped)."""
    files = []
    for path in directory.glob(f"*{SUFFIX}"):
        with contextlib.suppress(OSError):
            st = path.stat()
            files.append((st.st_mtime, st.st_size, path))
    total = sum(size for _, size, _ in files)
    removed = 0
    for _, size, path in sorted(files, key=lambda f: (f[0], f[2].name)):
        if total <= max_bytes:
            break
        with contextlib.suppress(OSError):
            path.unlink()
            removed += 1
        total -= size
    return removed


def _read(path: Path) -> tuple[dict, bytes]:
    """The header and the checksum-verified payload of a program file (ValueError: not a
    usable file; OSError: no file)."""
    data = path.read_bytes()
    if not data.startswith(MAGIC):
        raise ValueError("not a zerochess program file (or an older format)")
    start = len(MAGIC) + 8
    size = int.from_bytes(data[len(MAGIC):start], "big")
    header = json.loads(data[start:start + size])
    payload = data[start + size:]
    if hashlib.sha256(payload).hexdigest() != header.get("sha256"):
        raise ValueError("checksum mismatch (truncated or corrupt)")
    return header, payload


def _deserialize(payload: bytes) -> tuple[Any, Any]:
    """(the stored argument structure, the loaded executable) of a verified payload."""
    from jax.experimental.serialize_executable import deserialize_and_load

    executable, stored_in, out_tree = pickle.loads(payload)
    return stored_in, deserialize_and_load(executable, stored_in, out_tree)


def _read_and_deserialize(path: Path) -> tuple[dict, Any, Any]:
    header, payload = _read(path)
    return (header, *_deserialize(payload))


def load(name: str, key: str, in_tree: Any) -> tuple[Any, dict] | None:
    """The compiled program stored under ``key`` and its ``extra``, or None (no file, or
    an unusable one: logged, and the caller compiles and overwrites it). ``in_tree``: the
    structure of the program's ``(args, kwargs)``, or a function of ``extra`` giving it."""
    directory = store_dir()
    if directory is None:
        return None
    digest = _digest(key)
    path = directory / _file_name(name, digest)
    _note_used(path.name)
    try:
        found = _take_preloaded(path.name)
        if found is None:
            try:
                found = _read_and_deserialize(path)
            except OSError:
                return None
        header, stored_in, compiled = found
        if header.get("key") != digest:
            raise ValueError("the file holds another program")
        extra = header.get("extra", {})
        if callable(in_tree):
            in_tree = in_tree(extra)
        if stored_in != in_tree:
            raise ValueError("argument structure differs")
    except Exception as err:  # noqa: BLE001 - any bad file: compile again
        STATS["rejected"] += 1
        LOG.warning("zerochess: cannot use the stored compiled program %s (%s: %s); "
                    "compiling it again", path, type(err).__name__, err)
        return None
    STATS["loaded"] += 1
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: pruned last
    LOG.log(logging.WARNING if jax.config.jax_log_compiles else logging.DEBUG,
            "%s %s from %s", LOAD_MESSAGE, name, path)
    return compiled, extra


# --- loading a known set of programs in parallel --------------------------------------------
# A start-up that loads many programs one after another (the UCI engine's ``isready``)
# spends most of its time deserializing them, which XLA does largely outside the GIL. A
# ``preloading`` block records the program files it uses under a tag (a manifest file in
# the store); the next block with that tag deserializes them in worker threads from its
# start, and ``load`` takes each from there, waiting only for the ones not done yet.

MANIFEST_SUFFIX = ".zxm"
_PRELOAD_LOCK = threading.Lock()
_PRELOADED: dict[str, Future] = {}  # file name -> Future of (header, in_tree, compiled)
_RECORDING: list[set[str]] = []  # the file names used inside each open block


def _note_used(file_name: str) -> None:
    with _PRELOAD_LOCK:
        for used in _RECORDING:
            used.add(file_name)


def _take_preloaded(file_name: str) -> tuple[dict, Any, Any] | None:
    """A preloaded program (raises what its loading raised), or None if not preloaded."""
    with _PRELOAD_LOCK:
        future = _PRELOADED.pop(file_name, None)
    if future is None:
        return None
    try:
        found = future.result()
    except OSError:
        return None  # gone meanwhile: the caller reads the file again (and finds nothing)
    STATS["preloaded"] += 1
    return found


@contextlib.contextmanager
def preloading(tag: str, workers: int | None = None) -> Iterator[int]:
    """Deserialize, in ``workers`` threads (default: one per core, at most 4), the program
    files the last block with ``tag`` used, while this block runs; record the files this
    block uses for the next one. Yields how many files were submitted. Without a store
    directory this does nothing; a stale or damaged manifest only costs the preloading."""
    directory = store_dir()
    if directory is None:
        yield 0
        return
    manifest = directory / (hashlib.sha256(tag.encode()).hexdigest()[:32] + MANIFEST_SUFFIX)
    names: list[str] = []
    with contextlib.suppress(OSError, ValueError, TypeError):
        listed = json.loads(manifest.read_text(encoding="utf-8")).get("files", [])
        names = [n for n in listed if isinstance(n, str) and n.endswith(SUFFIX)
                 and "/" not in n and "\\" not in n]
    used: set[str] = set()
    workers = workers or min(4, os.cpu_count() or 1)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="zerochess-preload")
    submitted: list[str] = []
    with _PRELOAD_LOCK:
        _RECORDING.append(used)
        for name in names:
            if name not in _PRELOADED and (directory / name).is_file():
                _PRELOADED[name] = pool.submit(_read_and_deserialize, directory / name)
                submitted.append(name)
    try:
        yield len(submitted)
    finally:
        with _PRELOAD_LOCK:
            _RECORDING.remove(used)
            for name in submitted:  # preloaded but not used this time: dropped
                future = _PRELOADED.pop(name, None)
                if future is not None:
                    future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        if used and used != set(names):
            with contextlib.suppress(OSError):
                directory.mkdir(parents=True, exist_ok=True)
                tmp = manifest.with_name(manifest.name + ".tmp")
                tmp.write_text(json.dumps({"tag": tag, "files": sorted(used)}), encoding="utf-8")
                os.replace(tmp, manifest)


# --- programs held in memory ----------------------------------------------------------------


class _Registry:
    """Every Program's in-memory cache, cleared by ``jax.clear_caches()``."""

    def __init__(self) -> None:
        self.programs: weakref.WeakSet = weakref.WeakSet()

    def cache_clear(self) -> None:
        for program in list(self.programs):
            program.clear()

    def cache_info(self) -> str:
        return f"{len(self.programs)} programs"

    def cache_keys(self) -> list:
        return []


_REGISTRY = _Registry()
try:  # jax.clear_caches() also drops ours (it frees the executables' memory mappings)
    from jax._src import util as _jax_util

    _jax_util.register_cache(_REGISTRY, "zerochess programs")
except Exception:  # pragma: no cover - a jax without it: clear() by hand
    pass


def register(program: Any) -> None:
    """Have ``jax.clear_caches()`` (and ``clear()``) call ``program.clear()``."""
    _REGISTRY.programs.add(program)


def clear() -> None:
    """Drop every program held in memory (the disk files stay)."""
    _REGISTRY.cache_clear()


def _has_tracer(leaves: Sequence[Any]) -> bool:
    return any(isinstance(x, jax.core.Tracer) for x in leaves)


def function_name(fn: Callable) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


_FRESH_LOCK = threading.Lock()


@contextlib.contextmanager
def _fresh_compile() -> Iterator[bool]:
    """Compile without reading jax's persistent cache (it is still written). On the CPU an
    executable that jax loaded from its cache serializes incompletely: the copy loads, then
    fails when it runs ("Function ... not found"). Yields False where this jax has no such
    switch (then the program is not stored)."""
    try:
        from jax._src import compiler
    except ImportError:  # pragma: no cover - another jax layout
        yield False
        return
    original = getattr(compiler, "_cache_read", None)
    if original is None:  # pragma: no cover - another jax
        yield False
        return
    with _FRESH_LOCK:
        compiler._cache_read = lambda *args, **kwargs: (None, None)
        try:
            yield True
        finally:
            compiler._cache_read = original


# --- who wants to know when a program is compiled or loaded (progress lines) --------------

_LISTENERS: list[Callable[[str, str, float], None]] = []
_LISTENERS_LOCK = threading.Lock()


@contextlib.contextmanager
def listening(callback: Callable[[str, str, float], None]) -> Iterator[None]:
    """Call ``callback(event, name, seconds)`` while this block runs, for every program
    any thread compiles (``event`` "compiled") or loads from disk ("loaded"); ``seconds``:
    how long it took. A callback that raises is ignored (it must not stop a compile)."""
    with _LISTENERS_LOCK:
        _LISTENERS.append(callback)
    try:
        yield
    finally:
        with _LISTENERS_LOCK:
            _LISTENERS.remove(callback)


def _tell(event: str, name: str, seconds: float) -> None:
    with _LISTENERS_LOCK:
        listeners = list(_LISTENERS)
    for callback in listeners:
        with contextlib.suppress(Exception):
            callback(event, name, seconds)


def acquire(name: str, key_parts: Callable[[], str], in_tree: Any,
            compile_fn: Callable[[], tuple[Any, dict]]) -> tuple[Any, dict]:
    """The compiled program ``name``: from disk under the key ``key_parts()`` builds, else
    ``compile_fn()`` -> (compiled, extra), stored for the next process. Listeners
    (``listening``) hear which of the two happened."""
    start = time.perf_counter()
    compiled, extra, event = _acquire(name, key_parts, in_tree, compile_fn)
    _tell(event, name, time.perf_counter() - start)
    return compiled, extra


def _acquire(name: str, key_parts: Callable[[], str], in_tree: Any,
             compile_fn: Callable[[], tuple[Any, dict]]) -> tuple[Any, dict, str]:
    key = None
    if store_dir() is not None:
        try:
            key = key_parts()
        except Unstable as why:
            STATS["memory_only"] += 1
            LOG.debug("zerochess: program %s kept in memory only (%s)", name, why)
    if key is None:
        STATS["compiled"] += 1
        return (*compile_fn(), "compiled")

    def compile_and_store() -> tuple[Any, dict]:
        with _fresh_compile() as fresh:
            compiled, extra = compile_fn()
        STATS["compiled"] += 1
        if fresh:
            save(name, key, compiled, extra)
        return compiled, extra

    found = load(name, key, in_tree)
    if found is None:
        return (*compile_and_store(), "compiled")

    def recompile(err: Exception) -> Any:
        STATS["rejected"] += 1
        path = store_dir() / _file_name(name, _digest(key))
        LOG.warning("zerochess: the stored compiled program %s failed to run (%s); "
                    "compiling it again", path, err)
        path.unlink(missing_ok=True)
        return compile_and_store()[0]

    return _Loaded(found[0], recompile), found[1], "loaded"


class _Loaded:
    """A program read from disk. If its first run fails in the runtime (a file that loads
    but cannot run), it is compiled again (and the file rewritten) and run, unless the
    failed run already consumed donated inputs (then the error is raised)."""

    __slots__ = ("checked", "compiled", "recompile")

    def __init__(self, compiled: Any, recompile: Callable[[Exception], Any]):
        self.compiled = compiled
        self.recompile = recompile
        self.checked = False

    def __call__(self, *args: Any) -> Any:
        if self.checked:
            return self.compiled(*args)
        try:
            out = self.compiled(*args)
        except jax.errors.JaxRuntimeError as err:
            if any(isinstance(x, jax.Array) and x.is_deleted() for x in jax.tree.leaves(args)):
                raise
            self.compiled = self.recompile(err)
            out = self.compiled(*args)
        self.checked = True
        return out


class Program:
    """``jax.jit`` for zerochess's device programs, kept on disk between processes.

    Args:
      fn: the function (a zerochess function, for its programs to be stored).
      static_argnums / static_argnames: compile-time arguments (given by position /
        by keyword); every other argument is passed by position.
      donate_argnums: positions of arguments whose buffers the program may reuse.
      identity: for a function from outside zerochess, a name that the caller changes
        whenever the function changes (its programs are then stored too).
    """

    def __init__(self, fn: Callable, static_argnums: int | Sequence[int] = (),
                 static_argnames: str | Sequence[str] = (),
                 donate_argnums: int | Sequence[int] = (), identity: str | None = None):
        self.fn = fn
        self.name = identity or function_name(fn)
        self.identity = identity
        nums = {static_argnums} if isinstance(static_argnums, int) else set(static_argnums)
        names = {static_argnames} if isinstance(static_argnames, str) else set(static_argnames)
        # as jax.jit: a static argument may be given by position or by keyword
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):  # pragma: no cover - no signature
            params = []
        positional = [p.name for p in params if p.kind in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        nums |= {positional.index(n) for n in names if n in positional}
        names |= {positional[i] for i in nums if i < len(positional)}
        self.static_argnums = tuple(sorted(nums))
        self.static_argnames = tuple(sorted(names))
        self.donate_argnums = ((donate_argnums,) if isinstance(donate_argnums, int)
                               else tuple(donate_argnums))
        # for calls under a trace (a program inside another) and for ``lower``
        self._jit = jax.jit(fn, static_argnums=self.static_argnums,
                            static_argnames=self.static_argnames,
                            donate_argnums=self.donate_argnums)
        self._compiled: dict[Any, Any] = {}
        self._lock = threading.Lock()
        functools.update_wrapper(self, fn)
        register(self)

    def clear(self) -> None:
        self._compiled.clear()

    def _cache_size(self) -> int:
        return len(self._compiled)

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        return self._jit.lower(*args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        compiled, dynamic = self._get(args, kwargs)
        return compiled(*dynamic)

    def precompile(self, *args: Any, **kwargs: Any) -> None:
        """Compile (or load) the program a call with these arguments runs, without running
        it. An array argument may be a ``jax.ShapeDtypeStruct`` (``abstract``): only its
        shape, dtype and weak type count, so a program can be made ready from another
        thread while the arrays it will run on are in use."""
        self._get(args, kwargs)

    def _get(self, args: tuple, kwargs: dict) -> tuple[Any, tuple]:
        statics = self.static_argnums
        if statics:
            dynamic = tuple(a for i, a in enumerate(args) if i not in statics)
            static = tuple(args[i] for i in statics if i < len(args))  # others: by keyword
        else:
            dynamic, static = args, ()
        unknown = set(kwargs) - set(self.static_argnames)
        if unknown:
            raise TypeError(f"{self.name}: pass {sorted(unknown)} by position "
                            "(keyword arguments of a Program are static)")
        leaves, treedef = jax.tree.flatten(dynamic)
        if _has_tracer(leaves):
            return functools.partial(self._jit, *args, **kwargs), ()
        static_kw = tuple(sorted(kwargs.items()))
        avals = tuple(aval_key(x) for x in leaves)
        key = (static, static_kw, treedef, avals)
        compiled = self._compiled.get(key)
        if compiled is None:
            with self._lock:
                compiled = self._compiled.get(key)
                if compiled is None:
                    compiled = self._acquire(args, kwargs, dynamic, static, static_kw,
                                             treedef, avals)
                    self._compiled[key] = compiled
        return compiled, dynamic

    def _acquire(self, args: tuple, kwargs: dict, dynamic: tuple, static: tuple,
                 static_kw: tuple, treedef: Any, avals: tuple) -> Any:
        positions = [i for i in range(len(args)) if i not in self.static_argnums]
        donate = tuple(positions.index(i) for i in self.donate_argnums if i in positions)
        fn, statics, name = self.fn, self.static_argnums, self.name

        def inner(*dyn: Any) -> Any:
            STATS["traced"] += 1
            it = iter(dyn)
            full = [args[i] if i in statics else next(it) for i in range(len(args))]
            return fn(*full, **kwargs)

        def compile_fn() -> tuple[Any, dict]:
            jitted = jax.jit(inner, donate_argnums=donate)
            return jitted.lower(*dynamic).compile(), {}

        in_tree = jax.tree.structure((dynamic, {}))
        identity = self.identity

        def key() -> str:
            own = f"identity:{identity}" if identity else fingerprint(fn)
            return program_key(name, (own, static, static_kw), treedef, avals, donate)

        compiled, _ = acquire(name, key, in_tree, compile_fn)
        return compiled


def program(fn: Callable | None = None, **options: Any) -> Any:
    """Decorator form of ``Program`` (``@program`` or ``@program(static_argnames=...)``)."""
    if fn is None:
        return lambda f: Program(f, **options)
    return Program(fn, **options)


__all__ = ["LOAD_MESSAGE", "MAX_BYTES", "STATS", "Program", "Unstable", "abstract", "acquire",
           "aval_key", "clear", "environment_key", "fingerprint", "listening", "load",
           "preloading", "program", "program_key", "prune", "save", "source_closure",
           "source_digest", "store_dir"]
