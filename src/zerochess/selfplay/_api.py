"""The search API this package builds on (one import point)."""

from __future__ import annotations

try:  # pragma: no cover - switches to the real API as soon as it lands
    from zerochess.neural import load_model  # type: ignore[attr-defined]
    from zerochess.search.api import (  # type: ignore[import-not-found]
        Searcher,
        SearchResult,
        TemperatureSchedule,
    )
except ImportError:  # pragma: no cover
    from zerochess.selfplay._stub_search import (  # noqa: F401
        Searcher,
        SearchResult,
        TemperatureSchedule,
        load_model,
    )

from zerochess.search.config import SearchConfig

__all__ = ["Searcher", "SearchConfig", "SearchResult", "TemperatureSchedule", "load_model"]
