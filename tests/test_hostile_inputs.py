"""Issue 26's classes of hostile input, each tested as a class (no search runs here):
bounded quoting and YAML alias expansion, duplicate YAML keys, file inputs that are not
regular files, polyglot books that are not books, streamed EPD input, conflicting or
empty arguments, shape buckets, ``export_lc0`` of what it cannot export, the UCI engine
after a refused ``position``, with an unwritable ``LogFile`` and 1 MB lines, and one
error family (``UserError``) for every kind of input. Issue 39: the pure search's
arguments and per-tree settings, the network-output boundary (any tuple, half precision,
NaN/inf made safe), PRNG keys, ``Env`` misuse and ``zerochess perft`` at depths that cannot
finish (the compiled search's classes: ``test_hostile_search.py``)."""

from __future__ import annotations

import io
import math
import os
import random
import threading
import time
import tracemalloc
from pathlib import Path

import chess
import pytest

from zerochess.errors import ConfigError, InputFileError, ModelFileError, UserError, quote

# --- one error family -------------------------------------------------------------------


def test_every_input_error_class_is_a_user_error():
    """UCI commands and options, time managers, analysis fields and the analysis client's
    errors are ``UserError`` subclasses (and still ``ValueError``: old callers keep
    working)."""
    from zerochess.analysis.protocol import FieldError
    from zerochess.uci.options import OptionError
    from zerochess.uci.protocol import UciError
    from zerochess.uci.time_manager import TimeManagerError

    for cls in (UciError, OptionError, TimeManagerError, FieldError):
        assert issubclass(cls, UserError) and issubclass(cls, ValueError), cls
    err = FieldError("maxVisits", "must be >= 1")
    assert err.field == "maxVisits" and err.message == "must be >= 1"


def test_training_configs_and_game_loops_raise_user_errors():
    from zerochess.games import GameSpec, Opening, PlayerSpec, play_games
    from zerochess.training.buffer import ReplayBuffer
    from zerochess.training.losses import LossConfig
    from zerochess.training.schedule import NsclScheduleConfig
    from zerochess.training.trainer import OptimizerConfig

    for make, fragment in [(lambda: LossConfig(q_ratio=2.0), "q_ratio"),
                           (lambda: OptimizerConfig(type="lamb"), "lamb"),
                           (lambda: NsclScheduleConfig(factor=0.5), "factor"),
                           (lambda: ReplayBuffer(window_games=0), "window_games")]:
        with pytest.raises(UserError, match=fragment):
            make()
    spec = GameSpec(0, "x", "nobody", Opening("start"), seed=0)
    with pytest.raises(UserError, match="unknown player 'nobody'"):
        play_games([spec], {"x": PlayerSpec("x", nodes=2)}, model=None)


# --- bounded quoting ----------------------------------------------------------------------


def _laughs(levels: int = 12, width: int = 9) -> list:
    """A small object whose repr is width**levels strings long (a YAML "billion laughs"
    document loads into this: every alias is the same list)."""
    value: list = ["lol"] * width
    for _ in range(levels):
        value = [value] * width
    return value


def test_quote_bounds_its_work_and_its_length():
    big = _laughs()  # repr would be ~ 9**13 * 7 characters
    for value in (big, "x" * 10**7, b"y" * 10**6, 10**50_000, {"k": big}, (big,), {1, 2}):
        t0 = time.perf_counter()
        text = quote(value)
        assert time.perf_counter() - t0 < 0.5 and len(text) < 200, (type(value), text)
    assert quote("abc") == "'abc'" and quote([1, (2,)]) == "[1, (2,)]" and quote(set()) == "set()"
    for n in range(70, 90):  # a string is quoted whole up to the limit, then cut
        assert (quote("s" * n) == repr("s" * n)) == (n + 2 <= 80), n
    assert quote("x" * 1000).endswith("... (1,000 characters)")
    assert quote(big).endswith("(a list of 9 items)")
    assert "50,001 digits" in quote(10**50_000)


def test_every_quoting_path_is_bounded():
    """The scalar checks and the config readers quote what they refuse: never a full repr
    (``games.config.as_bool`` used ``!r``; huge integers cannot even be printed by ``str``)."""
    from zerochess.games.config import as_bool, as_int
    from zerochess.validation import as_choice, as_count, as_flag, as_real, as_seed, as_text

    big = _laughs()
    calls = [lambda v: as_bool(v, "x"), lambda v: as_int(v, "x", maximum=9),
             lambda v: as_count(v, "x", maximum=9),
             lambda v: as_seed(v), lambda v: as_real(v, "x"), lambda v: as_flag(v, "x"),
             lambda v: as_choice(v, "x", ["a"]), lambda v: as_text(v, "x")]
    for call in calls:
        for value in (big, 10**50_000, -(10**50_000)):
            t0 = time.perf_counter()
            with pytest.raises(ConfigError) as err:
                call(value)
            assert time.perf_counter() - t0 < 0.5 and len(str(err.value)) < 300


# --- YAML: alias expansion and duplicate keys ---------------------------------------------

BILLION_LAUGHS = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]"
       for i in range(9)] + ["games: *j", "player: {nodes: 4}", ""])


def test_a_billion_laughs_document_is_refused_at_once(tmp_path):
    from zerochess.games.config import SelfPlayConfig
    from zerochess.yaml_config import load_yaml_text

    path = tmp_path / "laughs.yaml"
    path.write_text(BILLION_LAUGHS)
    tracemalloc.start()
    t0 = time.perf_counter()
    with pytest.raises(ConfigError, match="aliases are expanded") as err:
        SelfPlayConfig.load(path)
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert seconds < 5 and peak < 50 * 2**20, (seconds, peak)
    assert str(path) in str(err.value)
    # aliases within the budget are YAML as usual (merge keys too)
    doc = "base: &b {x: 1, y: [1, 2]}\nd:\n  <<: *b\n  x: 2\ne: *b\n"
    assert load_yaml_text(doc, "ok.yaml") == {"base": {"x": 1, "y": [1, 2]},
                                              "d": {"x": 2, "y": [1, 2]},
                                              "e": {"x": 1, "y": [1, 2]}}
    with pytest.raises(ConfigError, match="recursive alias"):
        load_yaml_text("&a [*a]\n", "loop.yaml")


