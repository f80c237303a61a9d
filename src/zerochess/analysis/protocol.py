"""The analysis protocol's input side: one line in, a validated query or action out."""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import types
import typing
from typing import Any

import chess

from zerochess.analysis.settings import MAX_PV_LEN, PERSPECTIVES, EngineSettings
from zerochess.chess.history import INPUT_POSITIONS, REPETITION_WINDOW
from zerochess.errors import UserError
from zerochess.positions import parse_position
from zerochess.search.config import SearchConfig
from zerochess.validation import as_count, as_flag, as_real, as_seed

MAX_MOVES = 20_000  # far beyond any real game (the 75-move rule ends one by ~9,000 moves)
MAX_VISITS = 2**50  # KataGo's limit
PRIORITY_LIMIT = 2**62  # KataGo's limit
MAX_SECONDS = 1e6  # KataGo's limit for report intervals
MIN_SECONDS = 0.001
MAX_UNTIL_DEPTH = 10**9
QUOTE_CHARS = 120  # bad input is quoted, cut to this length
MAX_FEN_CHARS = 200  # a FEN (or EPD) is under 100 characters

QUERY_FIELDS = frozenset({
    "id", "initialFen", "moves", "analyzeTurns", "maxVisits", "analysisPVLen",
    "includePolicy", "includePVVisits", "avoidMoves", "allowMoves", "overrideSettings",
    "reportDuringSearchEvery", "firstReportDuringSearchAfter", "priority", "priorities",
    "seed", "rootFpuReductionMax", "rootPolicyTemperature",
})
ACTIONS = ("query_version", "query_models", "clear_cache", "terminate", "terminate_all")
# overrideSettings keys besides SearchConfig's fields
EXTRA_OVERRIDES = ("maxVisits", "reportAnalysisWinratesAs")


class FieldError(UserError):
    """A query field is missing, of the wrong type or out of range (``field`` names it)."""

    def __init__(self, field: str | None, message: str):
        super().__init__(message)
        self.field = field
        self.message = message


@dataclasses.dataclass(frozen=True)
class MoveFilterEntry:
    """One ``avoidMoves``/``allowMoves`` entry: moves banned (avoid) or the only moves
    allowed (allow) at search depths < ``until_depth`` (1 = the root only)."""

    moves: tuple[chess.Move, ...]
    until_depth: int
    allow: bool


@dataclasses.dataclass(frozen=True)
class TurnSpec:
    """One position of a query: the board after ``turn`` moves, kept as a FEN some plies
    back plus the moves since (``board()``), enough history for the network input and
    for repetitions, without holding a whole game per turn."""

    turn: int
    priority: int
    base_fen: str
    moves: tuple[chess.Move, ...]
    chess960: bool = False

    def board(self) -> chess.Board:
        board = chess.Board(self.base_fen, chess960=self.chess960)
        for move in self.moves:
            board.push(move)
        return board


@dataclasses.dataclass(frozen=True)
class Query:
    """A validated analysis query: one search per turn in ``turns``."""

    id: str
    turns: tuple[TurnSpec, ...]
    config: SearchConfig
    max_visits: int
    pv_len: int
    include_policy: bool
    include_pv_visits: bool
    report_every: float | None
    first_report_after: float | None
    seed: int
    perspective: str
    move_filters: tuple[MoveFilterEntry, ...]


@dataclasses.dataclass(frozen=True)
class Action:
    """A special action; ``echo`` is the request as received (the acknowledgement)."""

    id: str
    name: str
    echo: dict[str, Any]
    terminate_id: str | None = None
    turn_numbers: frozenset[int] | None = None


@dataclasses.dataclass
class Parsed:
    """The outcome of one input line: the item to act on (None after an error) and the
    messages to write now (an error, or warnings)."""

    item: Query | Action | None
    messages: list[dict[str, Any]]


def error_message(message: str, field: str | None = None, query_id: str | None = None
                  ) -> dict[str, Any]:
    out: dict[str, Any] = {"error": message}
    if field is not None:
        out["field"] = field
    if query_id is not None:
        out["id"] = query_id
    return out


