"""The random keys of a batch of trees: every random choice of tree i (root noise,
search-contempt draws) flows from key i, derived from the batch's seed (or the tree's
own) and its index, so a tree's search does not depend on its batch or slot."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from zerochess.errors import ConfigError
from zerochess.program_store import program
from zerochess.validation import as_seed


def fold_key(seed: jax.Array, index: jax.Array) -> jax.Array:
    """The raw key (uint32 [2]) of tree ``index`` of a batch seeded with the uint32 word
    ``seed`` (traceable: the device game scan seeds its trees with it)."""
    base = jax.random.wrap_key_data(jnp.stack([jnp.uint32(0), seed.astype(jnp.uint32)]))
    return jax.random.key_data(jax.random.fold_in(base, index))


@program
def _fold_keys(seed: jax.Array, indices: jax.Array) -> jax.Array:
    return jax.vmap(lambda i: fold_key(seed, i))(indices)


def _seed_word(seed: int) -> np.uint32:
    """``jax.random.PRNGKey(seed)`` is (0, seed mod 2**32) with 32-bit jax: its low word."""
    if not 0 <= seed < 2**63:
        raise ValueError(f"seed must be in [0, 2**63), got {seed}")
    return np.uint32(seed & 0xFFFFFFFF)


def tree_keys(seed: int, count: int) -> np.ndarray:
    """Raw PRNG keys (uint32 [count, 2]) of the trees of a batch searched with ``seed``:
    every random choice of tree i (noise, search-contempt draws) flows from key i."""
    return np.asarray(_fold_keys(_seed_word(as_seed(seed)), np.arange(count, dtype=np.uint32)),
                      np.uint32)


def batch_keys(seed: int | Sequence[int], count: int) -> np.ndarray:
    """Keys uint32 [count, 2]: ``tree_keys(seed, count)`` for one batch seed, or
    ``tree_keys(seed[i], 1)[0]`` for tree i when given one seed per tree."""
    if isinstance(seed, str) or not isinstance(seed, Iterable):
        return tree_keys(as_seed(seed), count)
    seeds = [as_seed(s, f"seed[{i}]") for i, s in enumerate(seed)]
    if len(seeds) != count:
        raise ConfigError(f"{len(seeds)} seeds for {count} positions")
    return np.stack([tree_keys(s, 1)[0] for s in seeds])


def tree_key(seed: int, index: int) -> np.ndarray:
    """The key of tree ``index`` alone (same value as ``tree_keys(seed, n)[index]``)."""
    return np.asarray(_fold_keys(_seed_word(as_seed(seed)), np.asarray([index], np.uint32))[0],
                      np.uint32)


__all__ = ["batch_keys", "fold_key", "tree_key", "tree_keys"]
