"""User-facing errors: the CLI prints them as one line ``error: ...``, with no traceback."""

from __future__ import annotations

import os
from typing import Any

QUOTE_LIMIT = 80


class UserError(ValueError):
    """Bad input from the user (position, move, config, file, parameter)."""


class PositionError(UserError):
    """A bad position or move: an invalid FEN/EPD, an illegal position or move, a chess
    variant, a counter out of range."""


class ConfigError(UserError):
    """A bad setting: an API argument, a search config field, a YAML config (an unknown
    key, a value of the wrong type or out of range, a missing file, an engine that cannot
    be found or started), or a run folder that holds a different run."""


class ModelError(UserError):
    """A bad model spec (e.g. ``resnet:0x8``, an unknown name)."""


class ModelFileError(ModelError):
    """A network file that is missing, damaged or of an unsupported format."""


class InputFileError(UserError):
    """An input file (EPD, FEN list, PGN, book) that cannot be read: missing, a folder,
    not text."""


def quote(value: Any, limit: int = QUOTE_LIMIT) -> str:
    """``repr(value)`` cut to about ``limit`` characters, with ``...`` and what was left out.

    The work is bounded by ``limit`` too, whatever the value: a string or bytes are cut
    before they are quoted, containers are walked only as far as the quote reaches (a
    YAML "billion laughs" document, whose aliases make a small object with an enormous
    ``repr``, costs no more than a short list), and a huge integer is described by its
    number of digits. Other objects use their own ``repr`` (python-chess boards, numpy
    arrays: already bounded).
    """
    if isinstance(value, int) and not isinstance(value, bool) and _digits(value) > 2 * limit:
        return f"<an integer of about {_digits(value):,} digits>"
    out: list[str] = []
    budget = [max(int(limit), 8)]
    complete = _bounded_repr(value, out, budget, depth=0)
    text = "".join(out)
    if complete and len(text) <= limit:
        return text
    return f"{text[:limit]}... ({_describe(value)})"


PATH_QUOTE_LIMIT = 300


def quote_path(path: Any, limit: int = PATH_QUOTE_LIMIT) -> str:
    """A file path quoted whole when it is of a usual length (a temporary folder's path is
    often longer than ``quote``'s 80 characters, and the file's name is at its end); a
    longer one keeps its start and its last ``limit // 2`` characters (the file's name)."""
    text = os.fspath(path) if isinstance(path, (str, os.PathLike)) else path
    if not isinstance(text, str):
        return quote(text)
    if len(text) <= limit:
        return repr(text)
    head, tail = text[:limit // 4], text[-(limit // 2):]
    return f"{head!r}...{tail!r} ({len(text):,} characters)"


_MAX_DEPTH = 6


def _describe(value: Any) -> str:
    """What a cut quote left out: the full size of the value, found without walking it."""
    if isinstance(value, (str, bytes, bytearray)):
        return f"{len(value):,} characters" if isinstance(value, str) else f"{len(value):,} bytes"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"an integer of about {_digits(value):,} digits"
    try:
        size = len(value)
    except Exception:
        return f"a {type(value).__name__}"
    return f"a {type(value).__name__} of {size:,} item{'' if size == 1 else 's'}"


def _digits(value: int) -> int:
    return max(1, int(abs(value).bit_length() * 0.30103) + 1)


def _emit(text: str, out: list[str], budget: list[int]) -> bool:
    out.append(text[:budget[0] + 1])
    budget[0] -= len(text)
    return budget[0] >= 0


def _bounded_repr(value: Any, out: list[str], budget: list[int], depth: int) -> bool:
    """Append a repr of ``value`` to ``out`` until ``budget`` characters are spent; True
    when the whole repr fit. Every element costs at least one character of the budget, so
    at most ``limit`` elements are ever visited."""
    if budget[0] < 0:
        return False
    if isinstance(value, str):
        whole = len(value) <= budget[0] + 2
        return _emit(repr(value[:budget[0] + 2]), out, budget) and whole
    if isinstance(value, (bytes, bytearray)):
        head = bytes(value[:budget[0] + 2])
        return _emit(repr(head), out, budget) and len(value) == len(head)
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return _emit(repr(value), out, budget)
    if isinstance(value, int):
        if _digits(value) > 2 * max(budget[0], 1):
            _emit(f"<an integer of about {_digits(value):,} digits>", out, budget)
            return False
        return _emit(repr(value), out, budget)
    brackets = _BRACKETS.get(type(value))
    if brackets is None and isinstance(value, (list, tuple, dict, set, frozenset)):
        brackets = _BRACKETS[next(t for t in _BRACKETS if isinstance(value, t))]
    if brackets is None:
        try:
            text = repr(value)
        except Exception as err:  # a broken __repr__ must not hide the real error
            text = f"<{type(value).__name__} (repr failed: {type(err).__name__})>"
        return _emit(text, out, budget)
    if isinstance(value, (set, frozenset)) and not value:
        return _emit(f"{type(value).__name__}()", out, budget)
    if depth >= _MAX_DEPTH:
        _emit(f"{brackets[0]}...{brackets[1]}", out, budget)
        return False
    if not _emit(brackets[0], out, budget):
        return False
    items = value.items() if isinstance(value, dict) else value
    for n, item in enumerate(items):
        if n and not _emit(", ", out, budget):
            return False
        if isinstance(value, dict):
            key, item = item
            if not (_bounded_repr(key, out, budget, depth + 1) and _emit(": ", out, budget)):
                return False
        if not _bounded_repr(item, out, budget, depth + 1):
            return False
    if isinstance(value, tuple) and len(value) == 1:
        _emit(",", out, budget)
    return _emit(brackets[1], out, budget)


_BRACKETS: dict[type, tuple[str, str]] = {
    list: ("[", "]"), tuple: ("(", ")"), dict: ("{", "}"), set: ("{", "}"),
    frozenset: ("frozenset({", "})"),
}


__all__ = ["ConfigError", "InputFileError", "ModelError", "ModelFileError", "PositionError",
           "UserError", "quote", "quote_path"]