def warning_message(message: str, field: str, query_id: str) -> dict[str, Any]:
    return {"warning": message, "field": field, "id": query_id}


def quote(value: Any) -> str:
    """``repr``-like quote of bad input, cut to QUOTE_CHARS characters."""
    text = value if isinstance(value, str) else json.dumps(value, default=repr)
    if len(text) > QUOTE_CHARS:
        text = text[:QUOTE_CHARS] + f"... ({len(text)} chars)"
    return repr(text) if isinstance(value, str) else text


# --- JSON -------------------------------------------------------------------------------------

def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:40]} is out of range")
    return value


def decode_json(raw: bytes | str) -> Any:
    """Strict JSON (no NaN/Infinity, finite numbers). Raises ValueError on anything else."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise ValueError(f"input line is not valid UTF-8 ({err.reason} at byte "
                             f"{err.start})") from None
    try:
        return json.loads(raw.lstrip("\ufeff"), parse_constant=_reject_constant,
                          parse_float=_finite_float)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


# --- typed field readers ---------------------------------------------------------------------

def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def _int(obj: dict, field: str, low: int, high: int, label: str | None = None) -> int:
    return as_count(obj[field], field, low, high, exact=True,
                    error=functools.partial(FieldError, label or field))


def _number(obj: dict, field: str, low: float, high: float) -> float:
    return as_real(obj[field], field, low, high, error=functools.partial(FieldError, field))


def _bool(obj: dict, field: str) -> bool:
    return as_flag(obj[field], field, error=functools.partial(FieldError, field))


def _int_list(obj: dict, field: str, low: int, high: int) -> list[int]:
    value = obj[field]
    if not isinstance(value, list) or not all(_is_int(x) for x in value):
        raise FieldError(field, f"must be a list of integers, got {quote(value)}")
    for x in value:
        if not low <= x <= high:
            raise FieldError(field, f"value {x} out of range [{low}, {high}]")
    return value


# --- overrideSettings ------------------------------------------------------------------------

_CONFIG_HINTS = typing.get_type_hints(SearchConfig)
_FLOAT32_MAX = 3.4e38
_INT32_MAX = 2**31 - 1


def _fits(value: Any, hint: Any) -> bool:
    """Whether a JSON value fits a SearchConfig annotation (bool is not a number)."""
    options = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    for option in options:
        if option is type(None) and value is None:
            return True
        if option is bool and isinstance(value, bool):
            return True
        if option is int and _is_int(value) and abs(value) <= _INT32_MAX:
            return True
        if option is float and _is_number(value) and abs(value) <= _FLOAT32_MAX:
            return True
        if option is str and isinstance(value, str):
            return True
        if option not in (type(None), bool, int, float, str):
            return True  # a type this reader does not know: SearchConfig checks it
    return False


def _type_name(hint: Any) -> str:
    options = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    names = {bool: "true/false", int: "an integer", float: "a number", str: "a string",
             type(None): "null"}
    return " or ".join(names.get(o, getattr(o, "__name__", str(o))) for o in options)


def _overrides(settings: dict, base: SearchConfig, query_id: str, warnings: list[dict]
               ) -> tuple[SearchConfig, dict[str, Any]]:
    """SearchConfig with the query's overrides (data: never a recompile), and the extra keys."""
    if not isinstance(settings, dict):
        raise FieldError("overrideSettings", f"must be an object, got {quote(settings)}")
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    unknown = []
    for key, value in settings.items():
        if key in _CONFIG_HINTS:
            if not _fits(value, _CONFIG_HINTS[key]):
                raise FieldError("overrideSettings", f"{key} must be "
                                 f"{_type_name(_CONFIG_HINTS[key])}, got {quote(value)}")
            values[key] = value
        elif key in EXTRA_OVERRIDES:
            extra[key] = value
        else:
            unknown.append(key)
    if unknown:
        names = ", ".join(quote(k) for k in unknown)
        warnings.append(warning_message(
            f"unknown overrideSettings key(s) {names}; known keys: "
            f"{', '.join(sorted([*_CONFIG_HINTS, *EXTRA_OVERRIDES]))}",
            "overrideSettings", query_id))
    if not values:
        return base, extra
    try:
        return dataclasses.replace(base, **values), extra
    except (TypeError, ValueError, OverflowError) as err:
        raise FieldError("overrideSettings", f"could not set settings: {err}") from None


