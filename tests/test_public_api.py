"""The curated public API: ``zerochess.__all__`` and ``PUBLIC_MODULES`` (issue 25).

- every exported name resolves, lazily, to the object of the module it lives in;
- type checkers see the same names (the ``TYPE_CHECKING`` imports of ``__init__.py``),
  and the package says it is typed (``py.typed``, shipped as package data);
- every error type of ``zerochess.errors`` is exported;
- ``import zerochess`` and the modules the host worker processes import load no jax;
- every import in the README, ``docs/``, ``examples/`` and the notebooks is of a public
  module and of a name in its ``__all__``, and works (the paths users have keep working).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import zerochess
from zerochess import errors
from zerochess.source_imports import module_file

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "zerochess"


def test_every_export_resolves_to_its_home_module() -> None:
    assert sorted(zerochess.__all__) == sorted(zerochess._EXPORTS)
    assert len(set(zerochess.__all__)) == len(zerochess.__all__)
    for name, home in zerochess._EXPORTS.items():
        assert getattr(zerochess, name) is getattr(importlib.import_module(home), name), name
        assert name in importlib.import_module(home).__all__, (name, home)
    assert set(zerochess.__all__) <= set(dir(zerochess))
    assert {"analyse", "Searcher", "SearchConfig", "load_model", "UserError"} <= set(
        zerochess.__all__)


LAZY_PACKAGES = ("zerochess", "zerochess.analysis", "zerochess.search", "zerochess.training")


def test_type_checkers_see_the_same_names() -> None:
    """In each package that exports lazily, the ``if TYPE_CHECKING:`` block imports
    exactly the exports, each from a module that holds the same object, and ``__all__``
    is their literal list (what type checkers read as re-exported)."""
    for package in LAZY_PACKAGES:
        module = importlib.import_module(package)
        init = Path(module.__file__)
        tree = ast.parse(init.read_text(encoding="utf-8"))
        blocks = [n for n in tree.body if isinstance(n, ast.If)
                  and ast.unparse(n.test) == "TYPE_CHECKING"]
        assert len(blocks) == 1, package
        typed = {}
        for node in blocks[0].body:
            assert isinstance(node, ast.ImportFrom) and node.module, ast.unparse(node)
            for alias in node.names:
                typed[alias.asname or alias.name] = node.module
        assert set(typed) == set(module._EXPORTS) == set(module.__all__), package
        for name, home in typed.items():
            assert getattr(importlib.import_module(home), name) is getattr(module, name), name
        literal = [n for n in tree.body if isinstance(n, ast.Assign)
                   and getattr(n.targets[0], "id", "") == "__all__"]
        assert isinstance(literal[0].value, ast.List), f"{package}.__all__ is not a literal"
    assert (REPO / "src" / "zerochess" / "py.typed").is_file()
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^"zerochess" = \[[^\]]*"py\.typed"', pyproject, re.M), \
        "py.typed is not package data"


def test_every_error_type_is_exported() -> None:
    kinds = {name for name, obj in vars(errors).items()
             if inspect.isclass(obj) and issubclass(obj, errors.UserError)
             and obj.__module__ == errors.__name__}
    assert "UserError" in kinds
    assert kinds <= set(zerochess.__all__), sorted(kinds - set(zerochess.__all__))
    assert issubclass(zerochess.NoLegalMovesError, zerochess.UserError)


def test_importing_the_package_and_the_host_rules_loads_no_jax() -> None:
    """``import zerochess`` stays light (its exports load on first use), and the modules
    the expander's worker processes import (``docs/DESIGN.md``: no jax there) load no
    jax either."""
    code = ("import sys, zerochess, zerochess.chess.rules, zerochess.chess.expander, "
            "zerochess.chess.state, zerochess.chess.history, zerochess.errors; "
            "print(sorted(m for m in ('jax', 'flax', 'jaxlib') if m in sys.modules)); "
            "zerochess.SearchConfig; print('jax' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["[]", "True"], proc.stdout  # and the lazy export works


def test_unknown_names_are_attribute_errors() -> None:
    try:
        zerochess.no_such_name  # noqa: B018
    except AttributeError as err:
        assert "no_such_name" in str(err)
    else:
        raise AssertionError("zerochess.no_such_name did not raise")


def _user_code() -> list[tuple[str, str]]:
    """(where, Python source) of every code example users read: the README's and docs'
    ``python`` blocks, the examples and the notebooks' code cells."""
    found = []
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for block in re.findall(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"), re.S):
            found.append((doc.name, block))
    for example in sorted((REPO / "examples").glob("*.py")):
        found.append((example.name, example.read_text(encoding="utf-8")))
    for notebook in sorted((REPO / "notebooks").rglob("*.ipynb")):
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                lines = "".join(cell["source"]).splitlines()
                found.append((notebook.name, "\n".join(
                    line for line in lines if not line.lstrip().startswith(("%", "!")))))
    return found


def test_user_facing_code_imports_public_names_that_work() -> None:
    checked, bad = 0, []
    for where, source in _user_code():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "zerochess":
                        checked += 1
                        if alias.name not in zerochess.PUBLIC_MODULES:
                            bad.append(f"{where}: import {alias.name} (not a public module)")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == \
                    "zerochess":
                module = importlib.import_module(node.module)
                for alias in node.names:
                    checked += 1
                    if node.module not in zerochess.PUBLIC_MODULES:
                        bad.append(f"{where}: from {node.module} import {alias.name} "
                                   "(not a public module)")
                    elif alias.name not in module.__all__ or not hasattr(module, alias.name):
                        bad.append(f"{where}: from {node.module} import {alias.name} "
                                   f"(not in {node.module}.__all__)")
    assert checked >= 20  # the README, the notebooks and the example were read
    assert not bad, "\n".join(bad)


def test_every_public_module_has_an_explicit_all_that_resolves() -> None:
    for name in zerochess.PUBLIC_MODULES:
        module = importlib.import_module(name)
        assert isinstance(module.__all__, list | tuple), name
        missing = [n for n in module.__all__ if not hasattr(module, n)]
        assert not missing, (name, missing)


# records/ scripts that time the library's internals themselves (kept as the record of how
# their figures were made; they cannot be written against the public API)
RECORD_INTERNALS = {
    # times search.history/loop/tree functions against a candidate rewrite of them
    "records/benchmarks/device_step_profile/step_parts.py",
    # switches the search pipeline's host threads off (no public switch: on for CPUs)
    "records/benchmarks/cpu_dispatch_concurrency/cpu_dispatch_concurrency.py",
    # times compiles with the program store in memory only (no public switch for that)
    "records/benchmarks/device_step_profile/2026-11-28/compile_seconds.py",
    # time and compare chess.history's root history with its earlier version
    "records/benchmarks/root_history_2026-11-28/root_prep_parts.py",
    "records/benchmarks/root_history_2026-11-28/same_as_replay.py",
}


def _imports_in(source: str):
    """(module, name or None) of every zerochess import in ``source``, and in the string
    constants that are code themselves (the worker programs scripts run in subprocesses)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and "zerochess" in node.value and "import" in node.value:
            try:
                yield from _imports_in(node.value)
            except SyntaxError:
                continue
        elif isinstance(node, ast.Import):
            yield from ((a.name, None) for a in node.names
                        if a.name.split(".")[0] == "zerochess")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == \
                "zerochess":
            yield from ((node.module, a.name) for a in node.names)


def test_records_scripts_use_public_names_or_bench_modes() -> None:
    """Every script under records/ imports public names (``PUBLIC_MODULES``' ``__all__``)
    or the ``__all__`` of ``zerochess bench``'s own modules (the bench modes and their
    parts), never a private name; ``RECORD_INTERNALS`` lists the exceptions and why."""
    bad, checked = [], 0
    scripts = sorted(REPO.glob("records/**/*.py"))
    assert {str(p.relative_to(REPO)) for p in scripts} >= RECORD_INTERNALS
    for path in scripts:
        where = str(path.relative_to(REPO))
        if where in RECORD_INTERNALS:
            continue
        for module, name in _imports_in(path.read_text(encoding="utf-8")):
            checked += 1
            if name is not None and module_file(f"{module}.{name}", PACKAGE) is not None:
                module, name = f"{module}.{name}", None  # a module, by name
            bench = module.startswith("zerochess.bench.")
            if module not in zerochess.PUBLIC_MODULES and not bench:
                bad.append(f"{where}: {module}{'.' + name if name else ''} (internal)")
            elif name is not None and name not in importlib.import_module(module).__all__:
                bad.append(f"{where}: from {module} import {name} (not in its __all__)")
    assert checked >= 50
    assert not bad, "\n".join(bad)
