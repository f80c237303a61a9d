"""The search-core UCI options reach the engine's ``Searcher``: MinibatchSize (leaves per
step), NNCacheSize (evaluation cache entries), CacheHistoryLength. A change rebuilds the
searcher at the next ``isready`` (never at ``setoption``, never inside a search); an
unchanged value keeps it. Nothing here compiles: the driver is built without warm-up.
"""

from __future__ import annotations

import io

import pytest

from zerochess.uci.engine import UciEngine, build_driver


@pytest.fixture
def engine():
    stream = io.StringIO()
    eng = UciEngine(stream, driver_factory=build_driver)
    eng.handle("setoption name MaxTreeNodes value 256")
    return eng, stream


def _send(eng, stream, *lines: str) -> list[str]:
    start = len(stream.getvalue())
    for line in lines:
        eng.handle(line)
    return stream.getvalue()[start:].splitlines()


def test_uci_lists_the_core_options_as_lc0(engine):
    eng, stream = engine
    out = _send(eng, stream, "uci")
    # lc0 0.31's lines (src/search/classic/params.cc, src/neural/shared_params.cc)
    for line in [
        "option name MinibatchSize type spin default 0 min 0 max 1024",
        "option name MaxPrefetch type spin default 32 min 0 max 1024",
        "option name NNCacheSize type spin default 2000000 min 0 max 999999999",
        "option name CacheHistoryLength type spin default 0 min 0 max 7",
        "option name MaxCollisionEvents type spin default 917 min 1 max 65536",
        "option name MaxCollisionVisits type spin default 80000 min 1 max 100000000",
        "option name MaxCollisionVisitsScalingStart type spin default 28 min 1 max 100000",
        "option name MaxCollisionVisitsScalingEnd type spin default 145000 min 0 max 100000000",
        "option name MaxCollisionVisitsScalingPower type string default 1.250000",
        "option name OutOfOrderEval type check default true",
        "option name MaxOutOfOrderEvalsFactor type string default 2.400000",
        "option name StickyEndgames type check default true",
        "option name TwoFoldDraws type check default true",
    ]:
        assert line in out, line


def test_searcher_options_build_the_searcher(engine):
    eng, stream = engine
    out = _send(eng, stream, "setoption name MinibatchSize value 4",
                "setoption name NNCacheSize value 3000",
                "setoption name CacheHistoryLength value 2", "isready")
    assert out[-1] == "readyok" and not any("error" in x for x in out), out
    searcher = eng.driver.searcher
    assert (searcher.leaves_per_step, searcher.cache_size, searcher.cache_history_length) \
        == (4, 3000, 2)
    assert searcher._cache is not None and searcher._cache.capacity >= 3000


def test_lc0_defaults_pick_the_engine_values(engine):
    eng, stream = engine
    _send(eng, stream, "isready")
    searcher = eng.driver.searcher
    # MinibatchSize 0: the backend's choice (16 leaves: one position fills a batch);
    # NNCacheSize 2000000 is capped (an entry holds K float16 priors on the device)
    assert searcher.leaves_per_step == 16
    assert 0 < searcher.cache_size < 2_000_000
    assert searcher.cache_history_length == 0  # lc0's default: position-only keys
    _send(eng, stream, "setoption name NNCacheSize value 0", "isready")
    assert eng.driver.searcher.cache_size == 0 and eng.driver.searcher._cache is None


def test_a_change_rebuilds_the_searcher_at_isready_only(engine):
    eng, stream = engine
    _send(eng, stream, "isready")
    first = eng.driver
    _send(eng, stream, "setoption name MinibatchSize value 0", "isready")  # same value
    assert eng.driver is first
    _send(eng, stream, "setoption name MinibatchSize value 8")
    assert eng._driver is first  # setoption does not rebuild ...
    with pytest.raises(RuntimeError, match="not ready"):
        eng.driver  # noqa: B018 - ... but the old searcher is not used for a search
    _send(eng, stream, "isready")
    assert eng.driver is not first and eng.driver.searcher.leaves_per_step == 8
    second = eng.driver
    _send(eng, stream, "setoption name CacheHistoryLength value 7", "isready")
    assert eng.driver is not second and eng.driver.searcher.cache_history_length == 7
    # a per-search option (SearchConfig data) never rebuilds the searcher
    third = eng.driver
    _send(eng, stream, "setoption name MaxCollisionEvents value 3",
          "setoption name StickyEndgames value false", "isready")
    assert eng.driver is third
    config = eng.options.search_config()
    assert config.max_collision_events == 3 and config.certainty_propagation is False


def test_pending_and_ignored_options_say_so_at_isready(engine):
    eng, stream = engine
    out = _send(eng, stream, "setoption name MaxPrefetch value 0",
                "setoption name OutOfOrderEval value false",
                "setoption name MinibatchSize value 2", "isready")
    notes = [x for x in out if x.startswith("info string option")]
    assert len(notes) == 2, out  # MinibatchSize is used: no note
    assert "MaxPrefetch=0 is stored but not used" in notes[0]
    assert "OutOfOrderEval=False is accepted for lc0 compatibility but has no effect" \
        in notes[1]