# --- moves, turns, history -------------------------------------------------------------------

def _replay(board: chess.Board, moves: Any) -> tuple[list[chess.Move], list[int]]:
    """Legal moves of ``moves`` (UCI) played from ``board``; halfmove clocks after each ply."""
    if not isinstance(moves, list):
        raise FieldError("moves", f"must be a list of UCI moves, got {quote(moves)}")
    if len(moves) > MAX_MOVES:
        raise FieldError("moves", f"too many moves: {len(moves)} (at most {MAX_MOVES})")
    board = board.copy(stack=False)
    played: list[chess.Move] = []
    clocks = [board.halfmove_clock]
    for index, uci in enumerate(moves):
        if not isinstance(uci, str):
            raise FieldError("moves", f"move at index {index} must be a UCI string, "
                             f"got {quote(uci)}")
        try:
            move = board.parse_uci(uci)
            if not move:  # python-chess accepts the null move "0000"; chess does not
                raise chess.IllegalMoveError(uci)
        except chess.IllegalMoveError:
            raise FieldError("moves", f"illegal move {uci} at index {index} "
                             f"(position {board.fen()})") from None
        except ValueError:
            raise FieldError("moves", f"invalid move {quote(uci)} at index {index}: "
                             "not UCI notation") from None
        board.push(move)
        played.append(move)
        clocks.append(board.halfmove_clock)
    return played, clocks


def history_base(turn: int, clocks: list[int]) -> int:
    """The earliest ply a search at ``turn`` can depend on.

    The root keeps REPETITION_WINDOW positions of history for repetitions and the network
    sees INPUT_POSITIONS positions, each with a repetition flag that looks back to the last
    capture or pawn move (``clocks[p]`` plies before ply p): nothing older can repeat.
    """
    first = max(0, turn - INPUT_POSITIONS + 1)
    oldest_repeatable = min(p - clocks[p] for p in range(first, turn + 1))
    return max(0, min(turn - REPETITION_WINDOW, oldest_repeatable))


def _turn_specs(start: chess.Board, moves: list[chess.Move], clocks: list[int],
                turns: list[int], priorities: dict[int, int]) -> tuple[TurnSpec, ...]:
    bases = {t: history_base(t, clocks) for t in turns}
    wanted = set(bases.values())
    fens: dict[int, str] = {}
    board = start.copy(stack=False)
    for ply in range(max(wanted) + 1):
        if ply in wanted:
            fens[ply] = board.fen(en_passant="fen")
        if ply < len(moves):
            board.push(moves[ply])
    return tuple(TurnSpec(t, priorities[t], fens[bases[t]], tuple(moves[bases[t]:t]),
                          start.chess960) for t in turns)


def _move_filters(query: dict) -> tuple[MoveFilterEntry, ...]:
    has_allow, has_avoid = "allowMoves" in query, "avoidMoves" in query
    if has_allow and has_avoid:
        raise FieldError("allowMoves", "cannot specify both allowMoves and avoidMoves")
    if not (has_allow or has_avoid):
        return ()
    field = "allowMoves" if has_allow else "avoidMoves"
    entries = query[field]
    shape = "must be a list of objects {\"moves\": [UCI moves], \"untilDepth\": n}"
    if not isinstance(entries, list):
        raise FieldError(field, f"{shape}, got {quote(entries)}")
    if has_allow and len(entries) > 1:
        raise FieldError(field, "allowMoves takes at most one entry")
    out = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or "moves" not in entry:
            raise FieldError(field, f"entry {i}: {shape}, got {quote(entry)}")
        unknown = sorted(set(entry) - {"moves", "untilDepth"})
        if unknown:
            raise FieldError(field, f"entry {i}: unknown key(s) {unknown} (chess moves name "
                             "their squares; there is no 'player')")
        moves = entry["moves"]
        if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
            raise FieldError(field, f"entry {i}: moves must be a list of UCI strings, "
                             f"got {quote(moves)}")
        parsed = []
        for uci in moves:
            try:
                move = chess.Move.from_uci(uci)
            except ValueError:
                raise FieldError(field, f"entry {i}: invalid move {quote(uci)}: "
                                 "not UCI notation") from None
            if not move:
                raise FieldError(field, f"entry {i}: the null move {quote(uci)} is not a move")
            parsed.append(move)
        depth = _int(entry, "untilDepth", 1, MAX_UNTIL_DEPTH, label=field) \
            if "untilDepth" in entry else 1
        out.append(MoveFilterEntry(tuple(parsed), depth, has_allow))
    return tuple(out)


