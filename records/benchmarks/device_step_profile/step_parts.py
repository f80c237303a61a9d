"""Before/after of two candidate step-cost changes of issue 40, on their own (small programs:
the whole-step profile compiles for many minutes on a loaded 2-core machine).

- the repetition walk (``search.history.path_occurrences``, the walk as it is: "before"):
  one trip per ply back to the halfmove clock (the game before the root included). The
  candidate ("after", ``vector_path_occurrences`` here): trips only up the tree's path,
  the game before the root compared at once. B x 1 new leaves at depth 8 whose halfmove
  clocks are those of the bench positions plus 8 (cycled), 100 keys before each root;
  the two give the same (count, nearest) on every row (checked here). Measured slower
  at the bench positions' clocks (8-14 plies), so it was dropped.
- the root race (``loop.root_race`` over every root edge of every tree): before, read at
  every step; after, only when some tree uses smart pruning (off by default).

Usage: python step_parts.py OUT.json [B] [repeats]
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from zerochess.bench.throughput import bench_positions
from zerochess.search.history import earlier_occurrences, path_occurrences
from zerochess.search.loop import root_race
from zerochess.search.tree import empty_tree


def vector_path_occurrences(tree, parent, depth, key, rule50):
    """The candidate: the path walked, the game before the root compared at once."""
    past = tree.root_history
    limit = jnp.minimum(rule50.astype(jnp.int32), depth + past.num_keys)

    def read(ply, node):
        safe = jnp.maximum(node, 0)
        return tree.key[safe], tree.parent[safe]

    count, nearest = earlier_occurrences(key, jnp.minimum(limit, depth), parent, read)
    ply = depth + 1 + jnp.arange(past.keys.shape[0], dtype=jnp.int32)
    hit = (ply <= limit) & (ply % 2 == 0) & jnp.all(past.keys == key, axis=-1)
    first = jnp.min(jnp.where(hit, ply, jnp.iinfo(jnp.int32).max))
    return (count + jnp.sum(hit, dtype=jnp.int32),
            jnp.where(count > 0, nearest, jnp.where(hit.any(), first, 0)))


def median_ms(fn, *args, repeats):
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def main(out: str, batch: int = 256, repeats: int = 30) -> None:
    depth = 8
    rng = np.random.default_rng(0)
    tree = empty_tree(batch, 65)
    keys = rng.integers(0, 2**32, (batch, 65, 2), dtype=np.uint32)
    past = rng.integers(0, 2**32, (batch, 100, 2), dtype=np.uint32)
    # a few true repetitions: the new leaf's key equals one 4 plies up and one 12 before
    # the root on every third tree
    leaf_keys = rng.integers(0, 2**32, (batch, 2), dtype=np.uint32)
    leaf_keys[::3] = keys[::3, depth - 4]
    past[::3, 3] = leaf_keys[::3]
    tree = tree.replace(
        key=jnp.asarray(keys), parent=jnp.asarray(np.tile(np.arange(-1, 64), (batch, 1))),
        root_history=tree.root_history._replace(
            keys=jnp.asarray(past), num_keys=jnp.full((batch,), 100, jnp.int32)))
    clocks = [b.halfmove_clock for b in bench_positions()]
    rule50 = jnp.asarray([clocks[i % len(clocks)] + depth for i in range(batch)], jnp.int16)
    parent = jnp.full((batch,), depth - 1, jnp.int32)
    depths = jnp.full((batch,), depth, jnp.int32)
    args = (tree, parent, depths, jnp.asarray(leaf_keys), rule50)
    old = jax.jit(jax.vmap(path_occurrences))
    new = jax.jit(jax.vmap(vector_path_occurrences))
    same = all(np.array_equal(np.asarray(a), np.asarray(b))
               for a, b in zip(old(*args), new(*args), strict=True))
    counts = np.asarray(new(*args)[0])
    race = jax.jit(jax.vmap(root_race))
    res = {
        "batch": batch, "depth": depth, "repeats": repeats,
        "rule50": {"min": int(rule50.min()), "max": int(rule50.max()),
                   "mean": float(rule50.astype(jnp.float32).mean())},
        "repetition_walk_ms": {"before": median_ms(old, *args, repeats=repeats),
                               "after": median_ms(new, *args, repeats=repeats)},
        "same_results": bool(same), "rows_with_repetitions": int((counts > 0).sum()),
        "root_race_ms": {"before": median_ms(race, tree, repeats=repeats), "after": 0.0},
        "backend": jax.default_backend(),
    }
    print(json.dumps(res, indent=2))
    with open(out, "w") as fh:
        json.dump(res, fh, indent=2)


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:]))
