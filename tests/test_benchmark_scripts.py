"""The scripts kept next to their records (``records/**/*.py``: one-off studies whose
figures ``BENCHMARKS.md`` or its log cite) and the examples use zerochess through its
public names only: no name starting with ``_``, and, where the module lists its public
names (``__all__``), one of those (or a submodule). So an internal rename breaks no
recorded study silently."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def private_imports(path: Path) -> list[str]:
    """``from zerochess... import name`` lines of ``path`` that use a non-public name."""
    bad = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0]
                == "zerochess"):
            continue
        module = importlib.import_module(node.module)
        public = getattr(module, "__all__", None)
        for alias in node.names:
            try:
                importlib.import_module(f"{node.module}.{alias.name}")
                continue  # a submodule
            except ImportError:
                pass
            if alias.name.startswith("_") or (public is not None and alias.name not in public):
                bad.append(f"{path.relative_to(REPO)}: from {node.module} import {alias.name}")
    return bad


def test_recorded_scripts_and_examples_import_public_names_only() -> None:
    scripts = sorted((REPO / "records").rglob("*.py")) + sorted((REPO / "examples").glob("*.py"))
    assert len(scripts) >= 10
    bad = [line for path in scripts for line in private_imports(path)]
    assert not bad, "\n".join(bad)


def test_no_one_off_script_is_left_in_benchmarks() -> None:
    """Measurements are ``zerochess bench`` modes; a one-off study's script lives next to
    the records it made, under ``records/``."""
    assert not list((REPO / "benchmarks").rglob("*.py"))


def test_the_check_finds_a_private_import(tmp_path: Path) -> None:
    script = tmp_path / "study.py"
    script.write_text("from zerochess.bench.leaf_quality import BATCH, root_visits\n"
                      "from zerochess.search import api, SearchConfig\n"
                      "from zerochess.search.api import _select\n"
                      "from zerochess.chess.encoding import encode_board, CASTLE_WK\n")
    global REPO
    saved, REPO = REPO, tmp_path
    try:
        bad = private_imports(script)
    finally:
        REPO = saved
    assert bad == ["study.py: from zerochess.search.api import _select",
                   "study.py: from zerochess.chess.encoding import CASTLE_WK"]
