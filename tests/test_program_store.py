"""Compiled programs kept on disk (``zerochess.program_store``): a warm process loads them
without tracing and computes the same; bad files fall back to compiling (logged, never a
crash); another shape, static argument, environment or source never loads a stored
program; and a searcher's programs come back from disk with identical results."""

from __future__ import annotations

import logging
import os

import chess
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zerochess import program_store
from zerochess.chess.expander import Expander
from zerochess.neural.toy import linear_model
from zerochess.search import api
from zerochess.search.api import Searcher
from zerochess.search.config import SearchConfig
from zerochess.search.programs import StateProgram


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A fresh store directory for the test; the programs held in memory are dropped
    before and after (as in a new process)."""
    directory = tmp_path / "programs"
    monkeypatch.setattr(program_store.disk, "DIRECTORY", str(directory))
    program_store.clear()
    yield directory
    program_store.clear()


def _delta(before: dict) -> dict:
    return {k: program_store.STATS[k] - before.get(k, 0) for k in
            ("traced", "compiled", "loaded", "stored", "rejected", "memory_only")}


def _affine(x, y, scale):
    return x * scale + sum(leaf.sum() for leaf in jax.tree.leaves(y))


def _make(identity="test-affine-v1"):
    return program_store.Program(_affine, static_argnums=(2,), identity=identity)


def _files(directory):
    return sorted(p.name for p in directory.glob("*" + program_store.SUFFIX))


def test_warm_load_does_not_trace_and_computes_the_same(store):
    x, y = np.arange(6, dtype=np.float32), np.ones(3, np.float32)
    want = x * 3 + 3  # numpy reference
    before = dict(program_store.STATS)
    np.testing.assert_array_equal(_make()(x, y, 3), want)
    assert _delta(before) == {"traced": 1, "compiled": 1, "loaded": 0, "stored": 1,
                              "rejected": 0, "memory_only": 0}
    assert len(_files(store)) == 1
    program_store.clear()  # as a new process: nothing in memory
    before = dict(program_store.STATS)
    fresh = _make()  # a new object too
    np.testing.assert_array_equal(fresh(x, y, 3), want)
    np.testing.assert_array_equal(fresh(x + 1, y, 3), want + 3)  # values are data
    assert _delta(before) == {"traced": 0, "compiled": 0, "loaded": 1, "stored": 0,
                              "rejected": 0, "memory_only": 0}


def test_other_shapes_statics_and_identities_are_other_programs(store):
    x, y = np.arange(6, dtype=np.float32), np.ones(3, np.float32)
    _make()(x, y, 3)
    program_store.clear()
    before = dict(program_store.STATS)
    # another shape, dtype, static value, argument structure, identity: each compiles anew
    np.testing.assert_array_equal(_make()(x[:4], y, 3), x[:4] * 3 + 3)
    np.testing.assert_array_equal(_make()(x.astype(np.int32), y.astype(np.int32), 3),
                                  x.astype(np.int32) * 3 + 3)
    np.testing.assert_array_equal(_make()(x, y, 5), x * 5 + 3)
    np.testing.assert_array_equal(_make()(x, (y, y), 3), x * 3 + 6)
    np.testing.assert_array_equal(_make("test-affine-v2")(x, y, 3), x * 3 + 3)
    assert _delta(before)["compiled"] == 5 and _delta(before)["loaded"] == 0
    assert len(_files(store)) == 6


def test_another_environment_or_source_never_loads(store, monkeypatch):
    x, y = np.arange(6, dtype=np.float32), np.ones(3, np.float32)
    _make()(x, y, 3)
    program_store.clear()
    real = program_store.environment_key()
    monkeypatch.setattr(program_store.identity, "environment_key", lambda: real.replace(
        jax.__version__, jax.__version__ + ".other"))
    before = dict(program_store.STATS)
    np.testing.assert_array_equal(_make()(x, y, 3), x * 3 + 3)
    assert _delta(before)["loaded"] == 0 and _delta(before)["compiled"] == 1
    # the same environment, edited sources
    monkeypatch.setattr(program_store.identity, "environment_key", lambda: real)
    monkeypatch.setattr(program_store.sources, "source_digest", lambda key, root=None: "edited")
    program_store.clear()
    before = dict(program_store.STATS)
    np.testing.assert_array_equal(_make()(x, y, 3), x * 3 + 3)
    assert _delta(before)["loaded"] == 0 and _delta(before)["compiled"] == 1
    monkeypatch.undo()
    monkeypatch.setattr(program_store.disk, "DIRECTORY", str(store))
    program_store.clear()
    before = dict(program_store.STATS)
    _make()(x, y, 3)  # and the unchanged ones load
    assert _delta(before)["loaded"] == 1 and _delta(before)["compiled"] == 0


def _fake_package(root):
    """A package tree named zerochess: a imports b at module level and c inside a
    function, d only under TYPE_CHECKING; b imports f relatively; e is imported by
    nobody."""
    pkg = root / "zerochess"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""root"""\n')
    (pkg / "sub" / "__init__.py").write_text("from zerochess.sub import b\n")
    (pkg / "sub" / "a.py").write_text(
        "from typing import TYPE_CHECKING\nfrom zerochess.sub import (\n    b,\n)\n"
        "if TYPE_CHECKING:\n    from zerochess import d\n"
        "def f():\n    from zerochess.c import g\n    return g\n")
    (pkg / "sub" / "b.py").write_text("from . import f\nB = 2\n")
    (pkg / "sub" / "f.py").write_text("from ..c import g\n")
    (pkg / "c.py").write_text("def g():\n    return 1\n")
    (pkg / "d.py").write_text("D = 4\n")
    (pkg / "e.py").write_text("E = 5\n")
    return pkg


