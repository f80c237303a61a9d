"""``zerochess warmup``: compile once, at install time, what the default commands run."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import time

PARTS = ("uci", "analyse", "analysis", "search")
# what the ``analysis`` part asks the engine: one query of the default size (the start
# position; maxVisits, the slots' shapes and every setting at the defaults)
ANALYSIS_QUERY = b'{"id":"warmup","moves":[]}\n'


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "warmup", help="compile (once per machine) what uci, analyse, analysis and the "
        "README's pure search run at their default settings",
        description="Fill the compiled-program store and jax's compilation cache "
        "($ZEROCHESS_JAX_CACHE, else ~/.cache/zerochess/jax) for the default settings of "
        "`zerochess uci`, `zerochess analyse`, the JSON analysis engine `zerochess analysis` "
        "and the README's pure search example, so that their first start on this machine "
        "loads instead of compiling (minutes on a small CPU, once).")
    # no argparse choices: with nargs="*" Python 3.11's argparse checks the empty default
    # against them and refuses a bare `zerochess warmup` ("invalid choice: []")
    p.add_argument("parts", nargs="*", metavar="PART",
                   help=f"only these ({', '.join(PARTS)}; default all)")
    p.set_defaults(run=run)


def warm_uci(say=print) -> None:
    """The UCI engine's default driver, its whole warm-up (``isready``'s and the part it
    defers to the background)."""
    from zerochess.uci.engine import build_driver
    from zerochess.uci.options import OptionValues

    driver = build_driver(OptionValues())
    driver.warmup(progress=lambda text: say(f"  uci: {text}"))


def warm_analyse(say=print) -> None:
    """``zerochess analyse FEN --json`` at its defaults (its output dropped)."""
    from zerochess.bench.startup import FEN
    from zerochess.cli import main

    with contextlib.redirect_stdout(io.StringIO()):
        status = main(["analyse", FEN, "--json"])
    if status:
        raise RuntimeError(f"zerochess analyse exited with status {status}")


class _Prefixed(io.TextIOBase):
    """A text stream that passes each whole line on to ``say``, prefixed."""

    def __init__(self, say, prefix: str):
        self._say, self._prefix, self._part = say, prefix, ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        *lines, self._part = (self._part + text).split("\n")
        for line in lines:
            if line:
                self._say(self._prefix + line)
        return len(text)


def warm_analysis(say=print) -> None:
    """``zerochess analysis`` at its defaults: the engine's start-up (its batch's
    ``warm_up``: every program a query runs) and one query of the default size
    (``ANALYSIS_QUERY``), its response dropped; the engine's log goes to ``say``."""
    from zerochess.analysis.engine import Engine
    from zerochess.analysis.settings import from_args
    from zerochess.cli import build_parser

    settings = from_args(build_parser().parse_args(["analysis"]))  # the command's defaults
    out = io.BytesIO()
    engine = Engine(settings, output=out, log=_Prefixed(say, "  analysis: "))
    try:
        engine.serve(io.BytesIO(ANALYSIS_QUERY))
    finally:  # its host move-generation processes, not needed by the parts after it
        engine.batch.searcher.rules.close()
    if b'"moveInfos"' not in out.getvalue():
        raise RuntimeError("zerochess analysis did not answer the warm-up query: "
                           f"{out.getvalue().decode(errors='replace')[-500:]}")


def warm_search(say=print) -> None:
    """The README's pure search example (its own ``jax.jit``: jax's compilation cache)."""
    from zerochess.bench.startup import SEARCH_SCRIPT

    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(SEARCH_SCRIPT, "<README pure search>", "exec"), {"__name__": "warmup"})


def run(args: argparse.Namespace) -> int:
    from zerochess import compile_cache, program_store

    unknown = [part for part in args.parts if part not in PARTS]
    if unknown:
        print(f"error: zerochess warmup: unknown part {unknown[0]!r} (choose from "
              f"{', '.join(PARTS)}, or none for all)", file=sys.stderr)
        return 2
    where = compile_cache.enable()
    if where is None:
        print("error: the compilation cache is off (ZEROCHESS_JAX_CACHE is empty): nothing "
              "would be kept", file=sys.stderr)
        return 2
    print(f"warming up in {where} (once per machine; minutes on a small CPU)", flush=True)
    jobs = {"uci": warm_uci, "analyse": warm_analyse, "analysis": warm_analysis,
            "search": warm_search}
    for part in args.parts or PARTS:
        t0 = time.perf_counter()
        before, entries_before = dict(program_store.STATS), _entries(where)
        jobs[part](lambda text: print(text, flush=True))
        stats = {k: v - before.get(k, 0) for k, v in program_store.STATS.items()}
        print(part_line(part, time.perf_counter() - t0, stats, entries_before,
                        _entries(where)), flush=True)
    return 0


def _entries(directory: str) -> int:
    """Files in jax's compilation cache directory (0 if it does not exist yet)."""
    try:
        return len(os.listdir(directory))
    except OSError:
        return 0


def part_line(part: str, seconds: float, stats: dict, entries_before: int,
              entries_after: int) -> str:
    """One part's closing line. ``search`` runs under the user's own ``jax.jit`` and never
    goes through the program store, so its line counts the compilation cache's new
    entries instead of saying "0 programs compiled" after minutes of compiling."""
    if part == "search":
        return (f"{part}: ready in {seconds:.1f} s ({entries_after - entries_before} new "
                "entries in jax's compilation cache)")
    return (f"{part}: ready in {seconds:.1f} s ({stats.get('compiled', 0)} programs "
            f"compiled, {stats.get('loaded', 0)} loaded)")


__all__ = ["ANALYSIS_QUERY", "PARTS", "add_parser", "part_line", "run", "warm_analyse",
           "warm_analysis", "warm_search", "warm_uci"]
