"""The two test tiers (README, "Fresh machine"): the README holds both commands, and
``.ci/run`` runs exactly those, both, passing pytest's exit status through (5, "no tests
collected", included) with skips turned into failures."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def readme_block(marker: str, text: str | None = None) -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8") if text is None else text
    match = re.search(rf"^<!-- {marker} -->\n```bash\n(.*?)\n```", text, re.M | re.S)
    assert match, f"README.md has no {marker} block"
    return match.group(1)


def test_the_readme_commands_split_the_suite_into_two_tiers() -> None:
    tier1, tier2 = readme_block("test-command"), readme_block("test-command-tier2")
    assert '-m "not slow and not tier2"' in tier1 and '-m "tier2 and not slow"' in tier2
    for command in (tier1, tier2):
        assert "-n 2 --dist loadfile" in command and command.count("pytest") == 1
    assert 'pip install -e ".[test]"' in tier1 and ". .venv/bin/activate" in tier2
    markers = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert '"tier2: ' in markers and '"slow: ' in markers


def _run_ci(tmp_path: Path, first: str, second: str | None) -> subprocess.CompletedProcess:
    (tmp_path / ".ci").mkdir()
    shutil.copy(REPO / ".ci" / "run", tmp_path / ".ci" / "run")
    readme = f"# x\n\n<!-- test-command -->\n```bash\n{first}\n```\n"
    if second is not None:
        readme += f"\n<!-- test-command-tier2 -->\n```bash\n{second}\n```\n"
    (tmp_path / "README.md").write_text(readme, encoding="utf-8")
    env = {**os.environ, "ZEROCHESS_CI_SKIP_SETUP": "1"}
    return subprocess.run(["bash", str(tmp_path / ".ci" / "run")], env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("first, second, status", [
    ("echo one", "echo two", 0),
    ("echo one; exit 5", "echo two", 5),  # pytest's "no tests collected" is not hidden
    ("echo one", "echo two; exit 3", 3),
    ("echo one; exit 1", "echo two; exit 2", 1),  # the first failure's status
])
def test_ci_runs_both_blocks_and_passes_the_first_failure_through(tmp_path, first, second,
                                                                 status) -> None:
    proc = _run_ci(tmp_path, first, second)
    assert proc.returncode == status, proc.stderr
    out = proc.stdout.splitlines()
    assert "one" in out and "two" in out  # both tiers ran, in order
    assert out.index("one") < out.index("two")
    assert "ZEROCHESS_REQUIRE_LC0=1 ZEROCHESS_NO_SKIPS=1" in proc.stdout


def test_ci_refuses_a_readme_without_the_second_block(tmp_path) -> None:
    proc = _run_ci(tmp_path, "echo one", None)
    assert proc.returncode == 1 and "test-command-tier2" in proc.stderr
    assert "one" not in proc.stdout


def test_ci_exports_the_no_skip_and_lc0_flags(tmp_path) -> None:
    proc = _run_ci(tmp_path, 'echo "$ZEROCHESS_REQUIRE_LC0$ZEROCHESS_NO_SKIPS"', "true")
    assert proc.returncode == 0 and "11" in proc.stdout.splitlines()


def test_a_skip_fails_under_no_skips(pytester: pytest.Pytester, monkeypatch) -> None:
    """``no_skips`` (conftest loads it): with ZEROCHESS_NO_SKIPS=1 a skipped test is
    reported failed, quoting why; without it, it stays a skip."""
    pytester.makepyfile("import pytest\n\ndef test_skips():\n    pytest.skip('no reference')\n"
                        "\ndef test_passes():\n    pass\n")
    monkeypatch.setenv("ZEROCHESS_NO_SKIPS", "1")
    result = pytester.runpytest("-p", "no_skips", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(["*skipped under ZEROCHESS_NO_SKIPS=1*no reference*"])
    monkeypatch.delenv("ZEROCHESS_NO_SKIPS")
    pytester.runpytest("-p", "no_skips", "-p", "no:cacheprovider").assert_outcomes(
        skipped=1, passed=1)


@pytest.mark.tier2  # collects 30 test files: ~30 s of imports
def test_the_tiers_by_cost_name_collected_tests() -> None:
    """Every node id ``tiers_by_cost`` moves is a test pytest collects: a renamed test or
    parameter would otherwise fall back to its file's tier unnoticed."""
    from tiers_by_cost import TO_SLOW, TO_TIER2

    run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p",
                          "no:cacheprovider", *sorted({i.split("::")[0] for i in
                                                        TO_TIER2 | TO_SLOW})],
                         cwd=REPO, capture_output=True, text=True, timeout=600)
    collected = set(run.stdout.split())
    collected |= {i.split("::")[0] for i in collected}
    assert not (TO_TIER2 | TO_SLOW) - collected, sorted((TO_TIER2 | TO_SLOW) - collected)
    assert not TO_TIER2 & TO_SLOW