def test_source_digest_follows_the_code_a_program_can_run(tmp_path):
    """A program's key covers the source of the modules it names, what they import (in
    functions too) and their packages; a change anywhere else keeps it."""
    pkg = _fake_package(tmp_path)
    assert program_store.source_closure(["zerochess.sub.a.f"], pkg) == [
        "zerochess", "zerochess.c", "zerochess.sub", "zerochess.sub.a", "zerochess.sub.b",
        "zerochess.sub.f"]
    key = "zerochess.sub.a.f\nfn:zerochess.sub.a.f@0123"
    first = program_store.source_digest(key, pkg)
    for unrelated in ("d.py", "e.py"):
        (pkg / unrelated).write_text("changed = True\n")
        program_store.forget_sources()
        assert program_store.source_digest(key, pkg) == first, unrelated
    for related in ("c.py", "sub/b.py", "sub/f.py", "sub/__init__.py", "__init__.py"):
        text = (pkg / related).read_text()
        (pkg / related).write_text(text + "# edited\n")
        program_store.forget_sources()
        assert program_store.source_digest(key, pkg) != first, related
        (pkg / related).write_text(text)
    program_store.forget_sources()
    assert program_store.source_digest(key, pkg) == first
    assert "source" not in program_store.environment_key()


def test_the_search_programs_do_not_depend_on_the_engines_or_the_command_line():
    """Editing the UCI driver, the analysis engine or the CLI keeps the stored search
    programs; editing the search, the rules or the networks does not."""
    closure = program_store.source_closure(["zerochess.search.api._select"])
    assert {"zerochess.search.selection", "zerochess.search.step", "zerochess.chess.rules",
            "zerochess.neural.model", "zerochess.program_store"} <= set(closure)
    assert not [m for m in closure if m.startswith(("zerochess.uci", "zerochess.analysis",
                                                    "zerochess.cli", "zerochess.games"))]
    key = program_store.program_key("zerochess.search.api._select", (), None, (), ())
    assert key.endswith("source=" + program_store.source_digest(key.rpartition("\n")[0]))


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "other_program"])
def test_bad_files_are_logged_and_compiled_again(store, caplog, damage):
    x, y = np.arange(6, dtype=np.float32), np.ones(3, np.float32)
    _make()(x, y, 3)
    [path] = (store / name for name in _files(store))
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        path.write_bytes(data[:-100] + bytes([data[-100] ^ 0xFF]) + data[-99:])
    elif damage == "garbage":
        path.write_bytes(b"\x00" * 64)
    else:  # a valid file of another program (other shapes) under this program's name
        _make()(x[:2], y, 3)
        [other] = (store / name for name in _files(store) if name != path.name)
        path.write_bytes(other.read_bytes())
    program_store.clear()
    before = dict(program_store.STATS)
    with caplog.at_level(logging.WARNING, logger="zerochess.programs"):
        got = _make()(x, y, 3)
    np.testing.assert_array_equal(got, x * 3 + 3)
    assert _delta(before)["rejected"] == 1 and _delta(before)["compiled"] == 1
    assert any("compiling it again" in r.getMessage() and path.name in r.getMessage()
               for r in caplog.records)
    program_store.clear()  # the file was rewritten: it loads now
    before = dict(program_store.STATS)
    np.testing.assert_array_equal(_make()(x, y, 3), x * 3 + 3)
    assert _delta(before)["loaded"] == 1 and _delta(before)["rejected"] == 0


