"""The search-contempt paper's adaptive training schedule (Joshi, sec. 4.2.5, Fig. 6)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from zerochess.errors import ConfigError


@dataclasses.dataclass(frozen=True)
class NsclScheduleConfig:
    """Options of the adaptive N_scl schedule."""

    enabled: bool = False
    initial_n_scl: int = 5  # the paper starts at 5 with N = 1000
    target_low: float = 0.8  # band of (w + l) / d
    target_high: float = 1.25
    factor: float = 1.5  # N_scl is multiplied / divided by this (rounded, moves >= 1)
    min_n_scl: int = 1
    max_n_scl: int = 100_000
    min_games: int = 1  # generations with fewer decisive-or-drawn games do not move it
    stable_generations: int = 0  # double N after this many generations unchanged (0 = never)
    max_nodes: int | None = None  # cap of the nodes per move when doubling

    def __post_init__(self) -> None:
        if not 0 < self.target_low <= self.target_high:
            raise ConfigError("nscl_schedule: need 0 < target_low <= target_high, got "
                             f"{self.target_low}, {self.target_high}")
        if self.factor <= 1:
            raise ConfigError(f"nscl_schedule.factor must be > 1, got {self.factor}")
        if not 1 <= self.min_n_scl <= self.initial_n_scl <= self.max_n_scl:
            raise ConfigError("nscl_schedule: need 1 <= min_n_scl <= initial_n_scl <= "
                             "max_n_scl")
        if self.stable_generations < 0 or self.min_games < 1:
            raise ConfigError("nscl_schedule: stable_generations must be >= 0 and "
                             "min_games >= 1")


@dataclasses.dataclass(frozen=True)
class NsclState:
    """Where the schedule stands: the N_scl and nodes for the next generation."""

    n_scl: int
    nodes: int
    unchanged: int = 0  # generations in a row without an N_scl change

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> NsclState:
        return cls(int(values["n_scl"]), int(values["nodes"]), int(values["unchanged"]))


def decisive_ratio(wins: int, draws: int, losses: int) -> float:
    """``(w + l) / d`` (inf when there are decisive games and no draws; nan for none)."""
    if draws == 0:
        return math.inf if wins + losses else math.nan
    return (wins + losses) / draws


def next_state(config: NsclScheduleConfig, state: NsclState, wins: int, draws: int,
               losses: int) -> NsclState:
    """The schedule's state after a generation whose self-play went W/D/L.

    A ratio above ``target_high`` raises N_scl by ``factor``, one below ``target_low``
    lowers it (rounded, always by at least 1, clipped to [min_n_scl, max_n_scl]).
    """
    if not config.enabled:
        return state
    ratio = decisive_ratio(wins, draws, losses)
    n = state.n_scl
    if wins + draws + losses >= config.min_games and not math.isnan(ratio):
        if ratio > config.target_high:
            n = max(n + 1, round(n * config.factor))
        elif ratio < config.target_low:
            n = min(n - 1, round(n / config.factor))
        n = min(max(n, config.min_n_scl), config.max_n_scl)
    unchanged = state.unchanged + 1 if n == state.n_scl else 0
    nodes = state.nodes
    if config.stable_generations and unchanged >= config.stable_generations:
        doubled = nodes * 2
        if config.max_nodes is None or doubled <= config.max_nodes:
            nodes, unchanged = doubled, 0
    return NsclState(n, nodes, unchanged)


__all__ = ["NsclScheduleConfig", "NsclState", "decisive_ratio", "next_state"]