# --- the line parser -------------------------------------------------------------------------

def parse_line(raw: bytes | str, settings: EngineSettings) -> Parsed:
    """Read one input line (without judging whether the engine can run it: see
    ``Engine``). Never raises for bad input."""
    try:
        request = decode_json(raw)
    except ValueError as err:
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        return Parsed(None, [error_message(
            f"could not parse input line as json request: {err}; line: {quote(text.strip())}")])
    if not isinstance(request, dict):
        return Parsed(None, [error_message(
            f"request line was valid json but was not an object: {quote(request)}")])
    query_id = request.get("id")
    if not isinstance(query_id, str):
        return Parsed(None, [error_message(
            f"request must have a string \"id\" field, got {quote(query_id)}", "id")])
    try:
        if "action" in request:
            return Parsed(_parse_action(request, query_id), [])
        warnings: list[dict[str, Any]] = []
        query = _parse_query(request, query_id, settings, warnings)
    except FieldError as err:
        return Parsed(None, [error_message(err.message, err.field, query_id)])
    if settings.warn_unused_fields:
        for key in request:
            if key not in QUERY_FIELDS:
                warnings.append(warning_message(
                    "unexpected or unused field, do you have a typo?", key, query_id))
    return Parsed(query, warnings)


def _parse_action(request: dict, query_id: str) -> Action:
    name = request["action"]
    if name not in ACTIONS:
        raise FieldError("action", f"'action' must be one of {', '.join(ACTIONS)}, "
                         f"got {quote(name)}")
    terminate_id = None
    if name == "terminate":
        terminate_id = request.get("terminateId")
        if not isinstance(terminate_id, str):
            raise FieldError("terminateId", "a terminate action needs a string \"terminateId\"")
    turn_numbers = None
    if name in ("terminate", "terminate_all") and "turnNumbers" in request:
        value = request["turnNumbers"]
        if not isinstance(value, list) or not all(_is_int(x) for x in value):
            raise FieldError("turnNumbers", "if given, must be a list of integers (turns to "
                             f"terminate), got {quote(value)}")
        turn_numbers = frozenset(value)
    return Action(query_id, name, request, terminate_id, turn_numbers)


