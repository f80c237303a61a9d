"""The notebooks in ``notebooks/``: committed without outputs, a Colab-only install cell, a
scale parameter; and each one runs top to bottom at its CI scale (``tiny``) in a real
Jupyter kernel (nbclient), so that a failing cell fails the test suite."""

from __future__ import annotations

import re
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
EXPECTED = {"compare_search_variants", "search_contempt", "library_quickstart"}
SCALE_LINE = 'SCALE = os.environ.get("ZEROCHESS_NOTEBOOK_SCALE", "tiny")'
CELL_TIMEOUT_S = 600
# CI speed: XLA's CPU backend optimisations off. At the notebooks' CI scale the run is mostly
# jit compilation (about 20 s per compiled search on 2 cores, 6 compiles in all), and this
# cuts compile time by about a third while the (tiny) searches run a little slower.
CI_XLA_FLAGS = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"


def _ids(paths: list[Path]) -> list[str]:
    return [p.stem for p in paths]


def _code_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [c for c in nb.cells if c.cell_type == "code"]


def test_the_notebooks_exist():
    assert {p.stem for p in NOTEBOOKS} == EXPECTED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in _code_cells(nb):
        assert cell.outputs == [], f"{path.name}: a cell has outputs (strip them)"
        assert cell.execution_count is None, f"{path.name}: a cell has an execution count"
    assert "widgets" not in nb.metadata


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_install_cell_and_scale_parameter(path):
    cells = _code_cells(nbformat.read(path, as_version=4))
    first = cells[0].source
    # the install cell: the repository URL in one variable, pip only inside Colab
    assert first.count("REPO_URL = ") == 1
    assert 'if "google.colab" in sys.modules' in first
    assert "[cuda12]" in first and "nvidia-smi" in first
    assert SCALE_LINE in cells[1].source  # the parameter cell, right after it


ALL_NOTEBOOKS = sorted((REPO / "notebooks").rglob("*.ipynb"))


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=_ids(ALL_NOTEBOOKS))
def test_every_notebook_has_a_colab_link_and_the_install_cell(path):
    nb = nbformat.read(path, as_version=4)
    link = ("https://colab.research.google.com/github/zerochess/zerochess/blob/main/"
            f"{path.relative_to(REPO).as_posix()}")
    assert nb.cells[0].cell_type == "markdown" and link in nb.cells[0].source
    assert _code_cells(nb)[0].source == _code_cells(
        nbformat.read(NOTEBOOKS[0], as_version=4))[0].source  # one install cell for all


def _run_install_cell(monkeypatch, source: str, env: dict[str, str], tpu: bool
                      ) -> list[list[str]]:
    """Run the install cell as in a Colab runtime (zerochess absent; no nvidia-smi, no
    /proc/driver/nvidia, no /dev/accel*: a CPU runtime unless ``env``/``tpu`` say more);
    returns the commands it would run."""
    import glob
    import importlib.util
    import os
    import shutil
    import subprocess
    import sys
    import types

    calls: list[list[str]] = []
    for key in ("COLAB_TPU_ADDR", "TPU_ACCELERATOR_TYPE", "COLAB_GPU"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    real_find_spec = importlib.util.find_spec
    absent = {"zerochess"} | (set() if tpu else {"libtpu"})
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in absent else real_find_spec(name, *a))
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    monkeypatch.setattr(glob, "glob", lambda pattern, *a, **k: [])
    real_exists = os.path.exists
    monkeypatch.setattr(os.path, "exists", lambda p: False if "nvidia" in str(p)
                        else real_exists(p))

    def run(cmd, *args, **kwargs):
        if "nvidia-smi" in cmd[0]:
            raise FileNotFoundError(cmd[0])  # what a CPU or TPU runtime does
        calls.append(list(cmd))
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(subprocess, "run", run)
    exec(compile(source, "install cell", "exec"), {"__name__": "__main__"})
    return calls


def test_install_cell_picks_the_runtime_without_nvidia_smi(monkeypatch):
    source = _code_cells(nbformat.read(NOTEBOOKS[0], as_version=4))[0].source
    cpu = _run_install_cell(monkeypatch, source, {}, tpu=False)
    assert cpu and all("-c" not in c for c in cpu)
    assert cpu[0][-1].startswith("zerochess @ git+")  # no [cuda12] on a CPU runtime
    gpu = _run_install_cell(monkeypatch, source, {"COLAB_GPU": "1"}, tpu=False)
    assert gpu[0][-1].startswith("zerochess[cuda12] @ git+")
    tpu = _run_install_cell(monkeypatch, source, {"COLAB_TPU_ADDR": "10.0.0.2:8470"},
                            tpu=True)
    # a TPU runtime keeps its jax: the install is constrained to the installed version
    assert tpu[0][-1].startswith("zerochess @ git+") and "-c" in tpu[0]
    import importlib.metadata

    pins = Path(tpu[0][tpu[0].index("-c") + 1]).read_text().split()
    assert f"jax=={importlib.metadata.version('jax')}" in pins
    assert f"jaxlib=={importlib.metadata.version('jaxlib')}" in pins


@pytest.mark.tier2  # a Jupyter kernel
def test_a_failing_cell_fails():
    """The harness below turns an exception in any cell into a test failure."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"),
                                         nbformat.v4.new_code_cell("raise ValueError('bad')")])
    with pytest.raises(CellExecutionError, match="bad"):
        NotebookClient(nb, timeout=60, kernel_name="python3").execute()


@pytest.mark.tier2  # a Jupyter kernel running the whole notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_runs_at_ci_scale(path, monkeypatch):
    monkeypatch.setenv("ZEROCHESS_NOTEBOOK_SCALE", "tiny")
    monkeypatch.setenv("XLA_FLAGS", CI_XLA_FLAGS)
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    t0 = time.perf_counter()
    client.execute()  # raises CellExecutionError naming the cell that failed
    seconds = time.perf_counter() - t0
    outputs = [o for c in _code_cells(nb) for o in c.outputs]
    errors = [o for o in outputs if o.output_type == "error"]
    assert not errors
    # every cell that draws shows its image (a backend switched under the kernel, e.g. by
    # library code calling matplotlib.use, would leave these cells without one)
    plotting = [i for i, c in enumerate(_code_cells(nb)) if _draws(c.source)]
    assert plotting, f"{path.name} draws no plot"
    for i in plotting:
        images = [o for o in _code_cells(nb)[i].outputs if "image/png" in o.get("data", {})]
        assert images, f"{path.name}: code cell {i} draws a plot but shows no image"
    print(f"{path.name}: {seconds:.1f} s")


_DRAWS = re.compile(r"\bplt\.(show|subplots|figure|bar|plot)\(|\.plot(\.\w+)?\(")


def _draws(source: str) -> bool:
    """Whether a cell draws a matplotlib figure (pyplot or a pandas ``.plot``)."""
    return bool(_DRAWS.search(source))


def test_the_plot_detector():
    assert _draws("fig, ax = plt.subplots()\nax.plot(x)\nplt.show()")
    assert _draws("replies.plot.bar(figsize=(9, 3))") and _draws("df.plot(x='a')")
    assert not _draws("print(plot_count)\nx = y.plotted") and not _draws("import matplotlib")
