"""Perft (the number of move paths of a given length) on the device rules, or on the host
rules for comparison."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jax
import numpy as np

from zerochess.chess.device.expand import expand
from zerochess.chess.types import MAX_LEGAL_MOVES, PositionArrays

DEFAULT_BATCH = 4096


@jax.jit
def _expand(parent: PositionArrays, move: jax.Array, mask: jax.Array):
    out = expand(parent, move, mask=mask)
    return out.child, out.legal, out.num_legal


def _chunks(parent: PositionArrays, move: np.ndarray, batch: int
            ) -> Iterator[tuple[PositionArrays, np.ndarray, np.ndarray]]:
    """Expand ``move[i]`` in ``parent[i]`` in padded batches of ``batch`` rows."""
    n = move.shape[0]
    for start in range(0, n, batch):
        stop = min(start + batch, n)
        pad = batch - (stop - start)
        part = PositionArrays(*(np.concatenate([f[start:stop], np.repeat(f[:1], pad, 0)])
                                for f in parent))
        mv = np.concatenate([move[start:stop], np.full(pad, -1, move.dtype)])
        mask = np.arange(batch) < stop - start
        child, legal, num = jax.device_get(_expand(part, mv, mask))
        keep = stop - start
        yield (PositionArrays(*(f[:keep] for f in child)), legal[:keep], num[:keep])


def _count(parent: PositionArrays, legal: np.ndarray, num: np.ndarray, depth: int,
           batch: int) -> int:
    """Move paths of ``depth`` (>= 1) plies from positions with these legal moves."""
    if depth == 1:
        return int(num.astype(np.int64).sum())
    rows = np.repeat(np.arange(num.shape[0]), num.astype(np.int64))
    moves = legal[np.arange(MAX_LEGAL_MOVES)[None, :] < num[:, None]]
    total = 0
    # depth-first over chunks of the next level: memory stays bounded
    step = max(batch, 1)
    for start in range(0, rows.shape[0], step):
        sel = rows[start:start + step]
        parents = PositionArrays(*(f[sel] for f in parent))
        for child, c_legal, c_num in _chunks(parents, moves[start:start + step], batch):
            total += _count(child, c_legal, c_num, depth - 1, batch)
    return total


def perft(position: PositionArrays, depth: int, divide: bool = False,
          batch: int = DEFAULT_BATCH) -> Any:
    """Move paths of ``depth`` plies from one position (numpy ``PositionArrays`` of one
    position); with ``divide``, a dict of the 1858 index of each legal move to the paths
    below it (``depth`` >= 1)."""
    root = PositionArrays(*(np.asarray(f)[None] for f in position))
    (child, legal, num), = list(_chunks(root, np.full(1, -1, np.int16), batch))
    if depth == 0:
        return 1 if not divide else {}
    if not divide:
        return _count(child, legal, num, depth, batch)
    out = {}
    for slot in range(int(num[0])):
        move = legal[0, slot]
        if depth == 1:
            out[int(move)] = 1
            continue
        (c, cl, cn), = list(_chunks(root, np.full(1, move, np.int16), batch))
        out[int(move)] = _count(c, cl, cn, depth - 1, batch)
    return out


__all__ = ["DEFAULT_BATCH", "perft"]


