"""Mid-game checkpoints (``games.checkpoints``): a self-play experiment interrupted while
games are in play, then resumed, writes exactly the games of an uninterrupted run, and
the resumed games continue from their saved moves (the searches of the two parts add up
to those of the uninterrupted run: nothing is replayed).

Cheap: the built-in evaluator, 16 nodes per move, the Searcher shape of
``test_selfplay`` (batch 8, 17 nodes) and the scan of ``test_device_loop``, six short
games of search-contempt self-play (``contempt_wdl``'s points: its temperature, N_scl 1
and plain PUCT).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import chess
import pytest

from zerochess.experiments import contempt_wdl
from zerochess.experiments.common import selfplay_specs
from zerochess.games.checkpoints import CHECKPOINT_FILE, GameCheckpoints
from zerochess.games.loop import play_games
from zerochess.games.players import get_model
from zerochess.games.records import GameWriter, read_games_csv, read_pgn_games
from zerochess.games.run import play_into

pytestmark = pytest.mark.tier2  # whole self-play runs, interrupted and resumed

# games of different lengths: a mate in one, a queen against a bare king, the start
FENS = ["r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 2 3",
        "8/8/8/4k3/8/8/8/4K2Q w - - 0 1", chess.STARTING_FEN]
CFG = {"seed": 5, "n_scl": [1, 1000000], "nodes": 16, "games_per_point": 3,
       "temperature": "sc", "search": {}, "openings": {"type": "fens", "fens": FENS}}
MAX_PLIES = 30


def _plan():
    return selfplay_specs(CFG, contempt_wdl.points(CFG))


def _play(out: Path, **kwargs):
    players, specs = _plan()
    return play_into(out, specs, players, "builtin", batch_size=8, max_plies=MAX_PLIES,
                     progress=False, **kwargs)


def _games(out: Path) -> dict[int, tuple[dict, str]]:
    """Each game's CSV row and PGN text, by index (files list games in finishing order)."""
    rows = {int(r["index"]): r for r in read_games_csv(out / "games.csv")}
    pgns = {int(g.headers["GameIndex"]): str(g) for g in read_pgn_games(out / "games.pgn")}
    assert set(rows) == set(pgns)
    return {i: (rows[i], pgns[i]) for i in rows}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("midgame") / "full"
    records, stats = _play(out)
    assert len(records) == 6 and not (out / CHECKPOINT_FILE).exists()
    assert len({len(r.moves) for r in records}) >= 2  # games end at different plies
    return out, stats


def test_interrupted_games_continue_where_they_stopped(uninterrupted, tmp_path):
    """Ctrl-C in the middle of a step (some games of the step have moved, others not):
    the games in play are saved and continue; the result is the uninterrupted run's."""
    full, full_stats = uninterrupted
    out = tmp_path / "part"
    players, specs = _plan()
    searched = []

    def interrupt(spec, ply, result, move):
        if ply >= 12:
            raise KeyboardInterrupt
        searched.append(spec.index)

    with pytest.raises(KeyboardInterrupt), GameWriter(out, ["n_scl"]) as writer:
        play_games(specs, players, get_model("builtin"), batch_size=8, max_plies=MAX_PLIES,
                   writer=writer, on_search=interrupt, checkpoints=GameCheckpoints(out))
    saved = json.loads((out / CHECKPOINT_FILE).read_text())["games"]
    finished = {int(r["index"]) for r in read_games_csv(out / "games.csv")}
    assert finished and {g["index"] for g in saved} == set(range(6)) - finished
    assert all(10 < len(g["moves"]) < MAX_PLIES for g in saved)
    records, stats = _play(out)
    assert {r.index for r in records} == set(range(6)) - finished
    assert _games(out) == _games(full)
    # continued, not replayed: the two parts searched exactly the positions of one run
    assert len(searched) + stats.positions == full_stats.positions
    assert not (out / CHECKPOINT_FILE).exists()  # nothing in play any more


