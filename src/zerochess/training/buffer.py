"""Replay buffer: the examples of the most recent games (a window counted in games, as lc0's
"newest N chunks"); training batches are drawn uniformly over the window's positions."""

from __future__ import annotations

import collections
from collections.abc import Iterable
from typing import Any

import numpy as np

from zerochess.errors import ConfigError, UserError
from zerochess.training.examples import Examples, check_examples, concat_examples


class ReplayBuffer:
    """The last ``window_games`` games' examples.

    Args:
      window_games: how many of the newest games are kept (older ones drop out).
    """

    def __init__(self, window_games: int) -> None:
        if window_games < 1:
            raise ConfigError(f"window_games must be >= 1, got {window_games}")
        self.window_games = int(window_games)
        self._games: collections.deque[Examples] = collections.deque()
        self.games_added = 0  # every game ever added (also those out of the window)
        self._flat: Examples | None = None

    def add_game(self, examples: Examples) -> None:
        """Add one game's examples (possibly none: a game of only book or engine moves)."""
        check_examples(examples)
        self._games.append(examples)
        self.games_added += 1
        while len(self._games) > self.window_games:
            self._games.popleft()
        self._flat = None

    def add_games(self, games: Iterable[Examples]) -> None:
        for g in games:
            self.add_game(g)

    @property
    def num_games(self) -> int:
        """Games in the window."""
        return len(self._games)

    def __len__(self) -> int:
        """Positions in the window."""
        return sum(len(g) for g in self._games)

    def examples(self) -> Examples:
        """All examples in the window, oldest game first."""
        if self._flat is None:
            self._flat = concat_examples(list(self._games))
        return self._flat

    def sample(self, batch_size: int, rng: np.random.Generator) -> Examples:
        """``batch_size`` examples drawn uniformly (with replacement) from the window."""
        flat = self.examples()
        if len(flat) == 0:
            raise UserError("cannot sample from an empty replay buffer")
        return flat.take(rng.integers(0, len(flat), size=batch_size))

    # --- saving ----------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """The buffer as arrays (for checkpoints): examples, per-game lengths, counters."""
        lengths = np.array([len(g) for g in self._games], np.int64)
        return {"examples": self.examples()._asdict(), "game_lengths": lengths,
                "games_added": np.int64(self.games_added),
                "window_games": np.int64(self.window_games)}

    @classmethod
    def from_state_dict(cls, state: dict[str, Any]) -> ReplayBuffer:
        """The inverse of ``state_dict``."""
        buf = cls(int(state["window_games"]))
        flat = Examples(**{k: np.asarray(v) for k, v in state["examples"].items()})
        check_examples(flat)
        lengths = np.asarray(state["game_lengths"], np.int64)
        if int(lengths.sum()) != len(flat):
            raise UserError("replay buffer state: game lengths do not add up to the examples")
        start = 0
        for n in lengths:
            buf._games.append(flat.take(slice(start, start + int(n))))
            start += int(n)
        buf.games_added = int(state["games_added"])
        return buf


__all__ = ["ReplayBuffer"]
