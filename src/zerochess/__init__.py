"""zerochess: JAX-accelerated batched MCTS for chess research."""

from zerochess.analysis import analyse, search_config
from zerochess.errors import UserError
from zerochess.neural import Model, ModelOutput, load_model
from zerochess.positions import parse_position, read_epd
from zerochess.search import (
    SearchBatch,
    SearchConfig,
    Searcher,
    SearchResult,
    TemperatureSchedule,
    bytes_per_node,
)

__version__ = "0.1.0"

__all__ = [
    "Model",
    "ModelOutput",
    "SearchBatch",
    "SearchConfig",
    "SearchResult",
    "Searcher",
    "TemperatureSchedule",
    "UserError",
    "analyse",
    "bytes_per_node",
    "load_model",
    "parse_position",
    "read_epd",
    "search_config",
]
