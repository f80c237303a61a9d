"""``zerochess bench``: search throughput, measured against peers on the same machine."""

from __future__ import annotations

import importlib
from typing import Any

# flag attribute(s) on the parsed arguments ("a+b": both set) -> the module whose
# ``main(args)`` runs that mode; the first match wins, so combinations come first
MODES: dict[str, str] = {
    "startup": "zerochess.bench.startup",
    "puzzles": "zerochess.bench.puzzles",
    "smart_pruning": "zerochess.bench.smart_pruning",
    "analysis": "zerochess.bench.analysis",
    "vs_lc0+single": "zerochess.bench.single",
    "leaf_quality": "zerochess.bench.leaf_quality",
    "leaves": "zerochess.bench.leaves",
    "gpu_grid": "zerochess.bench.leaves",
    "vs_lc0": "zerochess.bench.lc0_peer",
    "layouts": "zerochess.bench.layouts",
    "rules": "zerochess.bench.rules",
    "device_search": "zerochess.bench.device_search",
    "uci": "zerochess.bench.uci_timeline",
}
DEFAULT_MODE = "zerochess.bench.throughput"


def main(args: Any) -> int:
    """Entry point of ``zerochess bench``: the first mode whose flags are all set, else the
    default throughput run against mctx + pgx."""
    for flags, module in MODES.items():
        if all(getattr(args, flag, False) for flag in flags.split("+")):
            return int(importlib.import_module(module).main(args) or 0)
    return int(importlib.import_module(DEFAULT_MODE).main(args) or 0)


__all__ = ["DEFAULT_MODE", "MODES", "main"]
