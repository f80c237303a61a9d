"""The zerochess modules a source file imports at run time: one parser, for the program
store's source keys and the layering test (tests/test_layers.py). No jax, no chess."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
_LAZY = re.compile(r'^\s*"(\w+)":\s*"(zerochess[\w.]*)"', re.M)
_IMPORT = re.compile(r"^\s*(?:from\s+(zerochess[\w.]*|\.+[\w.]*)\s+import\s+(.*)"
                     r"|import\s+(zerochess[\w.]*))")
_NAME = re.compile(r"([A-Za-z_]\w*)(?:\s+as\s+\w+)?")
_TYPE_CHECKING = re.compile(r"\s*if\s+(typing\.)?TYPE_CHECKING\s*:")


@functools.lru_cache(maxsize=4096)
def module_file(name: str, root: Path = PACKAGE_DIR) -> Path | None:
    """The source file of module ``name`` (``zerochess.x.y``) under ``root`` (the
    ``zerochess`` package directory), or None if it is not a module there.

    Args:
      name: a dotted module name starting with ``zerochess``.
      root: the directory of the ``zerochess`` package.

    Returns:
      ``x/y.py`` or ``x/y/__init__.py`` under ``root``, or None.
    """
    parts = name.split(".")[1:]
    candidates = [root.joinpath(*parts, "__init__.py")]
    if parts:
        candidates.append(root.joinpath(*parts[:-1], parts[-1] + ".py"))
    return next((c for c in candidates if c.is_file()), None)


def module_name(path: Path, root: Path = PACKAGE_DIR) -> str:
    """The dotted name of the module in file ``path`` under ``root`` (a package's
    ``__init__.py`` names the package): ``root/search/step.py`` -> ``zerochess.search.step``."""
    parts = list(Path(path).relative_to(Path(root).parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.lru_cache(maxsize=256)
def lazy_exports(package: str, root: Path = PACKAGE_DIR) -> dict[str, str]:
    """``_EXPORTS`` (name -> module) of a package that exports lazily, else {}."""
    path = module_file(package, root)
    if path is None or path.name != "__init__.py":
        return {}
    text = path.read_text(encoding="utf-8")
    return dict(_LAZY.findall(text)) if "_EXPORTS" in text else {}


def _statements(text: str) -> Iterator[str]:
    """The lines of ``text`` that run, each import joined with its parenthesised
    continuation lines: not inside a triple-quoted string (docstring examples), not under
    ``if TYPE_CHECKING:``."""
    lines = text.splitlines()
    quote: str | None = None  # the triple quote of the string a line is inside
    skip_indent: int | None = None  # the indent of an ``if TYPE_CHECKING:`` being skipped
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if quote is not None:
            if line.count(quote) % 2:
                quote = None
            continue
        for q in ('"""', "'''"):
            if line.split("#")[0].count(q) % 2:
                quote = q
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if skip_indent is not None:
            if not stripped or indent > skip_indent:
                continue
            skip_indent = None
        if _TYPE_CHECKING.match(line):
            skip_indent = indent
            continue
        if _IMPORT.match(line):
            line = line.split("#")[0]  # an import's comment (not code: no strings there)
            if "(" in line:
                while i < len(lines) and ")" not in line:
                    line += " " + lines[i].split("#")[0]
                    i += 1
        yield line


def imported_modules(path: Path, root: Path = PACKAGE_DIR, text: str | None = None
                     ) -> set[str]:
    """The zerochess modules the file ``path`` imports at run time: every ``import`` and
    ``from ... import``, in functions too, not under ``if TYPE_CHECKING:`` nor inside a
    triple-quoted string; relative imports resolved. A line scan, several times faster
    than ``ast.parse`` (tests/test_layers.py checks that the two agree on every module).

    ``from zerochess.p import x`` counts as ``zerochess.p.x`` where that is a module, as
    x's home module where ``p`` exports x lazily (``_EXPORTS``), else as ``zerochess.p``.

    Args:
      path: the file, under ``root``.
      root: the directory of the ``zerochess`` package.
      text: the file's source (default: read from ``path``).

    Returns:
      Dotted module names (``zerochess`` itself for the package root).
    """
    path, root = Path(path), Path(root)
    module = module_name(path, root)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    text = path.read_text(encoding="utf-8") if text is None else text
    found: set[str] = set()
    for line in _statements(text):
        match = _IMPORT.match(line)
        if not match:
            continue
        if match.group(3):
            found.add(match.group(3))
            continue
        source, names = match.group(1), match.group(2)
        if source.startswith("."):  # relative: from the module's package up
            dots = len(source) - len(source.lstrip("."))
            base = package.split(".")[:len(package.split(".")) - dots + 1]
            source = ".".join(base + ([source.lstrip(".")] if source.lstrip(".") else []))
        if source.split(".")[0] != "zerochess":
            continue
        lazy = lazy_exports(source, root)
        for item in _NAME.findall(names.replace("(", " ")):
            sub = f"{source}.{item}"
            found.add(sub if module_file(sub, root) is not None else lazy.get(item, source))
    return found


def forget() -> None:
    """Read the files again (a process whose sources changed under it; tests)."""
    module_file.cache_clear()
    lazy_exports.cache_clear()


__all__ = ["PACKAGE_DIR", "forget", "imported_modules", "lazy_exports", "module_file",
           "module_name"]
