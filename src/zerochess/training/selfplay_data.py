"""The self-play hook of training: games -> searched positions -> training ``Examples``."""

from __future__ import annotations

import collections
import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import chess
import numpy as np

from zerochess.chess.policy_map import move_to_index
from zerochess.errors import ConfigError, quote
from zerochess.games import plies
from zerochess.games.config import PlayerSpec
from zerochess.games.loop import GameSpec, RunStats, play_games
from zerochess.games.plies import SearchedPosition
from zerochess.games.records import GameRecord, GameWriter
from zerochess.neural.model import Model
from zerochess.training.examples import Examples, empty_examples, result_wdl


@dataclasses.dataclass
class Player:
    """One side of training games.

    Attributes:
      spec: nodes per move, ``SearchConfig``, temperature schedule (or a UCI engine).
      model: the network searching for it (None for engines).
      params: its parameters (default ``model.params``); players sharing ``model`` share
        one compiled searcher whatever their params.
      collect: turn this player's searched positions into training examples.
    """

    spec: PlayerSpec
    model: Model | None = None
    params: Any = None
    collect: bool = True

    def __post_init__(self) -> None:
        if not self.spec.is_engine and self.model is None:
            raise ConfigError(f"player {quote(self.spec.name)} searches but has no model")


@dataclasses.dataclass
class TrainingGames:
    """Finished games, their training examples (one ``Examples`` per game, in the same
    order as ``records``), the result each game's value targets learned (``targets``: the
    game's own, or a material adjudication of a capped game: a result, or
    ``material +N`` for a graded target) and throughput."""

    records: list[GameRecord]
    examples: list[Examples]
    stats: RunStats
    targets: list[str] = dataclasses.field(default_factory=list)

    @property
    def adjudicated(self) -> int:
        """Games whose value targets are a material adjudication, not the game's draw."""
        return sum(r.result != t for r, t in zip(self.records, self.targets, strict=True))


PIECE_POINTS = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5,
                chess.QUEEN: 9}


def material_balance(board: chess.Board) -> int:
    """White's material minus black's in pawns (P 1, N 3, B 3, R 5, Q 9)."""
    return sum(points * (len(board.pieces(piece, chess.WHITE))
                         - len(board.pieces(piece, chess.BLACK)))
               for piece, points in PIECE_POINTS.items())


def target_result(record: GameRecord, adjudicate_material: int | None) -> str:
    """The result a game's value targets learn: the game's own, except that a game stopped
    by the move cap counts as won by a side ahead by >= ``adjudicate_material`` pawns of
    material (None: the cap's draw). The game record keeps its draw either way."""
    if adjudicate_material is None or not record.adjudicated:
        return record.result
    balance = material_balance(record.final_board())
    if abs(balance) < adjudicate_material:
        return record.result
    return "1-0" if balance > 0 else "0-1"


def material_wdl(balance: float, scale: float) -> np.ndarray:
    """A graded W/D/L for white from a material balance: ``W - L = tanh(balance / scale)``,
    all of the rest a draw (``D = 1 - |W - L|``); float32 ``[3]``.

    Every pawn moves the target, so a value head trained on it rates one more capture
    higher however far ahead a side already is (a won/lost target saturates instead)."""
    t = math.tanh(balance / scale)
    return np.array([max(t, 0.0), 1.0 - abs(t), max(-t, 0.0)], np.float32)


def value_target(record: GameRecord, adjudicate_material: int | None = None,
                 material_scale: float | None = None) -> tuple[str, str | np.ndarray]:
    """What a finished game's value targets learn, and its label.

    Args:
      record: the game.
      adjudicate_material: ``target_result``'s threshold for capped games.
      material_scale: graded targets for capped games (``material_wdl``); exclusive with
        ``adjudicate_material``. A game that ends on the board keeps its result.

    Returns:
      (label, target): the label is the PGN result learned, or ``material +N`` (white's
      balance) for a graded target; the target is the result, or W/D/L for white.
    """
    if material_scale is None or not record.adjudicated:
        result = target_result(record, adjudicate_material)
        return result, result
    balance = material_balance(record.final_board())
    if balance == 0:
        return record.result, record.result
    return f"material {balance:+d}", material_wdl(balance, material_scale)