@pytest.mark.parametrize("doc, lines", [
    ("games: 2\nplayer: {nodes: 4}\ngames: 3\n", ("line 1", "line 3")),
    ("games: 2\nplayer:\n  nodes: 4\n  nodes: 5\n", ("line 3", "line 4")),
    ("games: 2\nplayer: {nodes: 4, nodes: 5}\n", ("column 10", "column 20")),
])
def test_duplicate_yaml_keys_are_an_error_naming_both(tmp_path, doc, lines):
    from zerochess.analysis.settings import EngineSettings
    from zerochess.games.config import SelfPlayConfig

    path = tmp_path / "dup.yaml"
    path.write_text(doc)
    for load in (SelfPlayConfig.load, EngineSettings.from_file):
        with pytest.raises(ConfigError, match="duplicate key") as err:
            load(path)
        assert all(x in str(err.value) for x in lines), str(err.value)


# --- file inputs: not a regular file, too large -------------------------------------------


def _readers(tmp_path: Path):
    """name -> (call taking a path, error class): every kind of file input."""
    from zerochess.analysis.settings import EngineSettings
    from zerochess.games.config import SelfPlayConfig
    from zerochess.games.openings import check_polyglot_book
    from zerochess.neural import load_model
    from zerochess.positions import check_position_lines, read_epd
    from zerochess.uci.engine import check_weights_spec
    from zerochess.uci.options import OptionError

    return {
        "network": (lambda p: load_model(p), ModelFileError),
        "selfplay config": (SelfPlayConfig.load, ConfigError),
        "analysis config": (EngineSettings.from_file, ConfigError),
        "EPD": (read_epd, InputFileError),
        "EPD stream": (check_position_lines, InputFileError),
        "book": (check_polyglot_book, InputFileError),
        "UCI WeightsFile": (check_weights_spec, OptionError),
    }


