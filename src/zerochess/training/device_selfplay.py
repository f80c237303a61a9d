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

    boards = list(openings)
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


__all__ = ["Games", "play"]
