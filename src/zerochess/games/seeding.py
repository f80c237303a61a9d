"""Seed derivation: every random choice flows from the run seed via (game, ply, purpose)."""

from __future__ import annotations

import numpy as np


def derive_seed(*parts: int) -> int:
    """A 31-bit seed from integers, stable across platforms and runs (numpy SeedSequence)."""
    words = np.random.SeedSequence([int(p) & 0xFFFFFFFFFFFFFFFF for p in parts])
    return int(words.generate_state(1, np.uint32)[0]) & 0x7FFFFFFF


def game_seed(run_seed: int, game_index: int) -> int:
    """The seed of game ``game_index`` of a run (independent of batch slots)."""
    return derive_seed(run_seed, game_index, 0x6A3E)


def search_seed(seed_of_game: int, ply: int) -> int:
    """The search seed of one move (Dirichlet noise, search-contempt sampling)."""
    return derive_seed(seed_of_game, ply, 0x5EA5)


def move_rng(seed_of_game: int, ply: int) -> np.random.Generator:
    """The generator for the temperature move choice of one move."""
    return np.random.default_rng([seed_of_game, ply, 0x7E3F])
