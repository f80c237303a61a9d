"""The evaluation cache (lc0's NNCache): a device hash table of network results, shared by
the trees of a ``Searcher`` and kept across searches."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from zerochess.errors import ConfigError
from zerochess.search.tree import PRIOR_DTYPE, K

WAYS = 4
FULL_HISTORY = 7
ENTRY_BYTES = 2 * 4 + 2 * K + 3 * 4  # key, float16 priors, WDL


@chex.dataclass(frozen=True)
class EvalCache:
    """Network results by key. Shapes: C entries."""

    keys: chex.Array  # uint32 [C, 2], (0, 0) = empty (a real key never is)
    priors: chex.Array  # float16 [C, K]
    wdl: chex.Array  # float32 [C, 3]
    m: chex.Array  # float32 [C] moves left (0 without a moves-left head)

    @property
    def capacity(self) -> int:
        return self.keys.shape[0]


def empty_cache(capacity: int) -> EvalCache:
    return EvalCache(keys=jnp.zeros((capacity, 2), jnp.uint32),
                     priors=jnp.zeros((capacity, K), PRIOR_DTYPE),
                     wdl=jnp.zeros((capacity, 3), jnp.float32),
                     m=jnp.zeros((capacity,), jnp.float32))


def _mix(x: chex.Array) -> chex.Array:
    """murmur3's 32-bit finaliser."""
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x85EBCA6B)
    x = x ^ (x >> 13)
    x = x * jnp.uint32(0xC2B2AE35)
    return x ^ (x >> 16)


def _combine(acc: chex.Array, words: chex.Array, salt: int) -> chex.Array:
    """Fold uint32 ``words`` [..., W] into the 64-bit ``acc`` [..., 2]."""
    lanes = []
    for lane, seed in ((0, 0x9E3779B9), (1, 0x7F4A7C15)):
        h = acc[..., lane] ^ jnp.uint32((salt * 0x27D4EB2F + seed) & 0xFFFFFFFF)
        for i in range(words.shape[-1]):
            h = _mix(h ^ (words[..., i] + jnp.uint32((seed + 0x165667B1 * i) & 0xFFFFFFFF)))
        lanes.append(h)
    return jnp.stack(lanes, -1)


def _board_words(board: chex.Array) -> chex.Array:
    """int8 [..., 64] -> uint32 [..., 16]."""
    shaped = board.astype(jnp.uint8).reshape(*board.shape[:-1], 16, 4).astype(jnp.uint32)
    return shaped[..., 0] | shaped[..., 1] << 8 | shaped[..., 2] << 16 | shaped[..., 3] << 24


def cache_key(position_key: chex.Array, boards: chex.Array, repeated: chex.Array,
              rule50: chex.Array, temperature: chex.Array, history_length: int) -> chex.Array:
    """The cache key of positions, uint32 [..., 2] (never (0, 0)).

    Args:
      position_key: uint32 [..., 2] ``position_hash`` of the position.
      boards: int8 [..., 8, 64] the network input's boards, newest first.
      repeated: bool [..., 8] their "occurred before" flags.
      rule50: the halfmove clock [...].
      temperature: float32 [...] policy temperature of the priors.
      history_length: 0..7 (static), see docs/DESIGN.md.
    """
    if not 0 <= history_length <= FULL_HISTORY:
        raise ConfigError(f"cache history length must be in 0..7, got {history_length}")
    temp_bits = jax.lax.bitcast_convert_type(temperature.astype(jnp.float32), jnp.uint32)
    acc = _combine(position_key.astype(jnp.uint32), temp_bits[..., None], 1)
    for j in range(1, history_length + 1):
        acc = _combine(acc, _board_words(boards[..., j, :]), 2 + j)
    if history_length == FULL_HISTORY:
        flags = jnp.sum(repeated.astype(jnp.uint32) << jnp.arange(8, dtype=jnp.uint32), -1)
        acc = _combine(acc, jnp.stack([flags, rule50.astype(jnp.uint32)], -1), 11)
    return acc.at[..., 1].set(acc[..., 1] | jnp.uint32(1))


