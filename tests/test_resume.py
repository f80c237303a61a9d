"""Resuming a run folder whatever subset of its files is damaged or missing.

Writer level (no search): every way to damage ``games.pgn`` / ``games.csv`` in turn, with
the expected set of kept games derived from the damage itself (a game survives iff its
PGN text survives whole). Run level: ``config.yaml``, ``versions.yaml``,
``throughput.json`` deleted or damaged, and a folder holding another run's games.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import chess
import pytest
import yaml

from zerochess.errors import ConfigError, UserError
from zerochess.games import GameRecord, GameWriter, MoveStat, SelfPlayConfig, run_selfplay
from zerochess.games.records import read_games_csv, read_pgn_games

TAGS = ["n_scl", "variant"]
GAMES = [  # (moves, result, termination, max_plies)
    (["e2e4", "e7e5", "g1f3"], "1/2-1/2", "move_cap", 3),
    (["f2f3", "e7e5", "g2g4", "d8h4"], "0-1", "checkmate", None),
    (["d2d4", "d7d5"], "1/2-1/2", "move_cap", 2),
    (["c2c4"], "1/2-1/2", "move_cap", 1),
    (["e2e4", "c7c5", "g1f3", "d7d6"], "1/2-1/2", "move_cap", 4),
]


def record(index: int) -> GameRecord:
    moves, result, termination, cap = GAMES[index]
    board = chess.Board()
    for m in moves:
        board.push_uci(m)
    return GameRecord(index=index, seed=100 + index, white="a", black="b", opening="startpos",
                      start_fen=chess.STARTING_FEN, moves=moves,
                      stats=[MoveStat("search", 9, 0.1, (0.3, 0.4, 0.3), m, 0.5, 0.5, 0.0,
                                      (m,)) for m in moves],
                      result=result, termination=termination, final_fen=board.fen(),
                      tags={"n_scl": index, "variant": "sc"}, max_plies=cap)


@pytest.fixture()
def folder(tmp_path) -> Path:
    out = tmp_path / "run"
    with GameWriter(out, TAGS) as w:
        for i in range(len(GAMES)):
            w.write(record(i))
    return out


def reopen(out: Path) -> GameWriter:
    w = GameWriter(out, TAGS)
    w.close()
    return w


def original(out: Path) -> tuple[str, str]:
    return (out / "games.pgn").read_text(), (out / "games.csv").read_text()


def result_ends(pgn: str) -> list[int]:
    """Offset just past each game's result token (the end of its movetext)."""
    ends, start = [], 0
    for i in range(len(GAMES)):
        start = pgn.index(f'[GameIndex "{i}"]', start)
        result = GAMES[i][1]
        end = pgn.index(f"\n{result}\n", start) + 1 + len(result)
        ends.append(end)
    return ends


@pytest.mark.parametrize("damage", ["missing", "empty", "garbage-header", "binary", "nul"])
def test_csv_damaged_is_rebuilt_from_the_pgn(folder, damage):
    pgn, csv_text = original(folder)
    path = folder / "games.csv"
    if damage == "missing":
        path.unlink()
    elif damage == "empty":
        path.write_text("")
    elif damage == "garbage-header":
        path.write_text("\x00junk,more\n" + csv_text.split("\n", 1)[1])
    elif damage == "binary":
        path.write_bytes(bytes(range(256)) * 4)
    else:
        path.write_text(csv_text.replace("startpos", "start\x00pos", 1))
    w = reopen(folder)
    assert w.completed == set(range(len(GAMES)))
    assert original(folder) == (pgn, csv_text)  # both files exactly as written


def test_csv_cut_anywhere(folder):
    pgn, csv_text = original(folder)
    for cut in range(0, len(csv_text), 7):
        (folder / "games.csv").write_text(csv_text[:cut])
        w = reopen(folder)
        assert w.completed == set(range(len(GAMES))), cut
        assert original(folder) == (pgn, csv_text), cut


def test_pgn_cut_anywhere_keeps_exactly_the_whole_games(folder):
    pgn, csv_text = original(folder)
    ends = result_ends(pgn)
    for cut in list(range(0, len(pgn), 11)) + [e - 1 for e in ends] + ends:
        (folder / "games.pgn").write_text(pgn[:cut])
        (folder / "games.csv").write_text(csv_text)
        w = reopen(folder)
        want = {i for i, end in enumerate(ends) if end <= cut}
        assert w.completed == want, cut
        rows = read_games_csv(folder / "games.csv")
        assert [int(r["index"]) for r in rows] == sorted(want)
        assert [g.headers["GameIndex"] for g in read_pgn_games(folder / "games.pgn")] == [
            str(i) for i in sorted(want)]
        shutil.rmtree(folder)
        with GameWriter(folder, TAGS) as w:
            for i in range(len(GAMES)):
                w.write(record(i))


def test_pgn_missing_means_replay_and_the_csv_is_kept_aside(folder):
    _, csv_text = original(folder)
    (folder / "games.pgn").unlink()
    w = reopen(folder)
    assert w.completed == set() and read_games_csv(folder / "games.csv") == []
    assert (folder / "games.csv.damaged").read_text() == csv_text  # nothing is lost
    assert any("played again" in n for n in w.notes)


