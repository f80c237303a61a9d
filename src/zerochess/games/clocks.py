"""Real clocks for games between UCI engines: a time control (base + increment per side),
the clock of one game, and the time-use record of a run (PGN ``[%clk]`` / ``[%emt]``)."""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from typing import Any

import chess

from zerochess.errors import ConfigError, quote

TIME_FORFEIT = "time_forfeit"  # the termination of a game lost (or drawn) on time

_TC = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*(?:\+\s*(\d+(?:\.\d*)?))?\s*$")


@dataclasses.dataclass(frozen=True)
class TimeControl:
    """Base time and increment per move, per side, in milliseconds."""

    base_ms: int
    increment_ms: int = 0

    @classmethod
    def parse(cls, value: Any, where: str = "time_control") -> TimeControl:
        """From ``"10+0.1"`` (seconds, cutechess / PGN syntax), a number of seconds, or
        ``{base: 10, increment: 0.1}``; anything else is a ``ConfigError`` quoting it."""
        if isinstance(value, TimeControl):
            return value
        if isinstance(value, Mapping):
            unknown = sorted(str(k) for k in value if k not in ("base", "increment"))
            if unknown or "base" not in value:
                raise ConfigError(f"{where} needs `base` (s) and optional `increment` (s), "
                                  f"got {quote(dict(value))}")
            base, inc = value["base"], value.get("increment", 0)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            base, inc = value, 0
        elif isinstance(value, str) and (m := _TC.match(value)):
            base, inc = float(m.group(1)), float(m.group(2) or 0)
        else:
            raise ConfigError(f"{where} must look like '10+0.1' (base+increment in seconds), "
                              f"got {quote(value)}")
        for name, v in (("base", base), ("increment", inc)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                    or v < 0:
                raise ConfigError(f"{where}: {name} must be a number of seconds >= 0, "
                                  f"got {quote(v)}")
        if base <= 0:
            raise ConfigError(f"{where}: base must be > 0 seconds, got {quote(base)}")
        return cls(round(float(base) * 1000), round(float(inc) * 1000))

    def pgn(self) -> str:
        """The PGN ``TimeControl`` tag (seconds): ``10+0.1``."""
        return f"{_seconds(self.base_ms)}+{_seconds(self.increment_ms)}"

    def __str__(self) -> str:
        return self.pgn()


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.3f}".rstrip("0").rstrip(".")


@dataclasses.dataclass
class GameClock:
    """The two clocks of one game (milliseconds left per colour)."""

    white: TimeControl
    black: TimeControl
    left_ms: dict[bool, float] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.left_ms:
            self.left_ms = {chess.WHITE: float(self.white.base_ms),
                            chess.BLACK: float(self.black.base_ms)}

    def control(self, color: bool) -> TimeControl:
        return self.white if color == chess.WHITE else self.black

    def limit_kwargs(self) -> dict[str, float]:
        """``chess.engine.Limit`` keywords (seconds) for the next ``go``."""
        return {"white_clock": self.left_ms[chess.WHITE] / 1000,
                "black_clock": self.left_ms[chess.BLACK] / 1000,
                "white_inc": self.white.increment_ms / 1000,
                "black_inc": self.black.increment_ms / 1000}

    def punch(self, color: bool, used_ms: float) -> bool:
        """Charge ``used_ms`` to ``color``; False when it exceeded the time left (a flag:
        the clock is left at 0). Otherwise the increment is added."""
        if used_ms > self.left_ms[color]:
            self.left_ms[color] = 0.0
            return False
        self.left_ms[color] += self.control(color).increment_ms - used_ms
        return True


def flag_result(board: chess.Board, flagged: bool) -> str:
    """The result when ``flagged`` runs out of time in ``board``: a loss, or a draw when
    the opponent has no mating material (FIDE 6.9)."""
    if board.has_insufficient_material(not flagged):
        return "1/2-1/2"
    return "0-1" if flagged == chess.WHITE else "1-0"
