"""Analysis: one-call ``analyse`` for notebooks, and the KataGo-style JSON analysis engine."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names as ``_EXPORTS``, for type checkers and IDEs
    from zerochess.analysis.client import AnalysisError, Client
    from zerochess.analysis.quick import SEARCHES, analyse, search_config
    from zerochess.analysis.settings import EngineSettings

_EXPORTS = {
    "analyse": "zerochess.analysis.quick",
    "search_config": "zerochess.analysis.quick",
    "SEARCHES": "zerochess.analysis.quick",
    "AnalysisError": "zerochess.analysis.client",
    "Client": "zerochess.analysis.client",
    "EngineSettings": "zerochess.analysis.settings",
}

# a literal list (type checkers read it); the keys of _EXPORTS
__all__ = ["AnalysisError", "Client", "EngineSettings", "SEARCHES", "analyse", "search_config"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'zerochess.analysis' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
