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
        assert "-n 2 --dist loadgroup --no-loadscope-reorder" in command
        assert command.count("pytest") == 1
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


def test_the_files_go_to_the_workers_costliest_first() -> None:
    """The README's ``--dist loadgroup --no-loadscope-reorder`` takes the collection order:
    conftest must put the costliest unit first and keep each file's tests together, and the
    cost table may name only files that exist (a renamed file would silently go last)."""
    from tiers_by_cost import FILE_SECONDS, SHARED_PROGRAM_GROUPS

    names = {p.stem for p in (REPO / "tests").glob("test_*.py")}
    named = {n for table in FILE_SECONDS.values() for n in table} | set(SHARED_PROGRAM_GROUPS)
    assert not named - names, sorted(named - names)
    cheap, dear = "test_chess960", "test_search_reference"  # 20 s and 410 s in the table
    assert FILE_SECONDS["default"][cheap] < FILE_SECONDS["default"][dear]
    run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p",
                          "no:cacheprovider", "-m", "not slow and not tier2",
                          f"tests/{cheap}.py", f"tests/{dear}.py"],
                         cwd=REPO, capture_output=True, text=True, timeout=300)
    files = [line.split("::")[0] for line in run.stdout.split() if "::" in line]
    assert files, run.stdout[-2000:] + run.stderr[-2000:]
    runs = [f for k, f in enumerate(files) if k == 0 or files[k - 1] != f]
    assert runs == [f"tests/{dear}.py", f"tests/{cheap}.py"], runs
