"""zerochess: JAX-accelerated batched MCTS for chess research.

Exports are lazy so that importing ``zerochess.chess`` (e.g. in the host worker
processes) does not load jax.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "analyse": "zerochess.analysis.quick",
    "search_config": "zerochess.analysis.quick",
    "ConfigError": "zerochess.errors",
    "InputFileError": "zerochess.errors",
    "ModelError": "zerochess.errors",
    "ModelFileError": "zerochess.errors",
    "PositionError": "zerochess.errors",
    "UserError": "zerochess.errors",
    "Model": "zerochess.neural",
    "ModelOutput": "zerochess.neural",
    "load_model": "zerochess.neural",
    "parse_fen": "zerochess.positions",
    "parse_position": "zerochess.positions",
    "read_epd": "zerochess.positions",
    "MoveFilter": "zerochess.search",
    "SearchBatch": "zerochess.search",
    "SearchConfig": "zerochess.search",
    "SearchResult": "zerochess.search",
    "Searcher": "zerochess.search",
    "TemperatureSchedule": "zerochess.search",
    "bytes_per_node": "zerochess.search",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'zerochess' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
