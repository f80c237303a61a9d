"""The search API this package builds on (one import point)."""

from __future__ import annotations

from zerochess.neural import load_model
from zerochess.search.api import Searcher
from zerochess.search.config import SearchConfig
from zerochess.search.results import SearchResult, TemperatureSchedule

__all__ = ["Searcher", "SearchConfig", "SearchResult", "TemperatureSchedule", "load_model"]