def _bounded_call(call, seconds: float = 10.0):
    """Run ``call`` in a thread: its exception, or a failure if it blocks."""
    out: list = []

    def target() -> None:
        try:
            call()
            out.append(None)
        except BaseException as err:  # noqa: BLE001 (handed to the test)
            out.append(err)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the call blocked"
    return out[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_special_files_are_refused_without_reading_or_blocking(tmp_path):
    """A FIFO without a writer (opening it would block forever), a link to /dev/zero
    (reading it never ends) and a folder: refused by every file input, naming what the
    path is."""
    cases = {}
    fifo = tmp_path / "pipe.pb.gz"
    os.mkfifo(fifo)
    cases[fifo] = "named pipe"
    zero = tmp_path / "zero.pb.gz"
    zero.symlink_to("/dev/zero")
    cases[zero] = "character device"
    folder = tmp_path / "folder.pb.gz"
    folder.mkdir()
    cases[folder] = "is a folder"
    for name, (read, error) in _readers(tmp_path).items():
        for path, what in cases.items():
            err = _bounded_call(lambda read=read, path=path: read(str(path)))
            assert isinstance(err, error), (name, path, err)
            assert what in str(err) and str(path) in str(err), (name, str(err))
            assert "\n" not in str(err)
    err = _bounded_call(lambda: _readers(tmp_path)["network"][0](str(zero)))
    assert "a link to '/dev/zero'" in str(err)


def test_files_larger_than_their_kind_are_refused_before_reading(tmp_path):
    from zerochess.user_files import MAX_CONFIG_BYTES, read_user_bytes

    big = tmp_path / "big.yaml"
    with open(big, "wb") as f:  # sparse: nothing is written
        f.truncate(MAX_CONFIG_BYTES + 1)
    read, error = _readers(tmp_path)["selfplay config"]
    with pytest.raises(error, match="larger than 4 MiB"):
        read(big)
    huge = tmp_path / "huge.pb.gz"
    with open(huge, "wb") as f:
        f.truncate(2**31 + 1)
    with pytest.raises(ModelFileError, match="larger than 2 GiB"):
        _readers(tmp_path)["network"][0](str(huge))
    with pytest.raises(InputFileError, match="larger than"):
        read_user_bytes(big, "file", 10)


def test_a_file_that_is_not_a_polyglot_book_is_refused(tmp_path):
    from zerochess.games.openings import book_line, check_polyglot_book, write_polyglot_book

    rng = random.Random(3)
    not_books = {
        "zeros.bin": bytes(16 * 64),
        "text.bin": (b"e4 e5 Nf3 Nc6 Bb5 a6 " * 64)[:16 * 64],
        "random.bin": bytes(rng.getrandbits(8) for _ in range(16 * 64)),
    }
    for name, data in not_books.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(InputFileError, match="not a polyglot book"):
            check_polyglot_book(tmp_path / name)
    (tmp_path / "odd.bin").write_bytes(b"x" * 17)
    with pytest.raises(InputFileError, match="16-byte entries"):
        check_polyglot_book(tmp_path / "odd.bin")
    good = tmp_path / "good.bin"
    board = chess.Board()
    write_polyglot_book(good, [(board, chess.Move.from_uci("e2e4"), 5),
                               (board, chess.Move.from_uci("d2d4"), 3)])
    check_polyglot_book(good)
    assert book_line(good, 1, seed=0)[0] in ("e2e4", "d2d4")


# --- streamed EPD input --------------------------------------------------------------------


def test_epd_lines_stream_and_a_bad_file_is_refused_before_anything(tmp_path):
    from zerochess.errors import PositionError
    from zerochess.positions import check_position_lines, iter_epd

    path = tmp_path / "p.epd"
    path.write_text("".join(f'{chess.STARTING_FEN.rsplit(" ", 2)[0]} id "p{i}";\n'
                            for i in range(5)) + "not a fen\n")
    items = iter_epd(path)
    assert [next(items)[0] for _ in range(5)] == [f"p{i}" for i in range(5)]
    with pytest.raises(PositionError, match=":6"):
        next(items)  # read lazily: the bad last line is reached only now
    with pytest.raises(PositionError, match=":6"):
        check_position_lines(path)
    long = tmp_path / "long.epd"
    long.write_bytes(b"8" * (2**17) + b"\n")
    with pytest.raises(InputFileError, match="line 1 is longer than"):
        check_position_lines(long)


# --- conflicting or empty arguments --------------------------------------------------------


def test_conflicting_analyse_arguments_are_refused():
    from zerochess.analysis import analyse
    from zerochess.search.config import SearchConfig

    for kwargs in (dict(search="contempt"), dict(contempt_limit=3), dict(search="puct")):
        with pytest.raises(ConfigError, match="not both"):
            analyse("startpos", visits=1, config=SearchConfig(), **kwargs)


@pytest.mark.parametrize("argv", [
    ["selfplay", "--config", "configs/selfplay_tiny.yaml", "--out", ""],
    ["match", "--config", " ", "--out", "x"],
    ["analyse", "--epd", ""],
    ["train", "--config", "configs/train_tiny.yaml", "--out", "  "],
])
def test_empty_path_arguments_are_errors(argv, capsys):
    from zerochess.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert "expected a path" in capsys.readouterr().err


# --- shape buckets ---------------------------------------------------------------------------


def test_nearby_budgets_share_a_bucket():
    from zerochess.search.sizes import batch_size_bucket, size_bucket, tree_size_bucket

    buckets = [tree_size_bucket(v + 1) for v in range(1, 20_001)]
    assert all(b >= v + 1 for v, b in zip(range(1, 20_001), buckets, strict=True))
    assert all(b <= 1.25 * (v + 1) or b == 8 for v, b in zip(range(1, 20_001), buckets,
                                                             strict=True))
    assert buckets == sorted(buckets) and len(set(buckets)) <= 4 * 12
    assert tree_size_bucket(334) == tree_size_bucket(335) == 384  # --visits 333 and 334
    assert [batch_size_bucket(n) for n in (1, 5, 8, 9, 17, 244, 256)] == \
        [1, 5, 8, 10, 20, 256, 256]
    assert size_bucket(2**31 - 2) == 2**31 - 2  # never past the int32 limit


# --- export_lc0 ---------------------------------------------------------------------------


def test_export_lc0_says_what_it_can_export(tmp_path):
    from zerochess.errors import ModelError
    from zerochess.neural import load_model, make_resnet
    from zerochess.neural.lc0_export import export_lc0
    from zerochess.neural.resnet import SEResNet, init_params

    path = tmp_path / "net.pb.gz"
    for what in (load_model("builtin"), object(), "resnet:1x8"):
        with pytest.raises(ModelError, match="classic SE-ResNet"):
            export_lc0(path, what)
    module = SEResNet(blocks=1, filters=8)
    params = init_params(SEResNet(blocks=2, filters=8), 0)
    with pytest.raises(ModelError, match="do not match"):
        export_lc0(path, module, params)
    with pytest.raises(ModelError, match="mapping of arrays"):
        export_lc0(path, module, [1, 2])
    net = make_resnet(1, 8, seed=4)  # a Model built on an SEResNet exports as is
    export_lc0(path, net, encoding="float32")
    back = load_model(str(path))
    planes = __import__("numpy").zeros((1, 112, 8, 8), "float32")
    assert abs(float((back(planes).wdl_logits - net(planes).wdl_logits).max())) < 1e-5


# --- UCI: a refused position, an unwritable LogFile, long lines ---------------------------


class _Driver:
    """No search: what ``isready`` needs of a driver."""

    def prepare(self, multipv: int) -> None:
        pass


def _uci(*lines: str) -> tuple[object, list[str]]:
    from zerochess.uci.engine import UciEngine

    stream = io.StringIO()
    engine = UciEngine(stream, driver_factory=lambda options: _Driver())
    for line in lines:
        engine.handle(line)
    return engine, stream


def _wait_for(stream: io.StringIO, text: str, seconds: float = 10.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while text not in stream.getvalue():
        assert time.monotonic() < deadline, stream.getvalue()
        time.sleep(0.01)
    return stream.getvalue().splitlines()


def test_go_after_a_refused_position_plays_no_move_of_another():
    engine, stream = _uci("position startpos moves e2e4", "position startpos moves e2e5",
                          "go nodes 10")
    out = _wait_for(stream, "bestmove")
    assert any("illegal move 'e2e5'" in x for x in out)
    assert any(x.startswith("info string error go: no position") for x in out)
    assert out[-1] == "bestmove 0000"
    engine.handle("fen")  # nothing to show either
    assert "no position" in stream.getvalue().splitlines()[-1]
    # go infinite waits for stop, as UCI wants, then answers the same way
    engine.handle("go infinite")
    time.sleep(0.3)
    assert stream.getvalue().count("bestmove") == 1
    engine.handle("stop")
    deadline = time.monotonic() + 10
    while stream.getvalue().count("bestmove 0000") < 2:
        assert time.monotonic() < deadline, stream.getvalue()
        time.sleep(0.01)
    engine.handle("position startpos")  # a valid position restores the engine
    assert engine.position is not None and engine.position.board == chess.Board()
    engine.close()


def test_an_unwritable_log_file_warns_and_the_engine_goes_on(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, warning in [("/dev/full", "cannot write LogFile"),
                          (str(tmp_path), "cannot open LogFile"),
                          (str(fifo), "cannot open LogFile")]:
        engine, stream = _uci(f"setoption name LogFile value {path}", "uci", "isready",
                              "isready")
        out = stream.getvalue().splitlines()
        assert out.count("readyok") == 2, out
        warnings = [x for x in out if x.startswith("info string WARNING") and warning in x]
        assert len(warnings) == 1, out  # once, then no log
        engine.close()


def test_long_input_lines_are_cut_in_echoes_and_in_memory():
    from zerochess.uci.engine import read_lines

    engine, stream = _uci("x" * 2**20)
    [error] = stream.getvalue().splitlines()
    assert error.startswith("info string error unknown command: 'xxx") and len(error) < 300
    source = io.StringIO("isready\n" + "y" * (2**20 + 5) + "\nuci\n")
    assert list(read_lines(source)) == ["isready\n", 2**20 + 6, "uci\n"]
    engine.close()


# --- plots: library code leaves the user's matplotlib alone ---------------------------------


def test_library_plots_never_switch_the_backend(tmp_path):
    """A notebook's inline backend stays: the experiment, time-use and training plots draw
    on ``matplotlib.figure.Figure`` objects and pyplot never holds them (issue 26, 13)."""
    import ast

    import matplotlib
    import matplotlib.pyplot as plt

    from zerochess.experiments import contempt_wdl
    from zerochess.experiments.common import wdl_counts
    from zerochess.games.timeuse import CurvePoint, plot_time_use

    src = Path(__file__).resolve().parents[1] / "src" / "zerochess"
    for path in src.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "use" and \
                    isinstance(node.value, ast.Name) and node.value.id == "matplotlib":
                pytest.fail(f"{path}: matplotlib.use")
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", "") or ""]
                assert not any("pyplot" in n for n in names), f"{path} imports pyplot"
    before = matplotlib.get_backend()
    matplotlib.use("svg")
    try:
        figures = plt.get_fignums()
        rows = [{"result": r, "plies": "12", "termination": t}
                for r, t in [("1-0", "checkmate"), ("1/2-1/2", "move_cap")]]
        table = [{"n_scl": n, **wdl_counts(rows)} for n in (1, 5, 10**6)]
        contempt_wdl.plot(table, tmp_path / "wdl.png", "test")
        plot_time_use([CurvePoint("a", 1, 2, 100.0, 80.0, 120.0, 900.0)],
                      tmp_path / "time.png", "test")
        assert matplotlib.get_backend() == "svg" and plt.get_fignums() == figures
        for name in ("wdl.png", "time.png"):
            assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"
    finally:
        matplotlib.use(before)


# --- interrupts ------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("delay", [1.5, 4.0, 10.0])
def test_two_quick_interrupts_print_one_line(delay):
    """Ctrl-C twice, 50 ms apart, while jax loads, while the search compiles or runs, or
    while the process unwinds: one line on stderr, status 130, never a traceback (issue
    26, item 11). (The first ~0.3 s, while Python loads the command's own modules, are
    Python's: an interrupt there prints Python's traceback.)"""
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "zerochess.cli", "analyse", "startpos",
                             "--visits", "100000", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    # 130, or killed by the second SIGINT once Python restored its default handler at
    # exit: a shell shows 130 for both
    assert proc.returncode in (130, -signal.SIGINT), (proc.returncode, err)
    assert "Traceback" not in err and err.strip().count("\n") == 0, err
    assert "interrupted" in err


# --- docs ------------------------------------------------------------------------------------


def test_the_readme_python_examples_define_every_name_they_use():
    """Each ```python block of the README runs as written: every name it reads is
    imported, assigned or a builtin (the Searcher snippet used an undefined ``boards``)."""
    import ast
    import builtins
    import re

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 3
    for block in blocks:
        tree = ast.parse(block)
        defined = set(dir(builtins))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                defined |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                defined.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, ast.arg):
                defined.add(node.arg)
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
                and isinstance(n.ctx, ast.Load)}
        assert used <= defined, (used - defined, block[:200])


@pytest.mark.slow
def test_the_hostile_sweep_finds_nothing(tmp_path):
    """``tests/hostile.py``'s fresh round of every class of issue 26 (the quick part;
    ``python tests/hostile.py --engines`` adds the external-engine matches)."""
    import hostile

    rows = hostile.sweep(tmp_path)
    assert sum(n for _, n, _ in rows) >= 100
    assert [(name, bad) for name, _, bad in rows if bad] == []


# --- issue 39: the pure search, the network's outputs, Env and perft under misuse ----------
# (no search compiles here: each check refuses before anything runs, or runs the
# network-output boundary alone; tests/test_hostile_search.py runs the compiled search)


@pytest.fixture(scope="module")
def toy():
    from zerochess.neural.toy import linear_model

    return linear_model(0)


@pytest.fixture(scope="module")
def pure_search(toy):
    """``call(**kwargs)``: ``search`` on two ongoing host-made roots (4 simulations)."""
    from zerochess import SearchConfig
    from zerochess.search import stack_configs
    from zerochess.search.compiled import search

    import hostile

    roots = hostile.host_roots([chess.Board(), chess.Board(
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")])
    params = stack_configs([SearchConfig()] * 2, False, False)

    def call(**kw):
        args = dict(num_simulations=4, apply_fn=toy.apply, num_nodes=5)
        args.update(kw)
        return search(toy.params, args.pop("roots", roots), args.pop("params", params), **args)

    call.params = params
    return call


def _static_cases():
    import hostile

    return [(k, v) for k, values in hostile.SEARCH_STATIC_BAD.items() for v in values]


@pytest.mark.parametrize("name, value", _static_cases())
def test_search_refuses_bad_static_arguments_naming_them(pure_search, name, value):
    """A negative, zero or fractional simulation count, no leaves, ``num_nodes=0`` (which
    became the default through ``or``), a tree of one node: a ``ConfigError`` naming the
    argument and quoting the value, at trace time (not a jax broadcasting error)."""
    with pytest.raises(ConfigError, match=name) as err:
        pure_search(**{name: value})
    assert "\n" not in str(err.value)


def test_search_refuses_settings_and_limits_for_another_batch(pure_search):
    import numpy as np

    from zerochess import SearchConfig
    from zerochess.search import stack_configs

    three = stack_configs([SearchConfig()] * 3, False, False)
    with pytest.raises(ConfigError, match=r"params\..* batch size 2"):
        pure_search(params=three)
    with pytest.raises(ConfigError, match=r"limits must be integers \[2\].*\[3\]"):
        pure_search(limits=np.array([1, 2, 3]))
    with pytest.raises(ConfigError, match="limits must be integers"):
        pure_search(limits=np.array([1.5, 2.0]))
    with pytest.raises(ConfigError, match=r"limits\[0\] must be in \[0, num_simulations=4\]"):
        pure_search(limits=np.array([-1, 4]))
    with pytest.raises(ConfigError, match=r"limits\[1\] .* got 5"):
        pure_search(limits=np.array([4, 5]))


@pytest.mark.parametrize("field, value", [
    ("policy_temperature", 0.0), ("policy_temperature", math.nan), ("draw_score", math.nan),
    ("draw_score", -1.5), ("cpuct", math.inf), ("dirichlet_epsilon", math.nan)])
def test_search_refuses_per_tree_settings_out_of_range(pure_search, field, value):
    """Per-tree data edited after ``stack_configs`` (NaN or 0 temperatures, NaN draw
    scores): an error naming the field and the tree where the data is concrete (under jit
    the tree's ``bad_settings`` flag: tests/test_hostile_search.py)."""
    import numpy as np

    edited = pure_search.params.replace(
        **{field: np.asarray(getattr(pure_search.params, field)).copy()})
    getattr(edited, field)[1] = value
    with pytest.raises(ConfigError, match=rf"params\.{field} of tree 1 must be .* got"):
        pure_search(params=edited)


def _leaf_inputs(boards):
    from zerochess.search.step import LeafInputs

    import hostile

    return LeafInputs(**hostile.leaf_inputs(boards))


def _softmax(x):
    import numpy as np

    x = np.asarray(x, np.float64)
    e = np.exp(x - x.max())
    return e / e.sum()


def test_network_outputs_any_tuple_or_mapping_and_half_precision(toy):
    """``apply_fn`` may return a plain tuple (as the README documents), a NamedTuple or a
    dict, with or without moves left, in float16 or bfloat16 (read as float32): the same
    priors as the model's own outputs, to the outputs' precision."""
    import jax.numpy as jnp
    import numpy as np

    from zerochess.search.step import evaluate_leaves

    inputs = _leaf_inputs([chess.Board(), chess.Board("8/8/8/4k3/8/8/3P4/4K3 w - - 0 1")])
    t = jnp.ones(2)
    ref = evaluate_leaves(toy.apply, toy.params, inputs, t)
    forms = {
        "tuple": (lambda p, x: tuple(toy.apply(p, x)), 0.0),
        "pair": (lambda p, x: tuple(toy.apply(p, x))[:2], 0.0),
        "dict": (lambda p, x: toy.apply(p, x)._asdict(), 0.0),
        "float16": (lambda p, x: tuple(a.astype(jnp.float16) for a in toy.apply(p, x)[:2]),
                    2e-3),
        "bfloat16": (lambda p, x: tuple(a.astype(jnp.bfloat16) for a in toy.apply(p, x)[:2]),
                     2e-2),
    }
    for name, (apply, tol) in forms.items():
        out = evaluate_leaves(apply, toy.params, inputs, t)
        assert out.priors.dtype == jnp.float32 and out.wdl.dtype == jnp.float32, name
        assert np.allclose(out.priors, ref.priors, atol=tol), name
        assert np.allclose(out.wdl, ref.wdl, atol=tol), name


@pytest.mark.parametrize("change, fragment", [
    (lambda o: (o[0][:, :1800], o[1], None), r"1858 moves per position .*\[2, 1800\]"),
    (lambda o: (o[0], o[1][:, :2], None), r"wdl_logits must have shape \[2, 3\]"),
    (lambda o: (o[0][:1], o[1], None), r"policy_logits must have shape \[2, 1858\]"),
    (lambda o: (o[0], o[1], o[2], o[0]), "as a tuple or a NamedTuple, got a tuple of 4"),
    (lambda o: {"policy": o[0]}, "mapping without policy_logits, wdl_logits"),
    (lambda o: (o[0].astype("complex64"), o[1], None), "must hold real numbers"),
])
def test_network_outputs_of_the_wrong_shape_are_refused_at_trace_time(toy, change, fragment):
    """A policy of another width was accepted (the gather clamps its indices): now a
    ``ConfigError`` naming ``apply_fn``, what it returned and what was expected."""
    from zerochess.search.step import evaluate_leaves

    inputs = _leaf_inputs([chess.Board(), chess.Board()])
    with pytest.raises(ConfigError, match=fragment):
        evaluate_leaves(lambda p, x: change(tuple(toy.apply(p, x))), toy.params, inputs,
                        __import__("jax").numpy.ones(2))


def test_non_finite_network_outputs_are_made_safe_and_reported(toy):
    """lc0's treatment, against a plain numpy reference: a legal move with a NaN/inf logit
    gets prior 0 and the others the softmax of theirs; no finite logit: uniform over the
    legal moves; a non-finite WDL row: uniform; each such position reported. Finite logits
    that overflow once divided by a small temperature are not a report (and not NaN)."""
    import jax.numpy as jnp
    import numpy as np

    from zerochess.search.step import evaluate_checked

    inputs = _leaf_inputs([chess.Board()] * 5)
    legal = np.asarray(inputs.legal[0, :20]).astype(int)
    base = np.asarray(toy.apply(toy.params, jnp.zeros((1, 112, 8, 8))).policy_logits[0])

    def apply(p, planes):
        policy = jnp.tile(jnp.asarray(base), (5, 1))
        policy = policy.at[0, legal[3]].set(jnp.nan).at[1, legal[7]].set(jnp.inf)
        policy = policy.at[2, :].set(jnp.nan)
        policy = policy.at[4, legal].set(jnp.where(jnp.arange(20) % 2 == 0, 3e38, -3e38))
        wdl = jnp.zeros((5, 3)).at[3, 1].set(jnp.nan)
        return policy, wdl, None

    temperature = jnp.array([1.0, 1.0, 1.0, 1.0, 0.5])
    out, flag = evaluate_checked(apply, toy.params, inputs, temperature)
    priors = np.asarray(out.priors[:, :20])
    for row, dead in ((0, 3), (1, 7)):
        keep = np.arange(20) != dead
        want = np.zeros(20)
        want[keep] = _softmax(base[legal][keep])
        assert np.allclose(priors[row], want, atol=1e-6), row
    assert np.allclose(priors[2], 1 / 20)  # no finite logit: uniform over the legal moves
    assert np.allclose(priors[3], _softmax(base[legal]), atol=1e-6)
    assert np.allclose(out.wdl[3], 1 / 3) and np.all(np.isfinite(out.wdl))
    assert np.allclose(priors[4], np.where(np.arange(20) % 2 == 0, 0.1, 0.0), atol=1e-6)
    assert np.asarray(flag).tolist() == [True, True, True, True, False]


def test_prng_keys_typed_and_legacy_are_one_key():
    import jax
    import numpy as np

    from zerochess.validation import as_rng_key

    typed = as_rng_key(jax.random.key(3))
    legacy = as_rng_key(jax.random.PRNGKey(3))
    assert np.array_equal(jax.random.key_data(typed), jax.random.key_data(legacy))
    assert np.array_equal(jax.random.key_data(legacy), jax.random.PRNGKey(3))
    for bad in (3, np.zeros(3, np.uint32), np.zeros(2, np.float32),
                jax.random.split(jax.random.key(0), 2)):
        with pytest.raises(ConfigError, match="rng_key"):
            as_rng_key(bad)


@pytest.fixture(scope="module")
def one_game():
    import jax
    import jax.numpy as jnp

    from zerochess.env import Env, start_states

    return Env(), jax.tree.map(lambda a: jnp.asarray(a[0]), start_states([chess.Board()]))


@pytest.mark.parametrize("action, fragment", [
    (12.7, "integer lc0 move index, got 12.7"), (True, "got True"),
    ("float32", "got dtype float32 .*not truncated"),
    ("batch", r"state's shape \[\] .*got an action of shape \[3\]"), (None, "got None")])
def test_env_refuses_actions_that_are_not_one_index(one_game, action, fragment):
    """A float was truncated to an index; one state with an action per batch failed
    inside jax (``eq got incompatible shapes``)."""
    import jax.numpy as jnp

    env, state = one_game
    value = {"float32": jnp.float32(12.0), "batch": jnp.zeros(3, jnp.int32)}.get(
        action, action) if isinstance(action, str) else action
    with pytest.raises(ConfigError, match=fragment):
        env.step(state, value)


def test_env_start_states_and_player_order_are_checked():
    import numpy as np

    from zerochess.env import Env, start_states

    import hostile

    with pytest.raises(ConfigError, match="at least one python-chess board"):
        start_states([])
    with pytest.raises(ConfigError, match="list of python-chess boards, got Board"):
        start_states(chess.Board())
    two = [chess.Board(), chess.Board()]
    for order in hostile.PLAYER_ORDERS_BAD.values():
        with pytest.raises(ConfigError, match="player_order"):
            start_states(two, order)
    with pytest.raises(ConfigError, match=r"player_order\[0\] must give players 0 and 1"):
        start_states(two, [[1, 1], [0, 1]])
    state = start_states(two, [1, 0])  # one order for every board
    assert np.array_equal(state.player_order, [[1, 0], [1, 0]])
    assert np.array_equal(state.current_player, [1, 1])
    with pytest.raises(ConfigError, match="key"):
        Env().init(0)


def _perft(argv, seconds=60.0):
    """``zerochess perft ARGV`` in a thread (today's code counted depth 10 for years):
    (exit status, stdout, stderr), or None if it did not answer in ``seconds``."""
    import contextlib

    from zerochess.cli import main

    out, err, result = io.StringIO(), io.StringIO(), []

    def target():
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            result.append(main(["perft", *argv]))

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    return (result[0], out.getvalue(), err.getvalue()) if result else None


def test_perft_refuses_a_count_that_cannot_finish_and_says_how_long():
    got = _perft(["startpos", "10"])
    assert got is not None, "perft 10 did not answer"
    status, _, err = got
    assert status == 2 and "--force" in err and "years" in err, err
    estimate = float(err.split("about ")[1].split(" move paths")[0])
    assert 6.9e13 / 10 < estimate < 6.9e13 * 10  # perft(10) = 69,352,859,712,417


def test_perft_estimates_and_reports_progress_on_long_counts(monkeypatch):
    """The estimate from the first plies' branching factor is within 20% of perft(5) from
    the start position (4,865,609, chessprogramming wiki); a count estimated longer than
    ``PROGRESS_SECONDS`` prints a line per root move and still gives the exact count."""
    from zerochess.cli import perft

    estimate = perft.estimate_paths(chess.Board(), 5)
    assert abs(estimate.paths / 4_865_609 - 1) < 0.2, estimate
    assert perft.estimate_paths(chess.Board(), 2) is None  # short counts: no estimate
    monkeypatch.setattr(perft, "PROGRESS_SECONDS", 0.0)
    status, out, err = _perft(["startpos", "3", "--rules", "host"])
    assert status == 0 and "perft(3) = 8902 " in out, out
    lines = [x for x in err.splitlines() if "root moves" in x]
    assert len(lines) == 20 and lines[-1].startswith("perft(3): 20/20 root moves"), err
    status, out, _ = _perft(["startpos", "3", "--rules", "host", "--divide"])
    assert status == 0 and "e2e4: 600" in out and "Nodes searched: 8902" in out


# --- issue 39's fresh round (tests/hostile.py FRESH_ROUND): what a new user tried next ----
# (each refused before anything compiles; the compiled search's part is in
# tests/test_hostile_search.py)


def _states(boards=None):
    import jax
    import jax.numpy as jnp

    from zerochess.env import start_states

    return jax.tree.map(jnp.asarray, start_states(boards or [chess.Board(), chess.Board()]))


@pytest.mark.parametrize("change, fragment", [
    (lambda s: __import__("jax").tree.map(lambda a: a[:0], s),
     "at least one game, got a batch of 0"),
    (lambda s: s.replace(keys=__import__("jax").numpy.concatenate([s.keys, s.keys[:1]])),
     r"states\.keys must have the batch size 2 first"),
    (lambda s: s.replace(terminated=s.terminated.astype("float32")),
     r"states\.terminated must be bools \[2\] .*got float32\[2\]"),
    (lambda s: s.replace(position=s.position._replace(board=s.position.board.astype("float32"))),
     r"states\.position\.board must be integers \[2, 64\]"),
    (lambda s: s.replace(boards=s.boards[:, :4]), r"states\.boards must be integers \[2, 8, 64\]"),
])
def test_roots_from_env_refuses_states_that_are_not_a_batch_of_games(change, fragment):
    """A batch of 0 games (an IndexError), fields of different batch sizes (a vmap error),
    a float ``terminated`` (jax's ``and does not accept dtype float32``) or a float board:
    now a ``ConfigError`` naming the field, what it got and what was expected."""
    import jax

    from zerochess.search.compiled import roots_from_env

    with pytest.raises(ConfigError, match=fragment):
        roots_from_env(change(_states()), jax.random.key(0))


@pytest.mark.parametrize("params, fragment", [
    ("config", "params must be SearchParams .*got SearchConfig"),
    (None, "params must be SearchParams .*got NoneType"),
    ("list", "params must be SearchParams .*got list"),
    ({"draw_score": [True, False]}, r"params\.draw_score must be float32\[2\] .*got bool\[2\]"),
    ({"n_scl": [5.5, 3.0]}, r"params\.n_scl must be int32\[2\] .*got float32\[2\]"),
    ({"fpu_absolute": [0.5, 0.0]}, r"params\.fpu_absolute must be bool\[2\]"),
    ({"hybrid_nodes": [0.0, 0.0]}, r"params\.hybrid_nodes must be float32\[2, 16\]"),
])
def test_search_refuses_params_of_another_type_kind_or_shape(pure_search, params, fragment):
    """A ``SearchConfig`` or a list of them given as ``params`` (an AttributeError or
    jax's "not a valid JAX type"), a bool draw score (``neg does not accept dtype bool``),
    a fractional ``n_scl`` (accepted and read as a float), a float flag or a field of the
    wrong shape: a ``ConfigError`` naming the field at trace time."""
    import numpy as np

    from zerochess import SearchConfig

    if isinstance(params, dict):
        (field, value), = params.items()
        dtype = np.float32 if isinstance(value[0], float) else bool
        params = pure_search.params.replace(**{field: np.asarray(value, dtype)})
    else:
        params = {"config": SearchConfig(), "list": [SearchConfig()] * 2}.get(params, params)
    with pytest.raises(ConfigError, match=fragment):
        pure_search(params=params)


def test_search_casts_real_params_and_reads_a_concrete_jax_count():
    """An integer ``cpuct`` or float16 temperature is cast to the field's dtype (as
    ``stack_configs`` makes it); ``num_simulations=jnp.int32(4)`` is 4, while a traced
    count says it must be static (it was "must be an integer, got JitTracer")."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from zerochess import SearchConfig
    from zerochess.search import compiled, stack_configs

    params = stack_configs([SearchConfig()] * 2)
    cast = compiled._check_params(params.replace(cpuct=np.array([1, 2]),
                                                 policy_temperature=np.ones(2, np.float16)), 2)
    assert cast.cpuct.dtype == np.float32 and cast.cpuct.tolist() == [1.0, 2.0]
    assert cast.policy_temperature.dtype == np.float32
    assert compiled._static_args(jnp.int32(4), None, np.int64(1), None, 7)[:2] == (4, 5)
    with pytest.raises(ConfigError, match="num_simulations must be static"):
        jax.eval_shape(lambda n: compiled._static_args(n, None, 1, None, 7), 4)
    with pytest.raises(ConfigError, match="num_simulations must be an integer"):
        compiled._static_args(np.bool_(True), None, 1, None, 7)


@pytest.mark.parametrize("field, value", [
    ("selection", 7), ("selection", -1), ("n_scl", 0), ("cpuct_base", 0.0),
    ("pb_c_base", math.nan), ("sc_temperature", math.nan), ("pb_c_init", -1.0)])
def test_search_refuses_more_per_tree_settings_out_of_range(pure_search, field, value):
    """Per-tree data that no ``SearchConfig`` can make, edited after ``stack_configs``:
    a selection rule index past ``SELECTION_NAMES`` (run as some other rule), ``n_scl``
    0, a 0 or NaN base: accepted silently before; now refused naming field and tree."""
    import numpy as np

    arr = np.asarray(getattr(pure_search.params, field)).copy()
    arr[1] = value
    with pytest.raises(ConfigError, match=rf"params\.{field} of tree 1 must be .* got"):
        pure_search(params=pure_search.params.replace(**{field: arr}))


def test_search_refuses_no_trees_float_roots_and_an_apply_fn_of_one_argument(pure_search, toy):
    import jax
    import numpy as np

    import hostile

    roots = hostile.host_roots([chess.Board(), chess.Board()])
    with pytest.raises(ConfigError, match="roots must hold at least one tree, got a batch of 0"):
        pure_search(roots=jax.tree.map(lambda a: a[:0], roots))
    with pytest.raises(ConfigError, match=r"roots\.legal must be integers .*float32\[2, 218\]"):
        pure_search(roots=roots.replace(legal=np.asarray(roots.legal, np.float32)))
    with pytest.raises(ConfigError, match=r"apply_fn must take \(model_params, planes\)"):
        pure_search(apply_fn=lambda planes: toy.apply(toy.params, planes))


@pytest.mark.parametrize("configs, kw, fragment", [
    ([], {}, "at least one SearchConfig"), ("config", {}, "list of SearchConfig, .*got "
                                            "SearchConfig"),
    ([{"cpuct": 1.0}], {}, r"configs\[0\] must be a SearchConfig"),
    ([None], {}, r"configs\[0\] must be a SearchConfig"), ("generator", {}, "got generator"),
    ([None], {}, "got None"), (["one"], {"moves_left": "no"}, "moves_left .*got 'no'"),
    (["one"], {"mate_check": 1}, "mate_check .*got 1")])
def test_stack_configs_refuses_what_is_not_a_list_of_configs(configs, kw, fragment):
    """``stack_configs([])`` gave 0-tree settings, a dict or a lone config an
    AttributeError/TypeError, and ``moves_left="no"`` turned the moves-left utility on."""
    from zerochess import SearchConfig
    from zerochess.search import stack_configs

    value = {"config": SearchConfig(), "generator": (SearchConfig() for _ in range(2))}.get(
        configs, configs) if isinstance(configs, str) else [
        SearchConfig() if c == "one" else c for c in configs]
    with pytest.raises(ConfigError, match=fragment):
        stack_configs(value, **kw)


def test_env_step_refuses_other_states_and_actions_that_would_wrap(one_game):
    """``Env.step`` on a dict (an AttributeError) or a batch of states (jax's
    "Incompatible shapes"); an action of 2**32 + e2e4 played e2e4 (int32 wrapping) and
    2**70 was called a float; player ids 2**32, 2**32 + 1 were read as 0, 1."""
    import numpy as np

    from zerochess.chess.policy_map import move_to_index
    from zerochess.env import Env, start_states

    env, state = one_game
    e2e4 = move_to_index(chess.Board(), chess.Move.from_uci("e2e4"))
    with pytest.raises(ConfigError, match=r"state must be a zerochess\.env\.State .*got dict"):
        env.step({"a": 1}, e2e4)
    with pytest.raises(ConfigError, match=r"one game's State, got a batch of shape \[2\]"):
        env.step(_states(), np.array([e2e4, e2e4]))
    for action in (2**32 + e2e4, np.int64(2**32 + e2e4), np.uint32(2**32 - 1), 2**70):
        with pytest.raises(ConfigError, match="outside int32"):
            env.step(state, action)
    with pytest.raises(ConfigError, match="player_order"):
        start_states([chess.Board()], np.array([2**32, 2**32 + 1], np.int64))
    assert Env(max_steps=np.int64(5)).max_steps == 5


@pytest.mark.parametrize("depth", ["1_0", "\u0663", "\uff13", "1e1"])
def test_perft_reads_ascii_digits_only(depth):
    """``int()`` read "1_0" as 10 and other scripts' digits as ASCII ones."""
    got = _perft(["startpos", depth, "--rules", "host"])
    assert got is not None and got[0] == 2 and "DEPTH must be an integer" in got[2], got
    got = _perft(["startpos", "1", "--rules", "host", "--batch", "1_024"])
    assert got is not None and got[0] == 2 and "--batch must be an integer" in got[2], got


@pytest.mark.parametrize("kw, fragment", [
    ({"num_simulations": 0}, "num_simulations must be >= 1"),
    ({"num_simulations": 2.5}, "num_simulations must be an integer"),
    ({"num_simulations": True}, "num_simulations must be an integer"),
    ({"batch": 0}, "batch must be >= 1"), ({"batch": -1}, "batch must be >= 1"),
    ({"openings": []}, "at least one board"), ({"openings": "board"}, "got Board"),
    ({"openings": [chess.STARTING_FEN]}, "expected a chess.Board"),
    ({"max_plies": 0}, "max_plies must be >= 1"), ({"plies_per_call": 0}, "plies_per_call"),
    ({"seed": -1}, "seed must be in"), ({"seed": 1.5}, "seed must be an integer"),
    ({"white": {"cpuct": 1.0}}, "white must be a SearchConfig"),
    ({"black_temperature": 0.5}, "black_temperature must be a TemperatureSchedule"),
    ({"model": None}, "model must be a zerochess Model")])
def test_device_selfplay_refuses_bad_counts_before_compiling(toy, kw, fragment):
    """``device_selfplay.play`` checked nothing: a count of 0 or a fraction went on to
    the compile (or failed inside it); now each is refused at once, naming it."""
    from zerochess import SearchConfig
    from zerochess.errors import PositionError
    from zerochess.training.device_selfplay import play

    args = dict(model=toy, openings=[chess.Board()], white=SearchConfig(),
                black=SearchConfig(), num_simulations=2, batch=1, max_plies=2)
    args.update({k: chess.Board() if v == "board" else v for k, v in kw.items()})
    with pytest.raises((ConfigError, PositionError), match=fragment):
        play(**args)


def _device_roots():
    """Two start-position roots as jax arrays (as ``roots_from_env`` gives them)."""
    import jax
    import jax.numpy as jnp

    import hostile

    return jax.tree.map(jnp.asarray, hostile.host_roots([chess.Board(), chess.Board()]))


def test_search_refuses_trees_that_cannot_fit_before_compiling(pure_search, monkeypatch):
    """``num_simulations=10**8`` traced, compiled and then failed to allocate (a tree of
    10**8 nodes per root); now refused at trace time with the memory it needs (here a
    memory of 1 GiB, so the test does not depend on the machine; wrapped in ``eval_shape``
    so the code before the fix traces without allocating)."""
    import jax

    from zerochess.search import memory

    monkeypatch.setattr(memory, "memory_bytes", lambda: (2**30, "a memory of 1 GiB"))
    with pytest.raises(ConfigError, match=r"2 search tree\(s\) of 100,000,001 nodes need "
                                          r".*GiB .*more than a memory of 1 GiB .*; num_nodes "
                                          r"\(with edges_per_node=8\) must be at most"):
        jax.eval_shape(lambda: pure_search(num_simulations=10**8, num_nodes=None,
                                           edges_per_node=8, roots=_device_roots()))


def test_search_refuses_an_edge_pool_past_int32_indices(pure_search, monkeypatch):
    """With memory enough (an accelerator of 141 GB holds 10**7 nodes of 218 edges), a
    pool of num_nodes * edges_per_node > 2**31 - 1 entries raised numpy's OverflowError
    from inside the tree's allocation; now a ``ConfigError`` naming both arguments."""
    import jax

    from zerochess.search import memory

    monkeypatch.setattr(memory, "memory_bytes", lambda: (2**62, "a large memory"))
    with pytest.raises(ConfigError, match=r"num_nodes=10,000,001 with edges_per_node=218 .*"
                                          r"more than int32"):
        jax.eval_shape(lambda: pure_search(num_simulations=10**7, num_nodes=None,
                                           roots=_device_roots()))
