"""No module imports upward: every import in ``src/zerochess`` against the layering table
of ``docs/DESIGN.md`` (the one description of the layers; this test reads it)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

from zerochess.source_imports import imported_modules, lazy_exports, module_file, module_name

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "zerochess"
ROW = re.compile(r"^\| (\d+) \| `zerochess\.([a-z_0-9]+)` \| .* \| ([a-z_0-9, -]+) \|$")


def layer_table(text: str) -> dict[str, tuple[int, set[str]]]:
    """unit (a top-level module or package of zerochess) -> (layer, the units it imports),
    from the table's rows."""
    rows = {}
    for line in text.splitlines():
        match = ROW.match(line.strip())
        if match:
            layer, unit, imports = match.groups()
            assert unit not in rows, f"{unit} has two rows"
            rows[unit] = (int(layer), {u.strip() for u in imports.split(",")} - {"-", ""})
    return rows


def _unit(module: str) -> str:
    """'zerochess.search.step' -> 'search'; the package root -> ''."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def violations(rows: dict[str, tuple[int, set[str]]], extra: dict[Path, str] | None = None
               ) -> tuple[list[str], dict[str, set[str]]]:
    """(imports the table forbids, the units each unit imports) over the package's files
    and the ``extra`` files (path -> source) the test makes up."""
    bad, uses = [], {}
    files = {p: None for p in sorted(PACKAGE.rglob("*.py"))} | (extra or {})
    for path, text in files.items():
        module = module_name(path, PACKAGE)
        unit = _unit(module)
        if not unit:  # the package root re-exports lazily; it is outside the layers
            continue
        if unit not in rows:
            bad.append(f"{module}: zerochess.{unit} has no row in docs/DESIGN.md's table")
            continue
        for target in sorted(imported_modules(path, PACKAGE, text)):
            other = _unit(target)
            if other in ("", unit):
                continue
            if path.name == "__main__.py" and other == "cli":
                continue  # an entry point (python -m zerochess.X) runs the command line
            uses.setdefault(unit, set()).add(other)
            if other not in rows:
                bad.append(f"{module} imports {target}, which has no row in the table")
            elif rows[other][0] >= rows[unit][0]:
                bad.append(f"{module} (layer {rows[unit][0]}) imports {target} "
                           f"(layer {rows[other][0]}): not a layer above")
    return bad, uses


def test_the_table_covers_every_module_and_reads_back() -> None:
    rows = layer_table((REPO / "docs" / "DESIGN.md").read_text(encoding="utf-8"))
    units = {p.stem if p.suffix == ".py" else p.name for p in PACKAGE.iterdir()
             if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()}
    assert units - {"configs"} == set(rows), (sorted(units - set(rows)), sorted(set(rows) - units))
    assert rows["errors"] == (0, set()) and rows["cli"][0] == max(r[0] for r in rows.values())


def test_no_module_imports_upward_and_the_table_lists_each_packages_imports() -> None:
    rows = layer_table((REPO / "docs" / "DESIGN.md").read_text(encoding="utf-8"))
    bad, uses = violations(rows)
    assert not bad, "\n".join(bad)
    stale = [f"zerochess.{unit}: the table says it imports {sorted(listed)}, it imports "
             f"{sorted(uses.get(unit, set()))}" for unit, (_, listed) in sorted(rows.items())
             if listed != uses.get(unit, set())]
    assert not stale, "\n".join(stale)


def test_the_check_catches_an_upward_import() -> None:
    """The check itself can fail: a search module importing the UCI engine, a lazy import
    inside a function, and a relative import are each found; a TYPE_CHECKING one is not."""
    rows = layer_table((REPO / "docs" / "DESIGN.md").read_text(encoding="utf-8"))
    probe = {PACKAGE / "search" / "_layer_probe.py": (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from zerochess.cli import main\n"
        "def f():\n    from zerochess.uci import driver\n"
        "from ..games import loop\n")}
    bad, _ = violations(rows, probe)
    probe_bad = [b for b in bad if b.startswith("zerochess.search._layer_probe")]
    assert len(probe_bad) == 2, probe_bad
    assert "imports zerochess.games.loop (layer 6)" in probe_bad[0]
    assert "imports zerochess.uci.driver (layer 6)" in probe_bad[1]
    assert imported_modules(PACKAGE / "uci" / "protocol.py", PACKAGE) >= {"zerochess.positions"}


def test_the_device_core_imports_without_python_chess() -> None:
    """The seam holds for importers: the compiled search, the environment, the device
    rules and the search core import with python-chess blocked (only the host facade,
    ``zerochess.search.Searcher``, needs it); and the block itself bites."""
    core = ("zerochess.search.compiled", "zerochess.env", "zerochess.chess.device",
            "zerochess.search.tree", "zerochess.search.gather", "zerochess.search.step",
            "zerochess.search.loop", "zerochess.search.reroot", "zerochess.search.params",
            "zerochess.search.view")
    code = ("import sys; sys.modules['chess'] = None\n"
            f"for name in {core!r}: __import__(name)\n"
            "import zerochess.search as s; assert 'zerochess.search.api' not in sys.modules\n"
            "try:\n    s.Searcher\nexcept ImportError:\n    print('facade blocked')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={**os.environ,
                                            "PYTHONPATH": str(REPO / "src")})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "facade blocked", done.stdout


def _ast_imports(path: Path) -> set[str]:
    """What ``imported_modules`` should find in ``path``, from Python's own parser (the
    reference: every Import/ImportFrom node, less those under ``if TYPE_CHECKING:``)."""
    module = module_name(path, PACKAGE)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    stack, found = [ast.parse(path.read_text(encoding="utf-8"))], set()
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                stack.extend(child.orelse)
            else:
                stack.append(child)
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "zerochess"}
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            source = (".".join(parts[:len(parts) - node.level + 1] + [node.module or ""])
                      .rstrip(".") if node.level else node.module or "")
            if source.split(".")[0] == "zerochess":
                lazy = lazy_exports(source, PACKAGE)
                found |= {f"{source}.{a.name}" if module_file(f"{source}.{a.name}", PACKAGE)
                          else lazy.get(a.name, source) for a in node.names}
    return found


def test_the_import_scan_agrees_with_python_s_parser() -> None:
    """The one import parser (a line scan, shared with the program store) finds what
    ``ast`` finds in every module, and skips a docstring's example, a string and a
    TYPE_CHECKING block; comments and parentheses in a multi-line import do not stop it."""
    differ = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        scan, ref = imported_modules(path, PACKAGE), _ast_imports(path)
        if scan != ref:
            differ[module_name(path, PACKAGE)] = (sorted(scan - ref), sorted(ref - scan))
    assert not differ, differ
    probe = ('"""Doc.\n\n    from zerochess.cli import main\n"""\n'
             "from typing import TYPE_CHECKING\n"
             "if TYPE_CHECKING:\n    from zerochess.games import loop\n"
             "else:\n    from zerochess.errors import quote\n"
             "from zerochess.search import (  # (a comment with parentheses)\n"
             "    step,  # the step\n    tree as t,\n)\n"
             "x = '''\nimport zerochess.uci\n'''\n"
             "def f():\n    from . import view\n")
    assert imported_modules(PACKAGE / "search" / "_probe.py", PACKAGE, probe) == {
        "zerochess.errors", "zerochess.search.step", "zerochess.search.tree",
        "zerochess.search.view"}


def import_circles(extra: dict[Path, str] | None = None) -> list[list[str]]:
    """Circles of imports between the package's modules (packages' ``__init__`` re-exports
    left out: they import what is below them), as lists of module names."""
    files = {p: None for p in sorted(PACKAGE.rglob("*.py")) if p.name != "__init__.py"}
    files |= extra or {}
    graph = {module_name(p, PACKAGE): p for p in files}
    edges = {m: sorted(t for t in imported_modules(p, PACKAGE, files[p]) if t in graph and t != m)
             for m, p in graph.items()}
    circles, state, path = [], {}, []

    def visit(m: str) -> None:
        state[m] = "open"
        path.append(m)
        for t in edges[m]:
            if state.get(t) == "open":
                circles.append(path[path.index(t):] + [t])
            elif t not in state:
                visit(t)
        path.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)
    return circles


def test_no_import_circle_between_modules() -> None:
    """No two modules import each other, directly or around a circle (issue 37: the
    imports read as a layered house); the check finds a made-up two-module circle."""
    assert import_circles() == []
    # the probe's texts stand in for two real modules' (a made-up file is not a module)
    probe = {PACKAGE / "errors.py": "def f():\n    from zerochess.validation import as_count\n",
             PACKAGE / "validation.py": "from zerochess.errors import ConfigError\n"}
    assert import_circles(probe) == [["zerochess.errors", "zerochess.validation",
                                      "zerochess.errors"]]
