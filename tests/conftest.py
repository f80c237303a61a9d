"""Shared test support.

Test-only helpers live here in ``tests/`` and are never installed with the package:
``lc0_reference`` (lc0's bindings and Maia-1900 as the reference, pip-installed into the
test environment on first use; seeded game generators; lc0 protobuf writers). pytest puts
``tests/`` on ``sys.path`` (``pythonpath`` in pyproject.toml), so test modules import it
as ``from lc0_reference import ...``.
"""

from __future__ import annotations

import pytest

from zerochess.games import lc0_maia_available

from lc0_reference import Lc0Unavailable, ensure_lc0


@pytest.fixture(scope="session")
def maia() -> None:
    """The ``lc0`` program and Maia-1900, installed on first use (test-only, GPL, never
    vendored); skips when they cannot be installed here."""
    try:
        ensure_lc0()
    except Lc0Unavailable as exc:
        pytest.skip(f"lc0 reference unavailable: {exc}")
    if not lc0_maia_available():
        pytest.skip("lc0 / Maia-1900 not found after installing them")


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
