"""The ``zerochess`` command line: one module per command, one error handler (``main``)."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from zerochess.cli import (
    analyse,
    analysis,
    bench,
    experiment,
    match,
    perft,
    puzzles,
    selfplay,
    train,
    uci,
    warmup,
)
from zerochess.errors import UserError

COMMANDS = (analyse, analysis, bench, selfplay, match, experiment, puzzles, train, uci, perft,
            warmup)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zerochess", description="Batched MCTS for chess research (lc0 PUCT, "
        "search-contempt, mctx) on JAX.")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def _enable_compilation_cache() -> None:
    """Persist compiled programs between runs (``zerochess.compile_cache``: the directory
    ``$ZEROCHESS_JAX_CACHE``, empty = off, else ``~/.cache/zerochess/jax``)."""
    from zerochess import compile_cache

    compile_cache.enable()


def main(argv: Sequence[str] | None = None, process: bool | None = None) -> int:
    """Run ``zerochess ARGS``; returns the exit status (2 for bad input, 130 on Ctrl-C).

    Ctrl-C prints one line and exits 130, whenever it comes: during the command (the
    command's ``interrupted`` line), a second time while the first unwinds, or while the
    interpreter shuts down (thread pools joining, atexit callbacks): once the command
    has returned or been interrupted, a SIGINT ends the process at once without a
    traceback. What was written stays written (run folders are kept consistent for
    SIGKILL too). Only the command itself (``argv`` None, or ``process``) takes over
    SIGINT this way.
    """
    args = build_parser().parse_args(argv)
    # the command itself (not a caller's main([...])): owns SIGINT; ``python -m
    # zerochess.uci`` passes its argv and ``process=True``
    process = argv is None if process is None else process
    interrupted = False
    if process:
        _exit_on_lost_interrupts(getattr(args, "interrupted", "interrupted"))
    if getattr(args, "stop_on_sigterm", False):
        _sigterm_interrupts()
    try:
        _enable_compilation_cache()  # imports jax: seconds, interruptible like the rest
        status = int(args.run(args) or 0)
        if process and getattr(args, "exit_at_once", False):
            # an engine's background threads may still be loading or compiling programs
            # inside XLA: finalizing the interpreter under them aborts (SIGABRT) instead
            # of exiting; like lc0, ``quit`` ends the process now
            _exit_now(status)
        return status
    except KeyboardInterrupt:
        interrupted = True
        if process:
            _quiet_interrupts(announce=False)
        print(getattr(args, "interrupted", "interrupted"), file=sys.stderr)
        if process:
            # the stack has unwound (files closed, runs saved); the search's threads may
            # still be inside jax, and finalizing the interpreter under them can crash or
            # hang: end the process now
            _exit_now(130)
        return 130
    except BrokenPipeError:  # output piped into e.g. `head`: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except (UserError, ValueError, OSError) as err:
        # UserError: our own bad-input errors (positions, settings, models, files);
        # ValueError: python-chess's; OSError: a path that cannot be read or written.
        print(f"error: {one_line(err)}", file=sys.stderr)
        return 2
    finally:
        if process and not interrupted:
            _quiet_interrupts(announce=True)


def _exit_on_lost_interrupts(line: str) -> None:
    """A Ctrl-C that lands in a garbage-collector callback or a destructor (jax has both)
    cannot propagate: Python would print it as an ignored exception, with a traceback,
    and go on. Treat it as the interrupt it is: one line, status 130."""
    previous = sys.unraisablehook

    def hook(info: Any) -> None:
        if isinstance(info.exc_value, KeyboardInterrupt):
            with contextlib.suppress(Exception):
                sys.stderr.write(line + "\n")
            _exit_now(130)
        previous(info)

    sys.unraisablehook = hook


def _exit_now(status: int) -> None:
    """Flush the standard streams and end the process without interpreter finalization."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


def _quiet_interrupts(announce: bool) -> None:
    """From now on a SIGINT ends the process at once with status 130 (``announce``: after
    printing ``interrupted``), instead of raising ``KeyboardInterrupt`` into whatever runs
    then (an atexit callback, a thread join: a traceback)."""
    if threading.current_thread() is not threading.main_thread():
        return

    def stop(signum: int, frame: object) -> None:
        if announce:
            with contextlib.suppress(Exception):
                sys.stderr.write("interrupted\n")
        _exit_now(130)

    with contextlib.suppress(ValueError, OSError):
        signal.signal(signal.SIGINT, stop)


def _sigterm_interrupts() -> None:
    """A SIGTERM ends a run command as Ctrl-C does (``KeyboardInterrupt``), so its clean-up
    runs: finished games, and the moves of the games in play, are saved."""
    import signal
    import threading

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, interrupt)


def one_line(err: BaseException) -> str:
    """An error's message on one line (its lines joined)."""
    text = str(err) or type(err).__name__
    return " | ".join(line.strip() for line in text.splitlines() if line.strip())


__all__ = ["build_parser", "main", "one_line"]
