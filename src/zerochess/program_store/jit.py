"""``Program``: ``jax.jit`` for zerochess's device programs, kept on disk between processes
(``acquire``: load, else compile and store); ``listening`` hears each compile or load."""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import jax

from zerochess.program_store import disk
from zerochess.program_store.disk import LOG, STATS, _digest, _file_name, save, store_dir
from zerochess.program_store.identity import (
    Unstable,
    aval_key,
    fingerprint,
    function_name,
    program_key,
)


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

    found = disk.load(name, key, in_tree)
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


__all__ = ["Program", "acquire", "clear", "listening", "program", "register"]