def _parse_query(request: dict, query_id: str, settings: EngineSettings,
                 warnings: list[dict[str, Any]]) -> Query:
    if "moves" not in request:
        raise FieldError("moves", "required: a list of UCI moves (may be empty)")
    fen = request.get("initialFen", "startpos")
    if not isinstance(fen, str):
        raise FieldError("initialFen", f"must be a FEN string, got {quote(fen)}")
    if len(fen) > MAX_FEN_CHARS:
        raise FieldError("initialFen", f"not a FEN: {quote(fen)}")
    try:
        start = parse_position(fen)
    except UserError as err:
        raise FieldError("initialFen", str(err)) from None
    # types first, ranges once the number of moves is known
    turns_given = "analyzeTurns" in request
    if turns_given:
        turns_raw = _int_list(request, "analyzeTurns", 0, MAX_MOVES)
    priority = 0
    priorities_raw = None
    if "priorities" in request:
        if "priority" in request:
            raise FieldError("priority", "cannot specify both priority and priorities")
        if not turns_given:
            raise FieldError("priorities", "can only be given together with analyzeTurns")
        priorities_raw = _int_list(request, "priorities", -PRIORITY_LIMIT, PRIORITY_LIMIT)
        if len(priorities_raw) != len(turns_raw):
            raise FieldError("priorities", f"must have one entry per analyzeTurns entry "
                             f"({len(turns_raw)}), got {len(priorities_raw)}")
    elif "priority" in request:
        priority = _int(request, "priority", -PRIORITY_LIMIT, PRIORITY_LIMIT)

    config, extra = settings.search, {}
    if "overrideSettings" in request:
        config, extra = _overrides(request["overrideSettings"], settings.search, query_id,
                                   warnings)
    max_visits = settings.max_visits
    for source, holder in (("overrideSettings", extra), ("maxVisits", request)):
        if "maxVisits" in holder:
            max_visits = _int(holder, "maxVisits", 1, MAX_VISITS, label=source)
    if max_visits > settings.tree_nodes:
        warnings.append(warning_message(
            f"maxVisits {max_visits} is more than a tree of this engine holds; searching "
            f"{settings.tree_nodes} (start the engine with a larger --max-nodes)",
            "maxVisits", query_id))
        max_visits = settings.tree_nodes
    perspective = settings.report_analysis_winrates_as
    if "reportAnalysisWinratesAs" in extra:
        value = extra["reportAnalysisWinratesAs"]
        if not isinstance(value, str) or value.upper() not in PERSPECTIVES:
            raise FieldError("overrideSettings", "reportAnalysisWinratesAs must be one of "
                             f"{', '.join(PERSPECTIVES)}, got {quote(value)}")
        perspective = value.upper()
    pv_len = settings.analysis_pv_len
    if "analysisPVLen" in request:
        pv_len = _int(request, "analysisPVLen", 1, MAX_PV_LEN)
    if "rootFpuReductionMax" in request:
        value = _number(request, "rootFpuReductionMax", 0.0, 2.0)
        config = dataclasses.replace(config, fpu_value_root=value, fpu_absolute_root=False)
    if "rootPolicyTemperature" in request:
        _number(request, "rootPolicyTemperature", 0.01, 100.0)
        # TODO(core): a root-only policy temperature (KataGo rootPolicyTemperature).
        raise FieldError("rootPolicyTemperature", "not supported yet: the search has one policy "
                         "temperature for all nodes (overrideSettings.policy_temperature)")
    include_policy = _bool(request, "includePolicy") if "includePolicy" in request else False
    include_pv_visits = (_bool(request, "includePVVisits") if "includePVVisits" in request
                         else False)
    report_every = first_report = None
    if "reportDuringSearchEvery" in request:
        report_every = _number(request, "reportDuringSearchEvery", MIN_SECONDS, MAX_SECONDS)
        first_report = report_every
    if "firstReportDuringSearchAfter" in request:
        first_report = _number(request, "firstReportDuringSearchAfter", MIN_SECONDS,
                               MAX_SECONDS)
    seed = settings.seed
    if "seed" in request:
        seed = as_seed(request["seed"], "seed", error=functools.partial(FieldError, "seed"))
    filters = _move_filters(request)

    moves, clocks = _replay(start, request["moves"])
    if turns_given:
        for t in turns_raw:
            if t > len(moves):
                raise FieldError("analyzeTurns", f"invalid turn number {t}: the game has "
                                 f"{len(moves)} moves (turns 0 to {len(moves)})")
        if not turns_raw:
            warnings.append(warning_message("analyzeTurns is empty: nothing to analyse",
                                            "analyzeTurns", query_id))
        prio = dict(zip(turns_raw, priorities_raw or [priority] * len(turns_raw), strict=True))
        turns = sorted(set(turns_raw))
    else:
        turns = [len(moves)]
        prio = {len(moves): priority}
    specs = _turn_specs(start, moves, clocks, turns, prio) if turns else ()
    return Query(
        id=query_id, turns=specs, config=config, max_visits=max_visits, pv_len=pv_len,
        include_policy=include_policy, include_pv_visits=include_pv_visits,
        report_every=report_every, first_report_after=first_report, seed=seed,
        perspective=perspective, move_filters=filters,
    )
