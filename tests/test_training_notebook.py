"""notebooks/training/training_loop.ipynb is a Colab install cell and the README's training
loop (which tests/test_train_run.py::test_readme_training_loop_runs executes), split into
cells."""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _readme_block() -> str:
    text = (REPO / "README.md").read_text()
    return text.split("<!-- training-loop -->", 1)[1].split("```python", 1)[1].split("```")[0]


def test_notebook_code_is_the_readme_training_loop():
    nb = json.loads((REPO / "notebooks" / "training" / "training_loop.ipynb").read_text())
    assert nb["nbformat"] == 4 and nb["metadata"]["kernelspec"]["language"] == "python"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert "REPO_URL = " in "".join(code[0]["source"])  # the Colab install cell, then the loop
    code = code[1:]
    assert len(code) >= 3 and all(c["outputs"] == [] for c in code)  # committed unexecuted
    lines = [ln for c in code for ln in "".join(c["source"]).splitlines() if ln.strip()]
    assert lines == [ln for ln in _readme_block().splitlines() if ln.strip()]  # blank lines aside
