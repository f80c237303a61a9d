"""Shape buckets: tree sizes and batch sizes rounded up so that nearby requests share
compiled programs."""

from __future__ import annotations

from zerochess.validation import MAX_INT32

BUCKET_STEPS = (8, 10, 12, 14)  # mantissas of a doubling: steps of at most 1.25x
MIN_TREE_BUCKET = 8


def size_bucket(n: int, exact_below: int = 8, maximum: int = MAX_INT32 - 1) -> int:
    """The smallest bucket ``m * 2**e`` (m in ``BUCKET_STEPS``) >= ``n``; ``n`` itself
    below ``exact_below`` or when the bucket would pass ``maximum``."""
    n = int(n)
    if n < exact_below or n <= BUCKET_STEPS[0]:
        return n
    scale = 1
    while BUCKET_STEPS[-1] * scale < n:
        scale *= 2
    bucket = next(m * scale for m in BUCKET_STEPS if m * scale >= n)
    return bucket if bucket <= maximum else n


def tree_size_bucket(nodes: int, maximum: int = MAX_INT32 - 1) -> int:
    """A tree size for ``nodes`` nodes: at least ``MIN_TREE_BUCKET``, rounded up by
    ``size_bucket``."""
    return size_bucket(max(int(nodes), MIN_TREE_BUCKET), maximum=maximum)


def batch_size_bucket(count: int) -> int:
    """A batch size for ``count`` positions: exact below 8, rounded up by ``size_bucket``
    above."""
    return size_bucket(count)


__all__ = ["BUCKET_STEPS", "MIN_TREE_BUCKET", "batch_size_bucket", "size_bucket",
           "tree_size_bucket"]
