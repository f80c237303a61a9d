"""How large a search may be: the limits of one tree and step, and the memory check that
refuses a batch of trees before anything is allocated."""

from __future__ import annotations

import functools
import os

import jax

from zerochess.errors import ConfigError
from zerochess.search.tree import DEFAULT_EDGES_PER_NODE, bytes_per_node
from zerochess.validation import MAX_INT32

MAX_NODES = MAX_INT32  # node indices, visits and simulation counters are int32
MAX_LEAVES = 65_536  # leaves per tree and step (lc0's MinibatchSize goes to 1,024)
MAX_EDGES_PER_NODE = 256  # edge pool entries per node (a position has at most 218 moves)


def memory_bytes() -> tuple[int, str]:
    """(bytes, description) of the memory that holds the trees: the accelerator's limit
    (``memory_stats()["bytes_limit"]``), else the machine's physical memory."""
    try:
        stats = jax.devices()[0].memory_stats() or {}
    except Exception:  # noqa: BLE001 - a backend without memory stats
        stats = {}
    if stats.get("bytes_limit"):
        return int(stats["bytes_limit"]), f"{jax.devices()[0].device_kind} memory"
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"), "this machine's memory"
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 2**63 - 1, "memory"


@functools.cache
def default_node_bytes(edges_per_node: int = DEFAULT_EDGES_PER_NODE) -> int:
    return bytes_per_node(edges_per_node)


def check_tree_memory(batch: int, max_nodes: int, what: str = "max_nodes",
                      node_bytes: int | None = None, devices: int = 1) -> None:
    """Refuse (``ConfigError``) a batch of trees that cannot fit in memory, before any
    allocation: the message says the largest ``what`` (nodes per tree) that would fit.
    ``devices``: the batch may be sharded over that many devices' memories."""
    per_node = node_bytes or default_node_bytes()
    need = batch * max_nodes * per_node
    have, where = memory_bytes()
    have *= devices
    if devices > 1:
        where = f"{where} on {devices} devices"
    if need > have:
        most = have // (batch * per_node)
        fix = (f"{what} must be at most about {most:,} here" if most >= 2 else
               f"at most about {have // (max_nodes * per_node):,} such trees fit here")
        raise ConfigError(
            f"{batch:,} search tree(s) of {max_nodes:,} nodes need {size_text(need)} "
            f"({per_node:,} bytes per node), more than {where} ({size_text(have)}); {fix}")


def size_text(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    return str(n)  # pragma: no cover


__all__ = ["MAX_EDGES_PER_NODE", "MAX_LEAVES", "MAX_NODES", "check_tree_memory",
           "default_node_bytes", "memory_bytes", "size_text"]
