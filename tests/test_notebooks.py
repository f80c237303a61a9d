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