def test_a_stored_program_that_fails_to_run_is_compiled_again(store, caplog, monkeypatch):
    x, y = np.arange(6, dtype=np.float32), np.ones(3, np.float32)
    _make()(x, y, 3)
    program_store.clear()
    calls = []
    real_load = program_store.load

    def broken_load(name, key, in_tree):
        found = real_load(name, key, in_tree)

        def fail(*args):
            calls.append(args)
            raise jax.errors.JaxRuntimeError("NOT_FOUND: Function fusion not found")

        return None if found is None else (fail, found[1])

    monkeypatch.setattr(program_store.disk, "load", broken_load)
    with caplog.at_level(logging.WARNING, logger="zerochess.programs"):
        np.testing.assert_array_equal(_make()(x, y, 3), x * 3 + 3)
    assert len(calls) == 1
    assert any("failed to run" in r.getMessage() for r in caplog.records)


def test_unstable_statics_stay_in_memory(store):
    def local(x, fn):
        return fn(x)

    before = dict(program_store.STATS)
    p = program_store.Program(local, static_argnums=(1,))  # a test function: no identity
    np.testing.assert_allclose(p(np.ones(2, np.float32), jnp.sin), np.sin(np.ones(2)), rtol=1e-6)
    assert _delta(before)["memory_only"] == 1 and _files(store) == []
    with pytest.raises(program_store.Unstable):
        program_store.fingerprint(lambda x: x)  # not zerochess code
    # zerochess functions: stable, and two different ones differ
    a = program_store.fingerprint(linear_model(0).apply)
    assert a == program_store.fingerprint(linear_model(1).apply)  # same code, params apart
    assert a != program_store.fingerprint(api._prepare_state)


def test_donation_and_state_programs_after_a_load(store):
    def bump(state, k):
        return {**state, "count": state["count"] + k}, state["count"].sum()

    def run(program):
        state = {"count": jnp.arange(4), "fixed": jnp.ones(3)}
        state, total = program(state, jnp.int32(2))
        state, total2 = program(state, jnp.int32(2))
        return np.asarray(state["count"]), int(total), int(total2), np.asarray(state["fixed"])

    cold = run(StateProgram(bump, identity="test-bump-v1"))
    program_store.clear()
    before = dict(program_store.STATS)
    warm = run(StateProgram(bump, identity="test-bump-v1"))
    assert _delta(before)["traced"] == 0 and _delta(before)["loaded"] == 1
    want = (np.arange(4) + 4, 6, 14, np.ones(3))  # plain-Python reference
    for got in (cold, warm):
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1:3] == want[1:3]
        np.testing.assert_array_equal(got[3], want[3])


def test_store_off_keeps_programs_in_memory(tmp_path, monkeypatch):
    monkeypatch.setattr(program_store.disk, "DIRECTORY", "")
    program_store.clear()
    x, y = np.arange(6, dtype=np.float32), np.ones(3, np.float32)
    before = dict(program_store.STATS)
    np.testing.assert_array_equal(_make()(x, y, 3), x * 3 + 3)
    assert _delta(before)["compiled"] == 1 and _delta(before)["stored"] == 0
    assert program_store.store_dir() is None


# --- a searcher's programs ------------------------------------------------------------------