def test_a_hard_kill_loses_at_most_the_last_step(uninterrupted, tmp_path):
    """A kill without clean-up (SIGKILL): the folder as it was in the middle of a step,
    with the checkpoint saved after the step before (interval 0), resumes to the same
    games."""
    full, full_stats = uninterrupted
    out, killed = tmp_path / "run", tmp_path / "killed"
    players, specs = _plan()

    def snapshot(spec, ply, result, move):
        if ply >= 15 and not killed.exists():
            shutil.copytree(out, killed)

    with GameWriter(out, ["n_scl"]) as writer:
        play_games(specs, players, get_model("builtin"), batch_size=8, max_plies=MAX_PLIES,
                   writer=writer, on_search=snapshot, checkpoints=GameCheckpoints(out, 0.0))
    saved = GameCheckpoints(killed).saved
    assert saved and all(len(g.moves) >= 14 for g in saved.values())
    _, stats = _play(killed)
    assert _games(killed) == _games(full)
    assert stats.positions < full_stats.positions  # the saved moves were not searched again


@pytest.mark.parametrize("damage", ["garbage", "foreign", "illegal", "stats"])
def test_a_bad_checkpoint_replays_the_game(uninterrupted, tmp_path, damage, capsys):
    """A damaged or foreign checkpoint is never trusted: the games start again (same
    result), with a note."""
    full, _ = uninterrupted
    out = tmp_path / "part"
    _play(out, stop_after=2)
    path = out / CHECKPOINT_FILE
    data = json.loads(path.read_text())
    if damage == "garbage":
        path.write_bytes(b"\xff{not json")
    else:
        for g in data["games"]:
            if damage == "foreign":
                g["seed"] += 1
            elif damage == "illegal":
                g["moves"][-1] = "e1e8"
            else:
                g["stats"][-1]["q"] = "x"
        path.write_text(json.dumps(data))
    _play(out)
    assert _games(out) == _games(full)
    err = capsys.readouterr().err
    assert "start" in err and "continued" not in err, err


def test_only_reproducible_games_are_checkpointed():
    from zerochess.games.checkpoints import checkpointable
    from zerochess.games.config import EngineSpec, PlayerSpec

    plain = PlayerSpec(name="p", nodes=8)
    assert checkpointable(plain, plain)
    assert not checkpointable(plain, PlayerSpec(name="r", nodes=8, tree_reuse=True))
    assert not checkpointable(PlayerSpec(name="e", engine=EngineSpec(kind="stockfish")), plain)


def test_sigterm_stops_a_run_command_as_ctrl_c_does():
    """The run commands (``selfplay``, ``match``, ``experiment``) take a SIGTERM (``timeout``,
    a batch scheduler) as Ctrl-C: ``KeyboardInterrupt``, so the checkpoint is saved."""
    import os
    import signal
    import time

    from zerochess.cli import _sigterm_interrupts, build_parser

    args = build_parser().parse_args(["experiment", "contempt_wdl"])
    assert args.stop_on_sigterm and "games in play are saved" in args.interrupted
    assert not getattr(build_parser().parse_args(["uci"]), "stop_on_sigterm", False)
    previous = signal.getsignal(signal.SIGTERM)
    try:
        _sigterm_interrupts()
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
    finally:
        signal.signal(signal.SIGTERM, previous)


@pytest.mark.parametrize("resume_rules", ["device", "host"])
def test_the_device_loop_stops_and_resumes_to_the_same_games(uninterrupted, tmp_path,
                                                            resume_rules):
    """The device game loop (``games.device_loop``) stopped after its first call saves the
    games in play; resumed on either rules backend, the folder holds the host loop's
    uninterrupted games, and nothing was searched twice."""
    full, full_stats = uninterrupted
    out = tmp_path / "device"
    first, first_stats = _play(out, rules="device", stop_after=1)
    saved = GameCheckpoints(out).saved
    assert first and saved and all(len(g.moves) >= 16 for g in saved.values())
    assert {r.index for r in first}.isdisjoint(saved)
    _, stats = _play(out, rules=resume_rules)
    assert _games(out) == _games(full)
    assert first_stats.positions + stats.positions == full_stats.positions
    assert not (out / CHECKPOINT_FILE).exists()
