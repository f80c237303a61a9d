"""What a non-editable install ships: only the ``zerochess`` package (no top-level
``benchmarks``, no test helpers), with the experiment settings and ``py.typed`` as package
data."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from zerochess.experiments import EXPERIMENTS

pytestmark = pytest.mark.tier2  # pip builds and installs the wheel (README, Tests)

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # built from a copy of what the wheel is made of: setuptools builds in the tree it is
    # given (``build/``), and a second build in one tree (this fixture set up again in a
    # run, or an earlier build's leftovers) failed on "File exists: ...dist-info"
    tree = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE", "NOTICE"):
        shutil.copy2(REPO / name, tree / name)
    shutil.copytree(REPO / "src", tree / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                           str(out), str(tree)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (path,) = out.glob("zerochess-*.whl")
    return path


def test_wheel_holds_only_the_package_and_its_settings(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"zerochess", wheel.name.split("-py3")[0] + ".dist-info"}, tops
    for name in EXPERIMENTS:
        assert f"zerochess/configs/experiment_{name}.yaml" in names
    assert not any(n.startswith("zerochess/testing/") for n in names)
    assert "zerochess/py.typed" in names  # PEP 561: type checkers use the inline hints
    # every package of the source tree is shipped
    src = REPO / "src"
    for init in src.glob("zerochess/**/__init__.py"):
        assert init.relative_to(src).as_posix() in names


def test_installed_wheel_finds_settings_and_no_benchmarks(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q",
                           "--target", str(target), str(wheel)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    code = ("import importlib.util as u, zerochess, zerochess.experiments as e; "
            "assert u.find_spec('benchmarks') is None; "
            f"assert zerochess.__file__.startswith({str(target)!r}), zerochess.__file__; "
            "print(e.get_experiment('contempt_wdl').resolve('tiny')['nodes'])")
    env = {**os.environ, "PYTHONPATH": str(target)}
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "16"  # configs/experiment_contempt_wdl.yaml, tiny scale
