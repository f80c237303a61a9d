"""Compiled programs kept on disk whole, so that a new process neither traces nor compiles:
``Program`` (a ``jax.jit``); ``sources``, ``identity`` (the key), ``disk`` (the files), ``jit``.
How and why: docs/DESIGN.md, "Persistent compilation"."""

from __future__ import annotations

from zerochess.program_store.disk import (
    LOAD_MESSAGE,
    MANIFEST_SUFFIX,
    MAX_BYTES,
    STATS,
    SUFFIX,
    load,
    preloading,
    prune,
    save,
    store_dir,
)
from zerochess.program_store.identity import (
    Unstable,
    abstract,
    aval_key,
    environment_key,
    fingerprint,
    function_name,
    program_key,
)
from zerochess.program_store.jit import Program, acquire, clear, listening, program, register
from zerochess.program_store.sources import forget_sources, source_closure, source_digest

__all__ = ["LOAD_MESSAGE", "MANIFEST_SUFFIX", "MAX_BYTES", "STATS", "SUFFIX", "Program",
           "Unstable", "abstract", "acquire", "aval_key", "clear", "environment_key",
           "fingerprint", "forget_sources", "function_name", "listening", "load", "preloading",
           "program", "program_key", "prune", "register", "save", "source_closure",
           "source_digest", "store_dir"]