@pytest.mark.parametrize("edit", ["drop-a-move", "wrong-result", "wrong-plycount",
                                  "not-utf8", "wrong-termination", "illegal-move"])
def test_a_damaged_pgn_game_is_replayed(folder, edit):
    pgn, _ = original(folder)
    seg_start = pgn.rindex("[Event", 0, pgn.index('[GameIndex "1"]'))
    seg_end = pgn.index("[Event", seg_start + 1)
    seg = pgn[seg_start:seg_end]
    if edit == "drop-a-move":
        new = seg.replace("2. g4", "2.")
    elif edit == "wrong-result":
        new = seg.replace("0-1", "1-0")  # header and token both: the end disagrees with chess
    elif edit == "wrong-plycount":
        new = seg.replace('[PlyCount "4"]', '[PlyCount "5"]')
    elif edit == "not-utf8":
        new = seg.replace("Qh4#", "Q\udcffh4#")
    elif edit == "wrong-termination":
        new = seg.replace('[Termination "checkmate"]', '[Termination "stalemate"]')
    else:
        new = seg.replace("e5", "e4", 1)
    assert new != seg
    data = (pgn[:seg_start] + new + pgn[seg_end:]).encode("utf-8", errors="surrogateescape")
    (folder / "games.pgn").write_bytes(data)
    w = reopen(folder)
    assert w.completed == set(range(len(GAMES))) - {1}
    assert (folder / "games.pgn.damaged").read_bytes() == data


def test_a_game_whose_csv_row_and_pgn_disagree_is_replayed(folder):
    _, csv_text = original(folder)
    (folder / "games.csv").write_text(csv_text.replace("d2d4 d7d5", "d2d4 d7d6"))
    w = reopen(folder)
    assert w.completed == set(range(len(GAMES))) - {2}
    assert "2" not in {r["index"] for r in read_games_csv(folder / "games.csv")}


def test_both_missing_is_a_fresh_start(folder):
    (folder / "games.pgn").unlink()
    (folder / "games.csv").unlink()
    assert reopen(folder).completed == set()


# --- run level ----------------------------------------------------------------------------

def config(**changes) -> SelfPlayConfig:
    p = {"name": "puct", "nodes": 16, "temperature": {"temperature": 1.0,
                                                       "endgame_temperature": 0.5}}
    values = {"name": "r", "model": "builtin", "seed": 3, "games": 4, "batch_size": 8,
              "max_plies": 6, "white": p, "black": {**p, "name": "puct-b"}}
    values.update(changes)
    return SelfPlayConfig.from_dict(values)


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("resume") / "a"
    run_selfplay(config(), out, progress=False)
    return out


@pytest.mark.tier2  # a whole self-play run
@pytest.mark.parametrize("damage", ["config-missing", "config-garbage", "config-binary",
                                    "versions-missing", "versions-garbage",
                                    "throughput-missing", "throughput-garbage",
                                    "csv-missing", "pgn-last-game-cut"])
def test_run_resumes_whatever_file_is_damaged(played, tmp_path, damage):
    out = tmp_path / "copy"
    shutil.copytree(played, out)
    name, how = damage.rsplit("-", 1) if damage != "pgn-last-game-cut" else ("pgn", "cut")
    file = {"config": "config.yaml", "versions": "versions.yaml",
            "throughput": "throughput.json", "csv": "games.csv", "pgn": "games.pgn"}[name]
    path = out / file
    if how == "missing":
        path.unlink()
    elif how == "garbage":
        path.write_text("{[: not yaml or json")
    elif how == "binary":
        path.write_bytes(b"\xff\xfe\x00" * 50)
    else:
        text = path.read_text()
        path.write_text(text[: text.rindex("\n1.") + 3])
    report = run_selfplay(config(), out, progress=False)
    assert report.played == (1 if how == "cut" else 0)
    assert [(r["index"], r["moves"]) for r in read_games_csv(out / "games.csv")] == [
        (r["index"], r["moves"]) for r in read_games_csv(played / "games.csv")]
    assert yaml.safe_load((out / "config.yaml").read_text())["seed"] == 3


@pytest.mark.tier2  # a whole self-play run
def test_another_runs_games_are_refused_even_without_config_yaml(played, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(played, out)
    (out / "config.yaml").unlink()
    with pytest.raises(ConfigError, match="holds game 0 of another run"):
        run_selfplay(config(seed=4), out, progress=False)


@pytest.mark.tier2  # a whole self-play run
def test_a_run_without_finished_games_takes_a_new_config(tmp_path):
    out = tmp_path / "fresh"
    with pytest.raises(UserError, match="missing.pb.gz"):
        run_selfplay(config(model="missing.pb.gz"), out, progress=False)
    assert not (out / "config.yaml").exists()  # the model is checked before writing
    out.mkdir()
    (out / "config.yaml").write_text(yaml.safe_dump({**config().to_dict(), "seed": 9}))
    report = run_selfplay(config(games=1), out, progress=False)
    assert report.played == 1
