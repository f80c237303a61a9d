"""The zerochess source a compiled program can run: the modules its key names and what
they import, transitively (``source_closure``), and one digest of them (``source_digest``)."""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

from zerochess import source_imports
from zerochess.source_imports import PACKAGE_DIR, module_file

_NAMED = re.compile(r"\bzerochess(?:\.\w+)+|\bzerochess\b")
STORE_PACKAGE = "zerochess.program_store"  # every key covers the store's own source


def _as_module(dotted: str, root: Path) -> str | None:
    """The longest prefix of ``dotted`` (a module, function or class path) that is a
    zerochess module."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        if module_file(".".join(parts[:end]), root) is not None:
            return ".".join(parts[:end])
    return None


@functools.lru_cache(maxsize=1024)
def _imports(name: str, root: Path) -> frozenset[str]:
    """The zerochess modules module ``name`` imports at run time
    (``source_imports.imported_modules``: in functions too, not under TYPE_CHECKING)."""
    path = module_file(name, root)
    if path is None:
        return frozenset()
    found = source_imports.imported_modules(path, root)
    return frozenset(m for m in (_as_module(f, root) for f in found) if m)


@functools.lru_cache(maxsize=1024)
def _file_digest(name: str, root: Path) -> bytes:
    return hashlib.sha256(module_file(name, root).read_bytes()).digest()


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
    source_imports.forget()
    for cached in (_imports, _file_digest, _closure_digest):
        cached.cache_clear()


def source_digest(key: str, root: Path | None = None) -> str:
    """sha256 of the source of every zerochess module a program with this ``key`` can run:
    ``source_closure`` of the modules the key names, and of the program store."""
    root = PACKAGE_DIR if root is None else Path(root)
    named = frozenset(_NAMED.findall(key)) | {STORE_PACKAGE}
    return _closure_digest(named, root)


__all__ = ["forget_sources", "source_closure", "source_digest"]
