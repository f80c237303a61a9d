"""``run_selfplay``: a self-play config -> DIR/games.pgn, games.csv, summary."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from zerochess.selfplay._api import load_model
from zerochess.selfplay.config import GameConfigError, PlayerSpec, SelfPlayConfig
from zerochess.selfplay.openings import build_openings
from zerochess.selfplay.records import GameWriter, read_games_csv
from zerochess.selfplay.rundir import prepare_run_dir, write_json
from zerochess.selfplay.runner import GameSpec, RunStats, play_games
from zerochess.selfplay.seeding import game_seed

_MODELS: dict[str, Any] = {}


def get_model(name: str) -> Any:
    """``load_model(name)``, cached per name; a bad name or path is a ``GameConfigError``."""
    if name not in _MODELS:
        if name.endswith(".pb.gz") and not Path(name).expanduser().is_file():
            raise GameConfigError(f"model file not found: {name}")
        try:
            _MODELS[name] = load_model(name)
        except (FileNotFoundError, ValueError, KeyError) as e:
            raise GameConfigError(f"cannot load model {name!r}: {e}") from None
    return _MODELS[name]


@dataclasses.dataclass
class RunReport:
    """What a run produced: the output folder, all its games (CSV rows), throughput."""

    out_dir: Path
    rows: list[dict[str, str]]
    stats: RunStats
    played: int  # games played by this call (the rest were already in the folder)


def unique_players(a: PlayerSpec, b: PlayerSpec) -> tuple[PlayerSpec, PlayerSpec]:
    """The two players with distinct names (equal names of different configs get suffixes)."""
    if a.name == b.name and a != b:
        return (dataclasses.replace(a, name=f"{a.name}-1"),
                dataclasses.replace(b, name=f"{b.name}-2"))
    return a, b


def selfplay_specs(config: SelfPlayConfig) -> tuple[list[GameSpec], dict[str, PlayerSpec]]:
    """The games of a self-play config (colours alternate when asked, openings paired)."""
    white, black = unique_players(config.white, config.black)
    players = {white.name: white, black.name: black}
    if config.alternate_colors:
        pairs = (config.games + 1) // 2
        openings = build_openings(config.openings, pairs, config.seed)
        opening_of = [openings[g // 2] for g in range(config.games)]
    else:
        opening_of = build_openings(config.openings, config.games, config.seed)
    specs = []
    for g in range(config.games):
        w, b = (white.name, black.name)
        if config.alternate_colors and g % 2 == 1:
            w, b = b, w
        specs.append(GameSpec(g, w, b, opening_of[g], game_seed(config.seed, g)))
    return specs, players


def run_games(out_dir: str | Path, resolved: Mapping[str, Any], specs: list[GameSpec],
              players: Mapping[str, PlayerSpec], model_name: str, *, batch_size: int,
              max_plies: int | None, pgn_comments: bool = True, progress: bool = True,
              description: str = "games", event: str = "zerochess",
              stop_after: int | None = None, shrink_tail: bool | None = None) -> RunReport:
    """Play ``specs`` into ``out_dir`` (resuming what is there) and return every game."""
    out = prepare_run_dir(out_dir, dict(resolved))
    tag_fields = sorted({k for s in specs for k in s.tags})
    needs_model = any(not p.is_engine for p in players.values())
    model = get_model(model_name) if needs_model else None
    with GameWriter(out, tag_fields, pgn_comments=pgn_comments, event=event) as writer:
        records, stats = play_games(specs, players, model, batch_size=batch_size,
                                    max_plies=max_plies, writer=writer, progress=progress,
                                    description=description, stop_after=stop_after,
                                    shrink_tail=shrink_tail)
    summary = stats.summary()
    if records:
        write_json(out / "throughput.json", summary)
    return RunReport(out, read_games_csv(out / "games.csv"), stats, len(records))


def run_selfplay(config: SelfPlayConfig, out_dir: str | Path, *, progress: bool = True,
                 stop_after: int | None = None) -> RunReport:
    """Play a self-play config into ``out_dir`` (games.pgn, games.csv, config.yaml, ...)."""
    specs, players = selfplay_specs(config)
    return run_games(out_dir, config.to_dict(), specs, players, config.model,
                     batch_size=config.batch_size, max_plies=config.max_plies,
                     pgn_comments=config.pgn_comments, progress=progress,
                     description=config.name, event=f"zerochess selfplay {config.name}",
                     stop_after=stop_after, shrink_tail=config.shrink_tail)
