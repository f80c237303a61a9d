"""Batched self-play: game ends vs python-chess, PGN round trip, determinism, resume.

Every search here uses batch size 8 and 16 nodes per move (max_nodes 17) so the whole
file shares one compiled searcher with the other game tests in the same process.
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import chess
import chess.pgn
import numpy as np
import pytest
import yaml

from zerochess.cli import main
from zerochess.errors import ConfigError, PositionError
from zerochess.games import (
    GameRecord,
    GameWriter,
    MoveStat,
    OpeningSpec,
    SelfPlayConfig,
    build_openings,
    odds_board,
    read_games_csv,
    run_selfplay,
)
from zerochess.games.openings import book_line, write_polyglot_book
from zerochess.games.players import SearcherPool
from zerochess.games.records import read_pgn_games
from zerochess.neural import load_model
from zerochess.search import SearchConfig, Searcher

REPO = Path(__file__).resolve().parents[1]

# Start positions that exercise every way a game ends.
FENS = [
    chess.STARTING_FEN,
    "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",  # white is mated
    "8/8/8/4k3/8/8/8/4K3 w - - 0 1",  # bare kings: over before the first move
    "7k/8/8/8/8/8/8/K6Q b - - 99 90",  # fifty-move rule claimable at once
    "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 2 3",  # Qxf7 mate
    "k7/8/1Q6/8/8/8/8/6K1 b - - 0 1",  # stalemate
]


def tiny_config(**changes) -> SelfPlayConfig:
    values = {
        "name": "t", "model": "builtin", "seed": 3, "games": 12, "batch_size": 8,
        "max_plies": 40, "alternate_colors": True,
        "openings": {"type": "fens", "fens": FENS},
        "white": {"name": "puct", "nodes": 16,
                  "temperature": {"temperature": 1.0, "endgame_temperature": 0.5}},
        "black": {"name": "sc2", "nodes": 16, "search": {"n_scl": 2},
                  "temperature": {"temperature": 1.0, "endgame_temperature": 0.5}},
    }
    values.update(changes)
    return SelfPlayConfig.from_dict(values)


def puct_only(**changes) -> SelfPlayConfig:
    """Search randomness off (no noise, no SC draws): only the seeded temperature choice."""
    p = {"name": "puct", "nodes": 16, "temperature": {"temperature": 1.0,
                                                       "endgame_temperature": 0.5}}
    return tiny_config(**{"white": p, "black": {**p, "name": "puct-b"},
                          "openings": {"type": "startpos"}, **changes})


def games_by_index(out: Path) -> dict[int, tuple[str, str, str]]:
    return {int(r["index"]): (r["moves"], r["result"], r["termination"])
            for r in read_games_csv(out / "games.csv")}


@pytest.fixture(scope="module")
def run_a(tmp_path_factory):
    out = tmp_path_factory.mktemp("sp") / "a"
    return out, run_selfplay(tiny_config(), out, progress=False)


# --- configs ------------------------------------------------------------------------------

@pytest.mark.parametrize("values, key", [
    ({"games": 2, "player": {}, "bogus": 1}, "bogus"),
    ({"player": {"nodez": 3}}, "nodez"),
    ({"player": {"search": {"cpuctt": 1.0}}}, "cpuctt"),
    ({"player": {"temperature": {"temp": 1.0}}}, "temp"),
    ({"player": {}, "openings": {"type": "odds", "colour": "white"}}, "colour"),
    ({"player": {"engine": {"kind": "lc0", "weight": "x"}}}, "weight"),
])
def test_unknown_keys_are_named(values, key):
    with pytest.raises(ConfigError, match=key):
        SelfPlayConfig.from_dict(values)


def test_bad_values_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        SelfPlayConfig.load(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="n_scl"):
        SelfPlayConfig.from_dict({"player": {"search": {"n_scl": 0}}})
    with pytest.raises(ConfigError, match="temperature preset"):
        SelfPlayConfig.from_dict({"player": {"temperature": "hot"}})
    with pytest.raises(ConfigError, match="openings.type"):
        SelfPlayConfig.from_dict({"player": {}, "openings": {"type": "pgn"}})
    with pytest.raises(PositionError, match=r"openings.fens\[0\]: invalid FEN 'not a fen'"):
        build_openings(OpeningSpec(type="fens", fens=("not a fen",)), 1, 0)
    with pytest.raises(PositionError, match=r"openings.fens\[1\]: .*opposite check"):
        build_openings(OpeningSpec(type="fens", fens=(FENS[0], "k7/8/8/8/8/8/8/K6Q w - - 0 1")),
                       1, 0)
    assert isinstance(ConfigError("x"), ValueError)


def test_yaml_numbers_and_presets():
    cfg = SelfPlayConfig.from_dict({"player": {"search": {"n_scl": "1e6"}, "temperature": "tau2"}})
    assert cfg.white.search.n_scl == 1_000_000
    assert cfg.white.temperature.visit_offset == -0.8
    cfg = SelfPlayConfig.from_dict({"player": {"search": {"n_scl": None}, "temperature": 0.5}})
    assert cfg.white.search.n_scl is None and cfg.white.temperature.temperature == 0.5


def test_repo_selfplay_configs_load():
    cfg = SelfPlayConfig.load(REPO / "configs" / "selfplay_tiny.yaml")
    assert cfg.games * max(cfg.white.nodes, cfg.black.nodes) <= 2000  # a tiny run
    for path in sorted((REPO / "configs").glob("selfplay*.yaml")):
        SelfPlayConfig.load(path)
    # round trip of the resolved form
    again = SelfPlayConfig.from_dict(yaml.safe_load(yaml.safe_dump(cfg.to_dict())))
    assert again == cfg


# --- openings -----------------------------------------------------------------------------

def test_odds_boards():
    b = odds_board("queen", chess.WHITE)
    assert b.piece_at(chess.D1) is None and b.piece_at(chess.D8) is not None
    assert b.is_valid() and b.has_kingside_castling_rights(chess.WHITE)
    b = odds_board("rook", chess.BLACK)
    assert b.piece_at(chess.A8) is None
    assert not b.has_queenside_castling_rights(chess.BLACK)
    assert b.has_queenside_castling_rights(chess.WHITE)
    b = odds_board("knight", chess.WHITE)
    assert b.piece_at(chess.B1) is None


def test_random_openings():
    """Random lines: legal (python-chess replays them), not over, of 0..book_plies plies,
    the same for the same seed and opening index whatever the count."""
    spec = OpeningSpec.from_dict({"type": "random", "book_plies": 40})
    ops = build_openings(spec, 40, 7)
    lengths = [len(o.moves) for o in ops]
    assert max(lengths) <= 40 and len(set(lengths)) > 10
    for o in ops:
        board = chess.Board()
        for uci in o.moves:
            move = chess.Move.from_uci(uci)
            assert move in board.legal_moves
            board.push(move)
        assert o.board().fen() == board.fen()
        assert not (board.is_checkmate() or board.is_stalemate()
                    or board.is_insufficient_material())
    assert build_openings(spec, 3, 7) == ops[:3]
    assert build_openings(spec, 3, 8) != ops[:3]
    assert all(not o.moves for o in build_openings(
        OpeningSpec.from_dict({"type": "random", "book_plies": 0}), 3, 7))


def test_fen_and_epd_lists(tmp_path):
    f = tmp_path / "p.fen"
    f.write_text("# comment\n" + FENS[1] + "\n\n" + FENS[2] + "\n")
    ops = build_openings(OpeningSpec.from_dict({"type": "fens", "file": str(f)}), 5, 0)
    assert [o.fen for o in ops] == [chess.Board(x).fen() for x in
                                    [FENS[1], FENS[2], FENS[1], FENS[2], FENS[1]]]
    e = tmp_path / "p.epd"
    e.write_text('rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - id "e4";\n')
    ops = build_openings(OpeningSpec.from_dict({"type": "epd", "file": str(e)}), 2, 0)
    assert ops[0].name == "e4" and ops[0].board().turn == chess.BLACK
    shuffled = build_openings(OpeningSpec(type="fens", fens=tuple(FENS), shuffle=True), 6, 1)
    assert sorted(o.fen for o in shuffled) == sorted(chess.Board(x).fen() for x in FENS)


def test_illegal_openings_name_their_source_and_kings_are_never_captured(tmp_path):
    """Illegal opening positions are refused with file:line (issue 9); a game whose king
    was taken (only possible by pushing an illegal move) is never recorded as a result."""
    from zerochess.games.records import game_end

    f = tmp_path / "bad.epd"
    f.write_text(FENS[1] + "\n" + "k7/8/8/8/8/8/8/K6Q w - - 0 1\n" + "8/8/8/8/8/8/8/K7 w - -\n"
                 + "kP6/8/8/8/8/8/8/K7 w - - 0 1\n")
    with pytest.raises(PositionError) as err:
        build_openings(OpeningSpec.from_dict({"type": "epd", "file": str(f)}), 2, 0)
    text = str(err.value)
    assert f"{f}:2" in text and f"{f}:3" in text and f"{f}:4" in text and f"{f}:1" not in text
    assert "opposite check" in text and "no black king" in text and "backrank" in text
    board = chess.Board("k7/8/8/8/8/8/8/K6Q w - - 0 1")
    board.push(chess.Move.from_uci("h1a8"))  # the queen takes the king
    with pytest.raises(RuntimeError, match="black king is missing"):
        game_end(board, 1, None)


def test_polyglot_book(tmp_path):
    start = chess.Board()
    e4, d4 = chess.Move.from_uci("e2e4"), chess.Move.from_uci("d2d4")
    after_e4 = start.copy()
    after_e4.push(e4)
    entries = [(start, e4, 10), (start, d4, 10), (after_e4, chess.Move.from_uci("c7c5"), 1)]
    path = tmp_path / "book.bin"
    write_polyglot_book(path, entries)
    lines = {tuple(book_line(path, 6, seed)) for seed in range(40)}
    assert lines == {("e2e4", "c7c5"), ("d2d4",)}
    assert book_line(path, 6, 7) == book_line(path, 6, 7)
    ops = build_openings(OpeningSpec.from_dict({"type": "book", "file": str(path)}), 8, 0)
    assert all(o.board().move_stack for o in ops)
    assert ops == build_openings(OpeningSpec.from_dict({"type": "book", "file": str(path)}),
                                 8, 0)


# --- the game loop ------------------------------------------------------------------------

@pytest.mark.tier2  # a whole self-play run
def test_results_agree_with_python_chess(run_a):
    out, report = run_a
    rows = report.rows
    assert sorted(int(r["index"]) for r in rows) == list(range(12))  # 12 games, 8 slots
    terminations = set()
    for r in rows:
        board = chess.Board(r["start_fen"])
        for uci in r["moves"].split():
            board.push_uci(uci)
        assert board.fen() == r["final_fen"]
        outcome = board.outcome(claim_draw=True)
        terminations.add(r["termination"])
        if r["termination"] == "move_cap":
            assert outcome is None and r["result"] == "1/2-1/2" and int(r["plies"]) == 40
        else:
            assert outcome is not None
            assert outcome.result() == r["result"]
            assert outcome.termination.name.lower() == r["termination"]
            if int(r["plies"]):  # and the game did not run past its end
                board.pop()
                assert board.outcome(claim_draw=True) is None
    assert {"checkmate", "insufficient_material", "fifty_moves", "stalemate"} <= terminations


@pytest.mark.tier2  # a whole self-play run
def test_pgn_parses_back_and_replays(run_a):
    out, report = run_a
    rows = {int(r["index"]): r for r in report.rows}
    games = list(read_pgn_games(out / "games.pgn"))
    assert len(games) == 12
    for g in games:
        h = g.headers
        r = rows[int(h["GameIndex"])]
        assert h["White"] == r["white"] and h["Black"] == r["black"]
        assert {h["White"], h["Black"]} == {"puct", "sc2"}
        assert h["Result"] == r["result"] and h["Termination"] == r["termination"]
        assert h["Seed"] == r["seed"]
        assert not g.errors
        assert " ".join(m.uci() for m in g.mainline_moves()) == r["moves"]
        assert g.end().board().fen() == r["final_fen"]
        if r["termination"] == "move_cap":
            assert "move cap" in h["Adjudication"]
        for node in g.mainline():
            assert node.comment.startswith("n=17 q=")  # 16 simulations + the root
            assert "best=" in node.comment and "share=" in node.comment
    # colours alternate and openings are paired
    assert rows[0]["white"] == "puct" and rows[1]["white"] == "sc2"
    assert rows[0]["start_fen"] == rows[1]["start_fen"]


@pytest.mark.tier2  # whole self-play runs
def test_same_seed_same_games_other_seed_other_games(run_a, tmp_path):
    out, _ = run_a
    again = run_selfplay(tiny_config(), tmp_path / "b", progress=False)
    assert games_by_index(tmp_path / "b") == games_by_index(out)
    assert (tmp_path / "b" / "games.pgn").read_text() == (out / "games.pgn").read_text()
    other = run_selfplay(tiny_config(seed=4), tmp_path / "c", progress=False)
    assert games_by_index(tmp_path / "c") != games_by_index(out)
    assert again.stats.summary()["positions"] > 0 and other.played == 12


@pytest.mark.tier2  # whole self-play runs
def test_resume_after_interruption(tmp_path):
    # search-contempt draws + root noise + temperature: all seeded per game, slot-independent
    white = {"name": "puct", "nodes": 16, "search": {"dirichlet_epsilon": 0.25},
             "temperature": {"temperature": 1.0, "endgame_temperature": 0.5}}
    cfg = tiny_config(games=10, white=white, openings={"type": "startpos"})
    full = tmp_path / "full"
    run_selfplay(cfg, full, progress=False)
    part = tmp_path / "part"
    first = run_selfplay(cfg, part, progress=False, stop_after=3)
    assert 3 <= first.played < 10
    done = set(games_by_index(part))
    # an interruption in the middle of writing: half a game in each file
    with open(part / "games.pgn", "a") as f:
        f.write('[Event "x"]\n[GameIndex "9"]\n\n1. e4 e5 2.')
    with open(part / "games.csv", "a") as f:
        f.write("9,puct,puct-b,1-0")
    second = run_selfplay(cfg, part, progress=False)
    assert second.played == 10 - len(done)
    assert games_by_index(part) == games_by_index(full)
    assert len(list(read_pgn_games(part / "games.pgn"))) == 10
    # nothing left to do: a third call plays nothing and keeps everything
    third = run_selfplay(cfg, part, progress=False)
    assert third.played == 0 and games_by_index(part) == games_by_index(full)


@pytest.mark.tier2  # whole self-play runs
def test_resume_refuses_another_config(tmp_path):
    out = tmp_path / "r"
    run_selfplay(puct_only(games=1, max_plies=4), out, progress=False)
    with pytest.raises(ConfigError, match="different config"):
        run_selfplay(puct_only(games=1, max_plies=6), out, progress=False)


@pytest.mark.tier2  # whole self-play runs
def test_batch_independence_with_per_tree_seeds(tmp_path):
    """With per-tree search seeds, a game does not depend on its batch neighbours: games
    0-5 are the same whether 6 or 9 games share the 8 slots (other games, other slots)."""
    cfg = tiny_config(games=6, openings={"type": "startpos"})
    a = run_selfplay(cfg, tmp_path / "a", progress=False)
    b = run_selfplay(dataclasses.replace(cfg, games=9), tmp_path / "b", progress=False)
    ga, gb = games_by_index(a.out_dir), games_by_index(b.out_dir)
    assert all(gb[i] == ga[i] for i in ga)


# --- records and writer (no search) -------------------------------------------------------

def fake_record(index: int, moves: list[str], result: str = "1/2-1/2") -> GameRecord:
    board = chess.Board()
    for m in moves:
        board.push_uci(m)
    return GameRecord(index=index, seed=index, white="a", black="b", opening="startpos",
                      start_fen=chess.STARTING_FEN, moves=moves,
                      stats=[MoveStat("search", 9, 0.1, (0.3, 0.4, 0.3), m, 0.5, 0.5, 0.0,
                                      (m,)) for m in moves],
                      result=result, termination="move_cap", final_fen=board.fen(),
                      tags={"n_scl": 5, "variant": "sc"}, max_plies=len(moves))


def test_writer_recovers_partial_files(tmp_path):
    with GameWriter(tmp_path, ["n_scl", "variant"]) as w:
        w.write(fake_record(0, ["e2e4", "e7e5"]))
        w.write(fake_record(1, ["d2d4"]))
    text = (tmp_path / "games.pgn").read_text()
    assert '[NScl "5"]' in text and '[TagVariant "sc"]' in text  # not a chess variant
    assert [g.headers["GameIndex"] for g in read_pgn_games(tmp_path / "games.pgn")] == ["0", "1"]
    # game 2's PGN got out but its CSV row did not (rebuilt from the PGN); game 3 is cut short
    game2 = str(fake_record(2, ["c2c4"]).to_pgn()) + "\n\n"
    with open(tmp_path / "games.pgn", "a") as f:
        f.write(game2 + '[Event "zerochess"]\n[Gam')
    w = GameWriter(tmp_path, ["n_scl", "variant"])
    w.close()
    assert w.completed == {0, 1, 2} and not w.notes  # an interruption, not damage
    assert (tmp_path / "games.pgn").read_text() == text + game2
    assert [r["index"] for r in read_games_csv(tmp_path / "games.csv")] == ["0", "1", "2"]
    assert chess.pgn.read_game(io.StringIO(text)).headers["GameIndex"] == "0"
    with pytest.raises(ConfigError, match="columns"):
        GameWriter(tmp_path, ["other"])


# --- CLI ----------------------------------------------------------------------------------

@pytest.mark.tier2  # whole self-play runs
def test_cli_selfplay(tmp_path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({
        "games": 2, "batch_size": 8, "max_plies": 6,
        "player": {"nodes": 16, "temperature": 0.5}}))
    assert main(["selfplay", "--config", str(cfg), "--out", str(tmp_path / "o"),
                 "--seed", "5", "--no-progress"]) == 0
    assert len(list(read_pgn_games(tmp_path / "o" / "games.pgn"))) == 2
    assert "2 games" in capsys.readouterr().out
    assert yaml.safe_load((tmp_path / "o" / "config.yaml").read_text())["seed"] == 5
    # the folder's run was made by another commit: resuming needs --force, and is recorded
    versions = tmp_path / "o" / "versions.yaml"
    old = yaml.safe_load(versions.read_text())
    versions.write_text(yaml.safe_dump(dict(old, git_commit="f" * 40)))
    argv = ["selfplay", "--config", str(cfg), "--out", str(tmp_path / "o"), "--seed", "5",
            "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "other versions" in err and "git_commit" in err and "--force" in err
    assert main([*argv, "--force"]) == 0
    forced = yaml.safe_load(versions.read_text())["forced_resumes"]
    assert forced[0]["differences"]["git_commit"] == ["f" * 40, old["git_commit"]]


@pytest.mark.parametrize("body, message", [
    ({"games": 2, "player": {"nodes": 4}, "oops": 1}, "unknown key(s) 'oops'"),
    ({"games": 2, "player": {"search": {"cpuct": -1}}}, "cpuct"),
    (None, "not found"),
])
def test_cli_selfplay_errors(tmp_path, capsys, body, message):
    cfg = tmp_path / "c.yaml"
    if body is not None:
        cfg.write_text(yaml.safe_dump(body))
    assert main(["selfplay", "--config", str(cfg), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.tier2  # whole self-play runs
def test_tree_reuse_per_side(tmp_path):
    # both sides keep their trees (search-contempt black included): legal games,
    # reproducible from the seed, and the PGN comments say how many visits were reused
    white = {"name": "puct", "nodes": 16, "tree_reuse": True,
             "search": {"dirichlet_epsilon": 0.25},
             "temperature": {"temperature": 1.0, "endgame_temperature": 0.5}}
    black = {"name": "sc2", "nodes": 16, "search": {"n_scl": 2}, "tree_reuse": True,
             "temperature": {"temperature": 1.0, "endgame_temperature": 0.5}}
    cfg = tiny_config(games=2, max_plies=12, white=white, black=black,
                      openings={"type": "startpos"})
    assert cfg.white.tree_reuse and cfg.black.tree_reuse
    a = run_selfplay(cfg, tmp_path / "a", progress=False)
    b = run_selfplay(cfg, tmp_path / "b", progress=False)
    assert games_by_index(tmp_path / "a") == games_by_index(tmp_path / "b")
    assert (tmp_path / "a" / "games.pgn").read_text() == (tmp_path / "b" / "games.pgn").read_text()
    assert a.played == b.played == 2
    reused = []
    for g in read_pgn_games(tmp_path / "a" / "games.pgn"):
        assert not g.errors
        board = g.board()
        for ply, node in enumerate(g.mainline()):
            assert node.move in board.legal_moves
            board.push(node.move)
            fields = dict(part.split("=", 1) for part in node.comment.split())
            assert int(fields["n"]) == 17  # the root's visits, the reused ones included
            reused.append(int(fields.get("reused", 0)))
            if ply < 2:
                assert "reused" not in fields  # each side's first move: a new tree
    assert max(reused) > 0
    # a side without reuse writes no reused visits; reuse off is the default
    assert tiny_config().white.tree_reuse is False
    with pytest.raises(ConfigError, match="tree_reuse"):
        tiny_config(white={"name": "x", "tree_reuse": "yes"})


@pytest.mark.tier2  # three searchers of their own (a resnet at three tree sizes)
def test_a_game_tree_sized_to_its_nodes_never_runs_out_of_edges():
    """A game's trees are sized nodes + 1. In this queen-odds middlegame the search's
    default edge pool (40 per node on average) fills before 32 simulations, dropping one;
    the game backend's trees hold every legal move of every node, so their search equals
    the same search in a tree twice as large (where the default pool has room)."""
    board = chess.Board("rnb1k1nr/p1p2ppp/1p4q1/2bpp3/2P1PP2/8/P2B1NPP/RN1QKB1R w KQkq - 0 8")
    model = load_model("resnet:2x16")
    cfg = SearchConfig(dirichlet_epsilon=0.25, dirichlet_alpha=0.3, fpu_absolute_root=True,
                       fpu_value_root=1.0, mate_check=True)
    seeds = [1062] * 8

    def search(searcher):
        batch = searcher.run(searcher.init([board] * 8, [cfg] * 8, seed=seeds), 32)
        return searcher.results(batch)[0]

    default = search(Searcher(model, max_nodes=33))
    assert default.dropped_simulations > 0  # the failure this guards against still exists
    large = search(Searcher(model, max_nodes=65))
    assert large.dropped_simulations == 0
    [game] = SearcherPool(model, batch_size=8, max_nodes=33).search(
        [board], [cfg], [32], [1062], size=8)
    assert game.dropped_simulations == 0
    np.testing.assert_array_equal(game.visits, large.visits)
    assert game.best_move == large.best_move
