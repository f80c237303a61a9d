"""Compiled programs in files: ``save``, ``load`` (checksummed; a bad file is logged and
never raises), ``prune`` to ``MAX_BYTES``, and ``preloading`` a known set in threads."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import pickle
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import jax

from zerochess.program_store import identity
from zerochess.program_store.identity import MAGIC

LOG = logging.getLogger("zerochess.programs")
SUBDIR = "zerochess-programs"
SUFFIX = ".zxp"
LOAD_MESSAGE = "Loading compiled program"  # the log line of a program loaded from disk
MAX_BYTES = 1 << 30  # the store's size cap (a process's programs take 20-100 MB)

# What happened in this process (tests and start-up profiles read it): "traced" counts
# traces of stored programs' functions, "loaded" programs read from disk, "compiled"
# programs compiled (and "stored": written), "memory_only" programs that cannot be stored,
# "rejected" unusable files, "preloaded" loaded programs that a ``preloading`` block had
# deserialized ahead.
STATS: Counter[str] = Counter()

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


def _file_name(name: str, digest: str) -> str:
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[-80:]
    return f"{safe}-{digest[:40]}{SUFFIX}"


def _digest(key: str) -> str:
    return hashlib.sha256((identity.environment_key() + "\n" + key).encode()).hexdigest()


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
        # an enclosing block's programs (the files its recordings hold) are in memory: a
        # nested block would deserialize them again for nothing
        loaded = set().union(*_RECORDING)
        _RECORDING.append(used)
        for name in names:
            if name not in _PRELOADED and name not in loaded and (directory / name).is_file():
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


__all__ = ["DIRECTORY", "LOAD_MESSAGE", "LOG", "MANIFEST_SUFFIX", "MAX_BYTES", "STATS", "SUBDIR",
           "SUFFIX", "load", "preloading", "prune", "save", "store_dir"]
