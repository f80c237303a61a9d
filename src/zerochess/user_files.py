"""Opening the files a user names: networks, configs, EPD/FEN lists, opening books, PGNs."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from zerochess.errors import InputFileError, UserError, quote, quote_path

MAX_NETWORK_FILE_BYTES = 2**31  # classic lc0 networks are at most a few hundred MB
MAX_CONFIG_BYTES = 4 * 2**20  # a YAML config is a few KB
MAX_TEXT_BYTES = 256 * 2**20  # a FEN list or a PGN read whole (EPD input is streamed)
MAX_LINE_BYTES = 64 * 2**10  # one line of an EPD/FEN file (a position is < 100 bytes)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.4g} {unit}"
    return f"{n} bytes"


def check_user_file(path: object, what: str, max_bytes: int | None = None,
                    error: type[UserError] = InputFileError) -> Path:
    """The path of a regular file of at most ``max_bytes`` bytes, checked with ``os.stat``
    (nothing is opened); ``error`` naming ``what`` and the path otherwise."""
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise error(f"{what} path must be a string, got {quote(path)}")
    text = os.fspath(path)
    if not isinstance(text, str) or not text.strip():
        raise error(f"{what} path must be a non-empty string, got {quote(text)}")
    p = Path(text)
    try:
        info = p.stat()
    except FileNotFoundError:
        raise error(f"{what} not found: {quote_path(text)}") from None
    except (OSError, ValueError) as err:  # ValueError: an embedded NUL byte
        reason = getattr(err, "strerror", None) or str(err)
        raise error(f"cannot read {what} {quote_path(text)}: {reason}") from None
    if not stat.S_ISREG(info.st_mode):
        link = ""
        if p.is_symlink():
            with contextlib.suppress(OSError):
                link = f" (a link to {quote_path(os.path.realpath(text))})"
        kind = _kind(info.st_mode)
        raise error(f"{what} {quote_path(text)}{link} is {kind}, not a file")
    if max_bytes is not None and info.st_size > max_bytes:
        raise error(f"{what} {quote_path(text)} is {_size(info.st_size)}, larger than "
                    f"{_size(max_bytes)} (the limit for this kind of file)")
    return p


@contextlib.contextmanager
def open_user_file(path: object, what: str, max_bytes: int | None = None,
                   error: type[UserError] = InputFileError) -> Iterator[BinaryIO]:
    """The file opened for binary reading, after ``check_user_file``.

    The file is opened non-blocking and checked again on the open descriptor (a path
    swapped for a FIFO or a device between the check and the open is still refused).
    """
    p = check_user_file(path, what, max_bytes, error)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(p, flags)
    except OSError as err:
        raise error(f"cannot read {what} {quote_path(str(p))}: {err.strerror or err}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{what} {quote_path(str(p))} is {_kind(info.st_mode)}, not a file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        yield handle


def read_user_bytes(path: object, what: str, max_bytes: int,
                    error: type[UserError] = InputFileError) -> bytes:
    """The whole content of a user's file, at most ``max_bytes`` bytes (see module doc)."""
    with open_user_file(path, what, max_bytes, error) as fh:
        try:
            data = fh.read(max_bytes + 1)
        except OSError as err:
            raise error(f"cannot read {what} {quote_path(os.fspath(path))}: "  # type: ignore[arg-type]
                        f"{err.strerror or err}") from None
    if len(data) > max_bytes:
        raise error(f"{what} {quote_path(os.fspath(path))} is larger than "  # type: ignore[arg-type]
                    f"{_size(max_bytes)} (the limit for this kind of file)")
    return data


def decode_text(data: bytes, what: str, where: str,
                error: type[UserError] = InputFileError) -> str:
    """UTF-8 text (a leading BOM dropped); ``error`` naming the first bad byte otherwise."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise error(f"{what} {quote(where)} is not UTF-8 text (byte 0x{data[err.start]:02x} "
                    f"at offset {err.start})") from None


def read_user_text(path: object, what: str, max_bytes: int = MAX_TEXT_BYTES,
                   error: type[UserError] = InputFileError) -> str:
    """The UTF-8 text of a user's file (see ``read_user_bytes``)."""
    data = read_user_bytes(path, what, max_bytes, error)
    return decode_text(data, what, os.fspath(path), error)  # type: ignore[arg-type]


def iter_user_lines(path: object, what: str, max_line_bytes: int = MAX_LINE_BYTES,
                    error: type[UserError] = InputFileError) -> Iterator[tuple[int, str]]:
    """(line number, text) of every line of a UTF-8 text file, read as a stream: memory is
    bounded by ``max_line_bytes`` whatever the file's size; a longer line is an error
    naming its number."""
    where = os.fspath(path)  # type: ignore[arg-type]
    with open_user_file(path, what, None, error) as fh:
        number = offset = 0
        while True:
            try:
                raw = fh.readline(max_line_bytes + 1)
            except OSError as err:
                raise error(f"cannot read {what} {quote(where)}: {err.strerror or err}") \
                    from None
            if not raw:
                return
            number += 1
            if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
                raise error(f"{what} {quote(where)}: line {number} is longer than "
                            f"{_size(max_line_bytes)}: not a line of positions")
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw, offset = raw[3:], 3
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise error(f"{what} {quote(where)} is not UTF-8 text (byte "
                            f"0x{raw[err.start]:02x} at offset {offset + err.start}, line "
                            f"{number})") from None
            offset += len(raw)
            yield number, text.rstrip("\r\n")


__all__ = ["MAX_CONFIG_BYTES", "MAX_LINE_BYTES", "MAX_NETWORK_FILE_BYTES", "MAX_TEXT_BYTES",
           "check_user_file", "decode_text", "iter_user_lines", "open_user_file",
           "read_user_bytes", "read_user_text"]