def _slots(cache: EvalCache, key: chex.Array) -> chex.Array:
    """int32 [R, WAYS] candidate slots of each key."""
    home = key[:, 0] % jnp.uint32(cache.capacity)
    return ((home[:, None] + jnp.arange(WAYS, dtype=jnp.uint32)) % cache.capacity).astype(
        jnp.int32)


def lookup(cache: EvalCache, key: chex.Array
           ) -> tuple[chex.Array, chex.Array, chex.Array, chex.Array]:
    """Entries of keys [R, 2]: (hit bool [R], priors float16 [R, K], wdl float32 [R, 3],
    moves left float32 [R])."""
    slots = _slots(cache, key)
    match = jnp.all(cache.keys[slots] == key[:, None, :], -1)  # [R, WAYS]
    hit = match.any(-1)
    slot = jnp.take_along_axis(slots, jnp.argmax(match, -1)[:, None], -1)[:, 0]
    return hit, cache.priors[slot], cache.wdl[slot], cache.m[slot]


def insert(cache: EvalCache, key: chex.Array, priors: chex.Array, wdl: chex.Array,
           mask: chex.Array, m: chex.Array | None = None) -> EvalCache:
    """Store rows ``mask`` [R] (keys [R, 2], priors [R, K], wdl [R, 3], moves left [R]).

    A key already stored is left alone; a new one takes the first empty slot of its ways,
    else (once all its ways are full) evicts the way its hash names. Rows that want the
    same slot in one round: the first row wins and the others try again in the next
    round (``WAYS`` rounds), so the result does not depend on the order of scatter writes.
    """
    capacity = cache.capacity
    rows = key.shape[0]
    slots = _slots(cache, key)
    victim = ((key[:, 1] >> 8) % jnp.uint32(WAYS)).astype(jnp.int32)

    def round_(i, c):
        keys, pending = c
        stored = keys[slots]  # [R, WAYS, 2]
        present = jnp.all(stored == key[:, None, :], -1).any(-1)
        empty = jnp.all(stored == 0, -1)
        way = jnp.where(empty.any(-1), jnp.argmax(empty, -1),
                        jnp.where(i == WAYS - 1, victim, -1))
        want = pending & ~present & (way >= 0)
        target = jnp.where(want, jnp.take_along_axis(slots, jnp.maximum(way, 0)[:, None],
                                                     -1)[:, 0], capacity)
        order = jnp.argsort(target, stable=True)
        ranked = target[order]
        first = jnp.concatenate([jnp.ones(1, bool), ranked[1:] != ranked[:-1]])
        won = jnp.zeros(rows, bool).at[order].set(first) & want
        target = jnp.where(won, target, capacity)
        keys = keys.at[target].set(key, mode="drop")
        return keys, pending & ~present & ~won

    keys, _ = jax.lax.fori_loop(0, WAYS, round_, (cache.keys, mask))
    # the winners of every round are the rows whose key now sits in one of their slots;
    # write their payloads once (a key appears in at most one slot)
    stored = keys[slots]
    match = jnp.all(stored == key[:, None, :], -1)  # [R, WAYS]
    fresh = match & ~jnp.all(cache.keys[slots] == key[:, None, :], -1)
    slot = jnp.take_along_axis(slots, jnp.argmax(fresh, -1)[:, None], -1)[:, 0]
    target = jnp.where(mask & fresh.any(-1), slot, capacity)
    # duplicate keys in one call share a slot: the first row's payload (equal anyway)
    order = jnp.argsort(target, stable=True)
    ranked = target[order]
    first = jnp.concatenate([jnp.ones(1, bool), ranked[1:] != ranked[:-1]])
    target = jnp.where(jnp.zeros(rows, bool).at[order].set(first), target, capacity)
    return EvalCache(keys=keys,
                     priors=cache.priors.at[target].set(priors.astype(PRIOR_DTYPE), mode="drop"),
                     wdl=cache.wdl.at[target].set(wdl, mode="drop"),
                     m=cache.m if m is None else cache.m.at[target].set(m, mode="drop"))