def policy_target(result: Any) -> tuple[np.ndarray, np.ndarray]:
    """lc0's policy target of a search (``games.plies.policy_target``): ``N(move) / sum
    N`` over the root's children.

    Args:
      result: a ``SearchResult`` (``board``, ``moves``, ``visits``).

    Returns:
      (index int16 ``[218]``: the legal moves' 1858-indices, -1 padded; target float32
      ``[218]``: visit fractions, 0 padded). Uniform over the legal moves when no child
      was visited.
    """
    return plies.policy_target([move_to_index(result.board, m) for m in result.moves],
                               result.visits)


def examples_from_game(positions: Sequence[SearchedPosition], result: str | np.ndarray, plies: int,
                       game: int) -> Examples:
    """A finished game's examples: its searched positions with the game result (W/D/L from
    each side to move) and the plies left (``plies`` moves in the record). ``result`` is a
    PGN result or a W/D/L ``[3]`` for white (``material_wdl``)."""
    if not positions:
        return empty_examples()
    n = len(positions)
    white = np.array([p.white_to_move for p in positions])
    f32 = lambda xs: np.asarray(xs, np.float32)  # noqa: E731
    return Examples(
        plane_bits=np.stack([p.plane_bits for p in positions]),
        plane_values=np.stack([p.plane_values for p in positions]).astype(np.float32),
        policy_index=np.stack([p.policy_index for p in positions]),
        policy_target=np.stack([p.policy_target for p in positions]),
        result=result_wdl(result, white),
        root_q=f32([p.root_wl for p in positions]), root_d=f32([p.root_d for p in positions]),
        best_q=f32([p.best_wl for p in positions]), best_d=f32([p.best_d for p in positions]),
        moves_left=f32([plies - p.move_index for p in positions]),
        game=np.full(n, game, np.int32),
        ply=np.asarray([p.move_index for p in positions], np.int32))


def play_training_games(
    specs: Sequence[GameSpec],
    players: Mapping[str, Player],
    *,
    batch_size: int = 64,
    max_plies: int | None = None,
    max_nodes: int | None = None,
    writer: GameWriter | None = None,
    on_game: Callable[[GameRecord, Examples], None] | None = None,
    shrink_tail: bool = False,
    adjudicate_material: int | None = None,
    material_scale: float | None = None,
    rules: str | None = None,
) -> TrainingGames:
    """Play ``specs`` in batches and collect training examples from the searches.

    Args:
      specs: the games (``zerochess.games.GameSpec``: players by name, opening, seed).
      players: name -> ``Player``.
      batch_size: trees per batched search (a compile-time shape; padded when fewer).
      max_plies: move cap (adjudicated draw).
      max_nodes: tree size per search (default: the players' largest nodes + 1); fix it
        when nodes per move change between calls, so nothing recompiles.
      writer: optional PGN/CSV writer (each game is written when it ends).
      on_game: called with each finished game's record and examples.
      shrink_tail: search the last games of the queue in smaller compiled batches.
      adjudicate_material: value targets of a game stopped by the move cap: a win for the
        side ahead by at least this many pawns of material (``target_result``).
      rules: where the searches' chess rules run (``host``, ``device``; None: the default).
      material_scale: value targets of a game stopped by the move cap: graded by its final
        material balance (``material_wdl``); exclusive with ``adjudicate_material``.

    Returns:
      ``TrainingGames`` in the order the games finished.
    """
    collect = {name for name, p in players.items() if p.collect and not p.spec.is_engine}
    positions: dict[int, list[SearchedPosition]] = collections.defaultdict(list)
    examples: list[Examples] = []
    targets: list[str] = []

    def searched(game: GameSpec, pos: SearchedPosition) -> None:
        mover = game.white if pos.white_to_move else game.black
        if mover in collect:
            positions[game.index].append(pos)

    def finished(rec: GameRecord) -> None:
        label, target = value_target(rec, adjudicate_material, material_scale)
        ex = examples_from_game(positions.pop(rec.index, []), target, len(rec.moves),
                                rec.index)
        examples.append(ex)
        targets.append(label)
        if on_game is not None:
            on_game(rec, ex)

    records, stats = play_games(
        specs, {name: p.spec for name, p in players.items()}, None,
        models={name: p.model for name, p in players.items() if p.model is not None},
        params={name: p.params for name, p in players.items() if p.params is not None},
        batch_size=batch_size, max_plies=max_plies, max_nodes=max_nodes, writer=writer,
        shrink_tail=shrink_tail, on_game=finished, rules=rules, on_position=searched)
    return TrainingGames(records, examples, stats, targets)


__all__ = ["PIECE_POINTS", "Player", "TrainingGames", "examples_from_game",
           "material_balance",
           "material_wdl", "play_training_games", "policy_target",
           "target_result", "value_target"]
