"""The puzzle miner: positions where a deep search's best move is clearly better than every
other and a shallow search misses it, extended down the line while the solver's move stays
the only clear one, written as Lichess puzzle CSV rows."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import chess

from zerochess.experiments.deep_eval import Analysis, Analyzer

LICHESS_COLUMNS = ("PuzzleId", "FEN", "Moves", "Rating", "RatingDeviation", "Popularity",
                   "NbPlays", "Themes", "GameUrl", "OpeningTags")
PIECE_VALUE = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9,
               chess.KING: 100}
BASE_RATING = 1000
RATING_PER_DOUBLING = 250


class MinerSettings(NamedTuple):
    """``shallow_nodes``: the search that must miss the move (1: the raw policy's choice);
    ``deep_nodes``: the search that finds it; ``ladder``: node counts tried for the
    difficulty; ``min_value``/``margin``: "clearly better"; ``max_solver_moves``: the
    longest solution."""

    shallow_nodes: int = 1
    deep_nodes: int = 160
    ladder: tuple[int, ...] = (2, 4, 8, 16, 32, 64, 128)
    min_value: float = 0.4
    margin: float = 0.5
    max_solver_moves: int = 3


class Source(NamedTuple):
    """Where a scanned position comes from: the position before the opponent's last move
    (``before``), that move, and the game and ply of the puzzle position."""

    before: chess.Board
    last_move: chess.Move
    game: int
    ply: int


class Puzzle(NamedTuple):
    """A mined puzzle (``line``: the solution, solver's moves at even indices)."""

    source: Source
    line: list[chess.Move]
    found_at: int
    deep_value: float
    margin: float
    shallow_best: chess.Move
    themes: list[str]

    @property
    def fen(self) -> str:
        return self.source.before.fen()

    @property
    def moves(self) -> list[chess.Move]:
        return [self.source.last_move, *self.line]

    @property
    def puzzle_id(self) -> str:
        text = self.fen + " " + " ".join(m.uci() for m in self.moves)
        return "zc" + hashlib.sha1(text.encode()).hexdigest()[:8]

    def rating(self, shallow_nodes: int) -> int:
        return rating_for(self.found_at, shallow_nodes)

    def lichess_row(self, shallow_nodes: int, game_url: str = "") -> dict[str, Any]:
        return {"PuzzleId": self.puzzle_id, "FEN": self.fen,
                "Moves": " ".join(m.uci() for m in self.moves),
                "Rating": self.rating(shallow_nodes), "RatingDeviation": 500, "Popularity": 0,
                "NbPlays": 0, "Themes": " ".join(self.themes), "GameUrl": game_url,
                "OpeningTags": ""}


def rating_for(found_at: int, shallow_nodes: int) -> int:
    """The difficulty as a number in Lichess's ``Rating`` column (not a Glicko rating):
    ``1000 + 250 * log2(found_at / shallow_nodes)``."""
    return int(round(BASE_RATING + RATING_PER_DOUBLING * math.log2(
        max(found_at, 1) / max(shallow_nodes, 1))))


def mates_now(board: chess.Board, move: chess.Move) -> bool:
    board.push(move)
    try:
        return board.is_checkmate()
    finally:
        board.pop()


def mating_move(board: chess.Board, prefer: chess.Move | None = None) -> chess.Move | None:
    """A move that mates at once (``prefer`` if it does, else the first by UCI), or None."""
    if prefer is not None and prefer in board.legal_moves and mates_now(board, prefer):
        return prefer
    mates = sorted((m for m in board.legal_moves if mates_now(board, m)), key=lambda m: m.uci())
    return mates[0] if mates else None


def best_and_margin(board: chess.Board, a: Analysis) -> tuple[float, float]:
    """The best move's value and its margin over the best other searched move (``nan``
    when no other move was searched; ``inf`` when the only legal move)."""
    values = dict(zip(a.moves, a.values, strict=True))
    best = values.get(a.best, a.value)
    others = [v for m, v in values.items() if m != a.best]
    if board.legal_moves.count() == 1:
        return best, math.inf
    return best, (best - max(others)) if others else math.nan


def is_clear(board: chess.Board, a: Analysis, s: MinerSettings) -> bool:
    """The deep search's best move is the only clearly winning one (or mates at once)."""
    if mates_now(board, a.best):
        return True
    best, margin = best_and_margin(board, a)
    return best >= s.min_value and not math.isnan(margin) and margin >= s.margin


def _attacked_targets(board: chess.Board, square: chess.Square) -> list[chess.Square]:
    """Enemy pieces the piece on ``square`` attacks that are worth more than it, the king,
    or undefended."""
    piece = board.piece_at(square)
    if piece is None:
        return []
    out = []
    for t in board.attacks(square):
        target = board.piece_at(t)
        if target is None or target.color == piece.color:
            continue
        if (target.piece_type == chess.KING or PIECE_VALUE[target.piece_type]
                > PIECE_VALUE[piece.piece_type] or not board.attackers(target.color, t)):
            out.append(t)
    return out


def themes_of(board: chess.Board, line: Sequence[chess.Move], value: float) -> list[str]:
    """Lichess theme names that python-chess facts give cheaply: mate / mateInN, fork,
    hangingPiece, promotion, oneMove / short / long / veryLong, and advantage or crushing
    (value >= 0.8, about +600 cp) when not a mate."""
    b = board.copy(stack=False)
    first = line[0]
    themes = []
    captured = b.piece_at(first.to_square)
    if (captured is not None and captured.piece_type != chess.PAWN
            and not b.attackers(captured.color, first.to_square)):
        themes.append("hangingPiece")
    b.push(first)
    if not b.is_checkmate() and len(_attacked_targets(b, first.to_square)) >= 2:
        themes.append("fork")
    b = board.copy(stack=False)
    for m in line:
        b.push(m)
    solver_moves = (len(line) + 1) // 2
    if any(m.promotion for m in line[::2]):
        themes.append("promotion")
    if b.is_checkmate():
        themes += ["mate", f"mateIn{solver_moves}"] if solver_moves <= 5 else ["mate"]
    else:
        themes.append("crushing" if value >= 0.8 else "advantage")
    themes.append({1: "oneMove", 2: "short", 3: "long"}.get(solver_moves, "veryLong"))
    return sorted(themes)


def mine(sources: Sequence[Source], boards: Sequence[chess.Board], deep: Sequence[Analysis],
         analyze: Analyzer, s: MinerSettings) -> list[Puzzle]:
    """The puzzles among ``boards`` (the positions after each source's last move) given
    their deep analyses; ``analyze`` runs the shallow checks, the line and the ladder
    (each step batched over the candidates)."""
    clear = [i for i, (b, a) in enumerate(zip(boards, deep, strict=True)) if is_clear(b, a, s)]
    if not clear:
        return []
    shallow = analyze([boards[i] for i in clear], s.shallow_nodes)
    cands = [i for i, sh in zip(clear, shallow, strict=True) if sh.best != deep[i].best]
    shallow_best = {i: sh.best for i, sh in zip(clear, shallow, strict=True)}
    if not cands:
        return []
    lines = {i: [deep[i].best] for i in cands}
    open_ = [i for i in cands]
    for _ in range(s.max_solver_moves - 1):
        # the opponent's reply: the deep search's best move after the solver's move
        live = []
        for i in open_:
            b = _after(boards[i], lines[i])
            if not b.is_game_over(claim_draw=True):
                live.append(i)
        if not live:
            break
        replies = analyze([_after(boards[i], lines[i]) for i in live], s.deep_nodes)
        nxt, nxt_boards = [], []
        for i, r in zip(live, replies, strict=True):
            b = _after(boards[i], [*lines[i], r.best])
            if b.is_game_over(claim_draw=True):
                continue
            nxt.append((i, r.best))
            nxt_boards.append(b)
        if not nxt:
            break
        solver = analyze(nxt_boards, s.deep_nodes)
        open_ = []
        for (i, reply), b, a in zip(nxt, nxt_boards, solver, strict=True):
            mate = mating_move(b, a.best)
            if mate is not None:  # any mating move ends a line (Lichess accepts any)
                lines[i] += [reply, mate]
            elif is_clear(b, a, s):
                lines[i] += [reply, a.best]
                open_.append(i)
        if not open_:
            break
    found = {i: s.deep_nodes for i in cands}
    for nodes in sorted(n for n in s.ladder if s.shallow_nodes < n < s.deep_nodes):
        left = [i for i in cands if found[i] == s.deep_nodes]
        if not left:
            break
        for i, a in zip(left, analyze([boards[i] for i in left], nodes), strict=True):
            if a.best == deep[i].best:
                found[i] = nodes
    out = []
    for i in cands:
        value, margin = best_and_margin(boards[i], deep[i])
        out.append(Puzzle(sources[i], lines[i], found[i], value, margin, shallow_best[i],
                          themes_of(boards[i], lines[i], value)))
    return out


def _after(board: chess.Board, moves: Sequence[chess.Move]) -> chess.Board:
    b = board.copy(stack=False)
    for m in moves:
        b.push(m)
    return b


def validate(puzzle: Puzzle, judge: Any, margin: float) -> dict[str, Any]:
    """Stockfish's check of every solver move of ``puzzle``: its best move (any mating move
    where the solution mates at once) and unique by ``margin`` on the [-1, 1] scale over its
    second line (``judge.judge(board, multipv=2)``). Returns ``passed`` and what it saw at
    the first move."""
    b = puzzle.source.before.copy(stack=False)
    b.push(puzzle.source.last_move)
    first: dict[str, Any] = {}
    passed = True
    for k, move in enumerate(puzzle.line):
        if k % 2 == 0:
            seen = judge.judge(b, multipv=2)
            gap = (seen.values[0] - seen.values[1]) if len(seen.values) > 1 else math.inf
            mate = mates_now(b, move)
            ok = (seen.moves and seen.moves[0] == move and gap >= margin) or (
                mate and (not seen.moves or mates_now(b, seen.moves[0])))
            if k == 0:
                first = {"sf_best": seen.moves[0].uci() if seen.moves else "",
                         "sf_value": seen.value, "sf_margin": gap}
            passed = passed and bool(ok)
        b.push(move)
    return {"passed": passed, **first}


__all__ = ["LICHESS_COLUMNS", "MinerSettings", "Puzzle", "Source", "best_and_margin",
           "is_clear", "mating_move", "mine", "rating_for", "themes_of", "validate"]
