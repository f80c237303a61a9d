"""Checks of scalar settings (counts, seeds, reals, flags, names) shared by every entry
point: the library API, ``SearchConfig``, YAML configs and the command line."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable
from typing import Any

from zerochess.errors import ConfigError, quote

MAX_SEED = 2**63 - 1  # seeds are 64-bit (jax.random.PRNGKey, numpy SeedSequence)
MAX_INT32 = 2**31 - 1  # device counters (visits, simulations, node indices) are int32


def _is_bool(value: Any) -> bool:
    kind = type(value)
    return isinstance(value, bool) or (kind.__module__ == "numpy" and kind.__name__ in (
        "bool", "bool_"))


def as_count(value: Any, name: str, minimum: int = 0, maximum: int | None = None,
             error: Callable[[str], Exception] = ConfigError, exact: bool = False) -> int:
    """An integer in ``[minimum, maximum]``: an int, a numpy integer, or (unless
    ``exact``, as JSON input wants) a float holding an integer exactly. Not a bool, a
    string, NaN or infinity."""
    if _is_bool(value) or not isinstance(value, numbers.Integral if exact else numbers.Real):
        raise error(f"{name} must be an integer, got {quote(value)}")
    if isinstance(value, numbers.Integral):
        number = int(value)
    else:
        f = float(value)
        if not math.isfinite(f) or not f.is_integer():
            raise error(f"{name} must be an integer, got {quote(value)}")
        number = int(f)
    if number < minimum:
        raise error(f"{name} must be >= {minimum}, got {_number(number)}")
    if maximum is not None and number > maximum:
        raise error(f"{name} must be <= {maximum:,}, got {_number(number, True)}")
    return number


def _number(number: int, commas: bool = False) -> str:
    """An integer for a message: huge ones (which ``str`` refuses past 4,300 digits) are
    described by ``quote``."""
    if abs(number) >= 10**30:
        return quote(number)
    return f"{number:,}" if commas else str(number)


def as_seed(value: Any, name: str = "seed", error: Callable[[str], Exception] = ConfigError) -> int:
    """A seed: an exact integer in ``[0, 2**63)`` (no floats, strings or bools; larger
    values would alias smaller ones in the 64-bit generators)."""
    if _is_bool(value) or not isinstance(value, numbers.Integral):
        raise error(f"{name} must be an integer in [0, 2**63), got {quote(value)}")
    number = int(value)
    if not 0 <= number <= MAX_SEED:
        raise error(f"{name} must be in [0, 2**63), got {_number(number)}")
    return number


def as_real(value: Any, name: str, low: float | None = None, high: float | None = None,
            low_open: bool = False, error: Callable[[str], Exception] = ConfigError) -> float:
    """A finite real number in ``[low, high]`` (``(low, high]`` with ``low_open``)."""
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise error(f"{name} must be a number, got {quote(value)}")
    try:
        number = float(value)
    except OverflowError:  # an integer beyond any float
        number = math.inf
    if not math.isfinite(number):
        raise error(f"{name} must be a finite number, got {quote(value)}")
    too_low = low is not None and (number <= low if low_open else number < low)
    too_high = high is not None and number > high
    if too_low or too_high:
        left = "(" if low_open else "["
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        raise error(f"{name} must be in {left}{lo}, {hi}], got {quote(value)}")
    return number


def as_flag(value: Any, name: str, error: Callable[[str], Exception] = ConfigError) -> bool:
    """A boolean (``True``/``False``, numpy bools); not 0/1 or "yes"."""
    if not _is_bool(value):
        raise error(f"{name} must be true or false, got {quote(value)}")
    return bool(value)


def as_choice(value: Any, name: str, choices: Iterable[str],
              error: Callable[[str], Exception] = ConfigError) -> str:
    """One of ``choices`` (exact strings)."""
    options = list(choices)
    if not isinstance(value, str) or value not in options:
        raise error(f"{name} must be one of {', '.join(map(repr, options))}, "
                    f"got {quote(value)}")
    return value


def as_text(value: Any, name: str, error: Callable[[str], Exception] = ConfigError) -> str:
    """A non-empty string (a name, a path)."""
    if not isinstance(value, str) or not value.strip():
        raise error(f"{name} must be a non-empty string, got {quote(value)}")
    return value




def as_rng_key(value: Any, name: str = "rng_key",
               error: Callable[[str], Exception] = ConfigError) -> Any:
    """One jax PRNG key as a typed key (``jax.random.key(0)``), from a typed key or a legacy
    raw key (``jax.random.PRNGKey(0)``: uint32 [2]); jittable (checks dtype and shape at
    trace time). Not an integer seed (say ``jax.random.key(seed)``)."""
    import jax
    import jax.numpy as jnp

    dtype = getattr(value, "dtype", None)
    if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        if value.shape != ():
            raise error(f"{name} must be one key, got keys of shape {list(value.shape)} "
                        f"(index or vmap a batch of keys)")
        return value
    if dtype is None or not hasattr(value, "shape"):
        raise error(f"{name} must be a jax PRNG key (jax.random.key(seed) or "
                    f"jax.random.PRNGKey(seed)), got {quote(value)}")
    shape = list(value.shape)
    if dtype != jnp.uint32 or shape != [2]:
        raise error(f"{name} must be a jax PRNG key: a typed key (jax.random.key(seed)) or "
                    f"a raw uint32 [2] key (jax.random.PRNGKey(seed)), got {dtype}{shape}")
    return jax.random.wrap_key_data(value)


__all__ = ["MAX_INT32", "MAX_SEED", "as_choice", "as_count", "as_flag", "as_real", "as_rng_key",
           "as_seed", "as_text"]
