"""jax's persistent compilation cache for zerochess: a second process skips XLA compilation.

Example (code that runs zerochess's pure functions under its own ``jax.jit``)::

    import zerochess
    zerochess.enable_compile_cache()   # $ZEROCHESS_JAX_CACHE, else ~/.cache/zerochess/jax
"""

from __future__ import annotations

import os
from pathlib import Path

ENV = "ZEROCHESS_JAX_CACHE"


def default_dir() -> str:
    """The cache directory zerochess uses unless told otherwise ('' = off)."""
    if ENV in os.environ:
        return os.environ[ENV]
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return str(Path(base) / "zerochess" / "jax")


def enable(path: str | None = None, override: bool = False) -> str | None:
    """Point jax's persistent compilation cache at ``path`` (default ``default_dir()``).

    Leaves a cache directory the user already configured alone unless ``override``.
    Returns the directory in use, or None when off. Never raises: an unusable directory
    only means programs are compiled again.
    """
    import jax

    try:
        current = jax.config.jax_compilation_cache_dir
        if current and not override:
            return current
        path = default_dir() if path is None else path
        if not path:
            return None
        from jax.experimental.compilation_cache import compilation_cache

        jax.config.update("jax_compilation_cache_dir", path)
        # our programs are small: keep them all, however fast they compiled
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        # jax decides once per process whether the cache is used: look again
        compilation_cache.reset_cache()
        return path
    except Exception:  # pragma: no cover - an odd jax config must not stop a search
        return None


def enable_compile_cache(path: str | None = None) -> str | None:
    """Keep every program jax compiles in this process on disk, and load the programs an
    earlier process stored: the second run of a script on this machine compiles nothing
    it compiled before (it still traces its functions; the first run pays the compile).

    This sets jax's global ``jax_compilation_cache_dir`` (and keeps programs however fast
    they compiled): call it once, at the top of a script or notebook, before the first
    ``jit`` call. ``path``: the directory (default ``$ZEROCHESS_JAX_CACHE``, else
    ``~/.cache/zerochess/jax``, shared with the ``zerochess`` commands; ``""``: off). A
    directory you set yourself (``JAX_COMPILATION_CACHE_DIR``) is replaced only when you
    pass ``path``.

    Returns:
      the directory in use, or None when the cache is off.
    """
    return enable(path, override=path is not None)


__all__ = ["ENV", "default_dir", "enable", "enable_compile_cache"]