BOARDS = [chess.Board(), chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")]


def _search(leaves):
    searcher = Searcher(linear_model(seed=2), max_nodes=17, leaves_per_step=leaves,
                        expander=Expander(0))
    return searcher.results(searcher.run(searcher.init(BOARDS, SearchConfig(n_scl=3),
                                                       seed=4), 16))


@pytest.mark.parametrize("leaves", [4, pytest.param(1, marks=pytest.mark.slow)])
def test_a_searcher_reloads_its_programs_without_tracing(store, leaves):
    """The programs of init, run and results come back from disk (no trace, no compile) in
    a 'new process', with identical results."""
    cold = _search(leaves)
    program_store.clear()
    jax.clear_caches()
    before = dict(program_store.STATS)
    warm = _search(leaves)
    delta = _delta(before)
    assert delta["traced"] == 0 and delta["compiled"] == 0 and delta["memory_only"] == 0
    assert delta["loaded"] >= 5  # write_roots, select, prepare/evaluate, finish, summarize
    for x, y in zip(cold, warm, strict=True):
        assert x.moves == y.moves and list(x.visits) == list(y.visits)
        np.testing.assert_array_equal(x.q, y.q)
        np.testing.assert_array_equal(x.prior, y.prior)
        assert x.pv == y.pv and x.best_move == y.best_move
    assert api._select._cache_size() > 0


def test_static_arguments_by_position_or_keyword(store):
    """As with jax.jit, a static argument named in static_argnames may come by position
    (the UCI driver passes ``_lines``'s length so)."""
    x, y = np.arange(6, dtype=np.float32), np.ones(3, np.float32)
    p = program_store.Program(_affine, static_argnames="scale", identity="test-affine-kw")
    np.testing.assert_array_equal(p(x, y, 3), x * 3 + 3)
    np.testing.assert_array_equal(p(x, y, scale=4), x * 4 + 3)
    q = program_store.Program(_affine, static_argnums=2, identity="test-affine-kw2")
    np.testing.assert_array_equal(q(x, y, scale=5), x * 5 + 3)


def test_the_store_is_kept_to_its_cap_least_recently_used_first(store, monkeypatch):
    x, y = np.arange(6, dtype=np.float32), np.ones(3, np.float32)
    _make()(x, y, 2)
    (first,) = (store / name for name in _files(store))
    _make()(x, y, 3)  # another static: another file
    (second,) = (store / name for name in _files(store) if name != first.name)
    size = max(first.stat().st_size, second.stat().st_size)  # the three files differ by bytes
    os.utime(first, (1_000, 1_000))  # older than the other...
    os.utime(second, (2_000, 2_000))
    program_store.clear()
    _make()(x, y, 2)  # ...but loading the first makes it the most recently used
    assert first.stat().st_mtime > 2_000
    monkeypatch.setattr(program_store.disk, "MAX_BYTES", int(2.5 * size))  # two files, not three
    _make()(x, y, 4)  # a third file: over the cap, so the least recently used goes
    assert first.exists() and not second.exists()
    assert len(_files(store)) == 2
    assert program_store.prune(store, 0) == 2 and _files(store) == []


def _manifests(directory):
    return sorted(directory.glob("*" + program_store.MANIFEST_SUFFIX))


def test_preloading_loads_last_times_programs_ahead_and_computes_the_same(store):
    """A ``preloading`` block records the files its programs use; the next block with the
    same tag deserializes them in threads, and the programs it then calls come from
    there (counted as preloaded), untraced and computing what numpy does. Programs the
    new block does not call are dropped at its end; another tag preloads nothing."""
    x, y = np.arange(6, dtype=np.float32), np.ones(3, np.float32)
    with program_store.preloading("warm-up A") as submitted:
        assert submitted == 0  # nothing recorded yet
        _make()(x, y, 3)
        _make()(x[:4], y, 5)
    assert len(_files(store)) == 2 and len(_manifests(store)) == 1
    program_store.clear()
    before = dict(program_store.STATS)
    with program_store.preloading("warm-up A", workers=2) as submitted:
        assert submitted == 2
        np.testing.assert_array_equal(_make()(x, y, 3), x * 3 + 3)  # one of the two used
    assert program_store.STATS["preloaded"] - before.get("preloaded", 0) == 1
    assert _delta(before) == {"traced": 0, "compiled": 0, "loaded": 1, "stored": 0,
                              "rejected": 0, "memory_only": 0}
    assert program_store.disk._PRELOADED == {}  # the unused one is not kept
    # the manifest now lists only the program this block used
    program_store.clear()
    with program_store.preloading("warm-up A") as submitted:
        assert submitted == 1
    with program_store.preloading("warm-up B") as submitted:
        assert submitted == 0


def test_a_nested_block_does_not_preload_what_its_enclosing_block_loaded(store):
    """The UCI engine's build block encloses the driver's warm-up block: a program the
    outer block has loaded is in memory, so the inner one does not deserialize it again."""
    x, y = np.arange(6, dtype=np.float32), np.ones(3, np.float32)
    with program_store.preloading("inner"):
        _make()(x, y, 3)
    program_store.clear()
    with program_store.preloading("outer"):
        np.testing.assert_array_equal(_make()(x, y, 3), x * 3 + 3)
        with program_store.preloading("inner") as submitted:
            assert submitted == 0
    program_store.clear()
    with program_store.preloading("inner") as submitted:  # outside: preloaded as before
        assert submitted == 1


@pytest.mark.parametrize("damage", ["program", "manifest"])
def test_preloading_a_damaged_file_or_manifest_falls_back(store, caplog, damage):
    """A damaged program file found by the preloader is rejected and compiled again, as a
    plain load does; a damaged manifest preloads nothing. Neither raises."""
    x, y = np.arange(6, dtype=np.float32), np.ones(3, np.float32)
    with program_store.preloading("warm-up"):
        _make()(x, y, 3)
    program_store.clear()
    if damage == "program":
        [path] = (store / name for name in _files(store))
        path.write_bytes(path.read_bytes()[:100])
    else:
        [manifest] = _manifests(store)
        manifest.write_text('{"files": ["../../etc/passwd", 7, "x.zxp"]', encoding="utf-8")
    before = dict(program_store.STATS)
    with caplog.at_level(logging.WARNING, logger="zerochess.programs"), \
            program_store.preloading("warm-up") as submitted:
        np.testing.assert_array_equal(_make()(x, y, 3), x * 3 + 3)
    if damage == "program":
        assert submitted == 1
        assert _delta(before)["rejected"] == 1 and _delta(before)["compiled"] == 1
        assert any("compiling it again" in r.getMessage() for r in caplog.records)
    else:
        assert submitted == 0
        assert _delta(before)["loaded"] == 1 and _delta(before)["rejected"] == 0


def test_precompile_from_shapes_makes_the_real_call_compile_nothing(store):
    """``precompile`` with ``abstract`` arguments (shapes only) compiles the program a later
    call with real arrays runs; that call traces and compiles nothing; listeners hear the
    compile and (in a new process) the load, and a second precompile is free."""
    x, y = np.arange(6, dtype=np.float32), np.ones(3, np.float32)
    heard: list[tuple[str, str]] = []
    with program_store.listening(lambda event, name, _s: heard.append((event, name))):
        program = _make()
        program.precompile(*program_store.abstract((x, y)), 3)
        assert heard == [("compiled", program.name)]
        before = dict(program_store.STATS)
        np.testing.assert_array_equal(program(x, y, 3), x * 3 + 3)
        assert _delta(before)["traced"] == 0 and _delta(before)["compiled"] == 0
        program_store.clear()  # a new process: the file is loaded, not compiled
        _make().precompile(*program_store.abstract((x, y)), 3)
    assert [e for e, _ in heard] == ["compiled", "loaded"]
    assert isinstance(program_store.abstract(x), jax.ShapeDtypeStruct)
    assert program_store.aval_key(program_store.abstract(jnp.float32(2.0) * 1)) == \
        program_store.aval_key(jnp.float32(2.0) * 1)


def test_state_program_precompiles_from_shapes(store):
    state = {"a": np.zeros(4, np.float32), "b": np.ones(4, np.float32)}

    def bump(s, k):
        return {"a": s["a"] + k, "b": s["b"]}

    program = StateProgram(bump, identity="test-bump-v1")
    program.precompile(program_store.abstract(state), jax.ShapeDtypeStruct((), jnp.float32))
    before = dict(program_store.STATS)
    out = program(state, jnp.float32(2.0))
    assert _delta(before)["traced"] == 0 and _delta(before)["compiled"] == 0
    np.testing.assert_array_equal(out["a"], np.full(4, 2.0, np.float32))
