"""Self-play on the device: a batch of games as one compiled ``lax.scan`` over plies."""

from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Any, NamedTuple

import chess

from zerochess.chess.policy_map import move_to_index
from zerochess.games.config import PlayerSpec
from zerochess.games.loop import GameSpec, play_games
from zerochess.games.openings import Opening
from zerochess.games.seeding import game_seed
from zerochess.search.config import SearchConfig
from zerochess.search.results import TemperatureSchedule


class Games(NamedTuple):
    """The games of a ``play`` call (host)."""

    moves: list[list[int]]  # each game's moves (lc0 indices), in order
    results: list[str]  # "1-0", "0-1", "1/2-1/2"
    terminations: list[str]  # checkmate, stalemate, ..., "move_cap"
    examples: Any  # training.examples.Examples of every searched position


def play(model: Any, openings: Sequence[chess.Board], white: SearchConfig,
         black: SearchConfig, num_simulations: int, *, batch: int = 64, seed: int = 0,
         max_plies: int = 400, white_temperature: TemperatureSchedule | None = None,
         black_temperature: TemperatureSchedule | None = None, plies_per_call: int = 16,
         model_params: Any = None) -> Games:
    """Play one game per opening (python-chess boards), ``batch`` at a time, on the device.

    ``white``/``black``: the search of each colour, with its temperature schedule (None:
    temperature 0, the best move); ``num_simulations`` per move; games end by the rules
    (draws claimed, as python-chess's ``outcome(claim_draw=True)``) or after
    ``max_plies`` plies of the game, the opening's moves included (a draw, "move_cap").
    ``model_params``: the network's parameters (default the model's own). Returns every
    game and the examples of every searched position.
    """
    from zerochess.training.examples import Examples, concat_examples
    from zerochess.training.selfplay_data import examples_from_game, value_target

    boards = check_play_args(model, openings, white, black, num_simulations, batch, seed,
                             max_plies, white_temperature, black_temperature, plies_per_call)
    specs = [GameSpec(g, "white", "black", Opening(f"opening {g}", b.root().fen(),
                                                   tuple(m.uci() for m in b.move_stack)),
                      game_seed(seed, g)) for g, b in enumerate(boards)]
    players = {"white": PlayerSpec("white", nodes=num_simulations, search=white,
                                   temperature=white_temperature or TemperatureSchedule()),
               "black": PlayerSpec("black", nodes=num_simulations, search=black,
                                   temperature=black_temperature or TemperatureSchedule())}
    positions: dict[int, list[Any]] = collections.defaultdict(list)

    def searched(game: GameSpec, pos: Any) -> None:
        positions[game.index].append(pos)

    records, _ = play_games(specs, players, model, batch_size=min(batch, len(specs)),
                            max_plies=max_plies, rules="device", plies_per_call=plies_per_call,
                            params={"white": model_params, "black": model_params}
                            if model_params is not None else None,
                            on_position=searched)
    by_game = {r.index: r for r in records}
    moves, results, terms, parts = [], [], [], []
    for g, board in enumerate(boards):
        rec = by_game[g]
        b = board.copy()
        line = []
        for uci in rec.moves[len(board.move_stack):]:
            move = chess.Move.from_uci(uci)
            line.append(move_to_index(b, move))
            b.push(move)
        moves.append(line)
        results.append(rec.result)
        terms.append(rec.termination)
        parts.append(examples_from_game(positions.pop(g, []), value_target(rec)[1],
                                        len(rec.moves), g))
    examples: Examples = concat_examples(parts)
    return Games(moves=moves, results=results, terminations=terms, examples=examples)


def check_play_args(model: Any, openings: Any, white: Any, black: Any, num_simulations: Any,
                    batch: Any, seed: Any, max_plies: Any, white_temperature: Any,
                    black_temperature: Any, plies_per_call: Any) -> list[chess.Board]:
    """``play``'s arguments checked before anything compiles (a ``ConfigError`` or a
    ``PositionError`` naming the argument and quoting it); returns the opening boards."""
    from zerochess.errors import ConfigError, quote
    from zerochess.games.config import MAX_BATCH, MAX_NODES
    from zerochess.positions import check_game
    from zerochess.validation import MAX_INT32, as_count, as_seed

    if isinstance(openings, (chess.Board, str, bytes)) or not isinstance(openings, Sequence):
        raise ConfigError(f"openings must be a list of python-chess boards (one game each), "
                          f"got {type(openings).__name__}")
    if not openings:
        raise ConfigError("openings must hold at least one board (one game each), got none")
    boards = [check_game(b) for b in openings]
    for name, value in (("white", white), ("black", black)):
        if not isinstance(value, SearchConfig):
            raise ConfigError(f"{name} must be a SearchConfig (SearchConfig.from_dict for a "
                              f"mapping), got {quote(value, 60)}")
    for name, value in (("white_temperature", white_temperature),
                        ("black_temperature", black_temperature)):
        if value is not None and not isinstance(value, TemperatureSchedule):
            raise ConfigError(f"{name} must be a TemperatureSchedule or None, got "
                              f"{quote(value, 60)}")
    if not callable(getattr(model, "apply", None)):
        raise ConfigError(f"model must be a zerochess Model (load_model), got "
                          f"{type(model).__name__}")
    as_count(num_simulations, "num_simulations", 1, MAX_NODES, exact=True)
    as_count(batch, "batch", 1, MAX_BATCH, exact=True)
    as_seed(seed)
    as_count(max_plies, "max_plies", 1, MAX_INT32, exact=True)
    as_count(plies_per_call, "plies_per_call", 1, MAX_INT32, exact=True)
    return boards


__all__ = ["Games", "check_play_args", "play"]
