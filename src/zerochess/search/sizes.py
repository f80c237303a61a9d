"""Shape buckets: tree sizes and batch sizes rounded up so that nearby requests share
compiled programs.

Every distinct ``Searcher`` shape (trees of ``max_nodes`` nodes, a batch of B trees)
compiles its own programs (about 11 s on a CPU for one position). A caller that derives
the shape from a user's number (``analyse --visits 333``: 334 nodes) would compile again
for every new number. ``size_bucket`` rounds up to ``m * 2**e`` with ``m`` in
{8, 10, 12, 14}: 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, ... Consecutive buckets differ
by at most 25% (the memory a rounded tree can waste), and there are four per doubling
(``--visits`` 1 to 100,000 use 4 * 14 = 56 tree sizes instead of 100,000).

Only the shape is rounded: a search of ``visits`` simulations in a larger tree does the
same work and gives the same result (its tree never fills). The callers that build a
``Searcher`` from a user's number round here: ``analyse`` (CLI and library: tree size
and the number of positions, padded with copies whose results are dropped), the
analysis engine (tree size) and the UCI engine (tree size).
"""

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
