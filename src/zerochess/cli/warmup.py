"""``zerochess warmup``: compile once, at install time, what the default commands run."""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time

PARTS = ("uci", "analyse", "search")


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "warmup", help="compile (once per machine) what uci, analyse and the README's pure "
        "search run at their default settings",
        description="Fill the compiled-program store and jax's compilation cache "
        "($ZEROCHESS_JAX_CACHE, else ~/.cache/zerochess/jax) for the default settings of "
        "`zerochess uci`, `zerochess analyse` and the README's pure search example, so that "
        "their first start on this machine loads instead of compiling (minutes on a small "
        "CPU, once).")
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
    jobs = {"uci": warm_uci, "analyse": warm_analyse, "search": warm_search}
    for part in args.parts or PARTS:
        t0 = time.perf_counter()
        before = dict(program_store.STATS)
        jobs[part](lambda text: print(text, flush=True))
        stats = {k: v - before.get(k, 0) for k, v in program_store.STATS.items()}
        print(f"{part}: ready in {time.perf_counter() - t0:.1f} s ({stats.get('compiled', 0)} "
              f"programs compiled, {stats.get('loaded', 0)} loaded)", flush=True)
    return 0


__all__ = ["PARTS", "add_parser", "run", "warm_analyse", "warm_search", "warm_uci"]
