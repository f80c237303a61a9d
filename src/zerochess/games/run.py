"""Playing a list of games into a run folder: games.pgn, games.csv, config.yaml,
versions.yaml and throughput.json; an existing folder of the same config is resumed."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from zerochess.errors import ConfigError, quote
from zerochess.games.checkpoints import DEFAULT_INTERVAL_S, GameCheckpoints
from zerochess.games.config import PlayerSpec, RunConfig
from zerochess.games.loop import GameSpec, RunStats, play_games
from zerochess.games.players import get_model
from zerochess.games.records import GameRecord, GameWriter, read_games_csv
from zerochess.runs import prepare_run_dir, write_json


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


def play_into(out_dir: Path, specs: Sequence[GameSpec], players: Mapping[str, PlayerSpec],
              model_name: str, *, batch_size: int, max_plies: int | None,
              pgn_comments: bool = True, progress: bool = True, description: str = "games",
              event: str = "zerochess", stop_after: int | None = None,
              shrink_tail: bool | None = None,
              checkpoint_interval: float = DEFAULT_INTERVAL_S, rules: str | None = None
              ) -> tuple[list[GameRecord], RunStats]:
    """Play ``specs`` into the games files of ``out_dir``, skipping the games already there
    and continuing the games in play when a run stopped from their saved moves
    (``unfinished.json``, saved every ``checkpoint_interval`` seconds and when play stops:
    ``games.checkpoints``).

    Several calls may share one folder (e.g. an experiment's node counts); each compiles
    for its own ``max_nodes``; ``rules``: where the searches' chess rules run (``host`` or
    ``device``). Returns the games played now and their throughput.
    """
    tag_fields = sorted({k for s in specs for k in s.tags})
    needs_model = any(not p.is_engine for p in players.values())
    model = get_model(model_name) if needs_model else None
    with GameWriter(out_dir, tag_fields, pgn_comments=pgn_comments, event=event) as writer:
        for note in writer.notes:
            print(f"resume: {note}", file=sys.stderr)
        check_resumed_games(out_dir, specs, writer.rows)
        checkpoints = GameCheckpoints(out_dir, checkpoint_interval)
        try:
            return play_games(specs, players, model, batch_size=batch_size,
                              max_plies=max_plies, writer=writer, progress=progress,
                              description=description, stop_after=stop_after,
                              shrink_tail=shrink_tail, checkpoints=checkpoints,
                              rules=rules)
        finally:
            for note in checkpoints.notes:
                print(f"resume: {note}", file=sys.stderr)
            if checkpoints.restored:
                print(f"resume: {len(checkpoints.restored)} game(s) continued from their "
                      "saved moves", file=sys.stderr)


def check_resumed_games(out_dir: Path, specs: Sequence[GameSpec],
                        rows: Mapping[int, Mapping[str, str]]) -> None:
    """Refuse (``ConfigError``) a folder whose finished games are not this run's: each
    finished game of a spec's index must have the spec's players, seed, opening, start
    position and tags (this also catches a missing or rewritten ``config.yaml``)."""
    for spec in specs:
        row = rows.get(spec.index)
        if row is None:
            continue
        want = {"white": spec.white, "black": spec.black, "seed": spec.seed,
                "opening": spec.opening.name, "start_fen": spec.opening.start_board().fen(),
                **spec.tags}
        for key, value in want.items():
            if str(row.get(key)) != str(value):
                raise ConfigError(
                    f"{out_dir} holds game {spec.index} of another run ({key} "
                    f"{quote(row.get(key))}, this run has {quote(str(value))}); choose "
                    "another output folder or delete it")


def run_games(config: RunConfig, out_dir: str | Path, specs: Sequence[GameSpec],
              players: Mapping[str, PlayerSpec], *, event: str, progress: bool = True,
              stop_after: int | None = None, force: bool = False,
              rules: str | None = None) -> RunReport:
    """Play the games of ``config`` into ``out_dir`` (resuming what is there) and return
    every game of the folder. ``stop_after`` stops after that many finished games;
    ``force`` resumes a folder made under other versions (recorded in versions.yaml);
    ``rules``: where the searches' chess rules run (``host``, ``device``; None: the
    Searcher's default), not part of the run: both play the same games.

    The model is loaded first: a bad model path is an error before anything is written,
    so fixing it and running again works."""
    if any(not p.is_engine for p in players.values()):
        get_model(config.model)
    out = prepare_run_dir(out_dir, config.to_dict(), force=force)  # type: ignore[attr-defined]
    records, stats = play_into(
        out, specs, players, config.model, batch_size=config.batch_size,
        max_plies=config.max_plies, pgn_comments=config.pgn_comments, progress=progress,
        description=config.name, event=event, stop_after=stop_after,
        shrink_tail=config.shrink_tail, rules=rules)
    if records:
        write_json(out / "throughput.json", stats.summary())
    return RunReport(out, read_games_csv(out / "games.csv"), stats, len(records))
