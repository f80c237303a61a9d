"""``zerochess bench --device-search --profile [DIR]``: where a step of the compiled device
search spends its time, on any backend."""

from __future__ import annotations

import json
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from zerochess.chess.device.expand import mating_slots
from zerochess.chess.types import GameStatus
from zerochess.search import SearchConfig, Searcher, compiled, loop, step

PHASES = ("select", "rules", "mate_check", "prepare", "network", "finish")
# scope path component -> phase (the first match along an op's scope path wins, from the
# innermost out), for the HLO op counts
SCOPES = {"mate_check": "mate_check", "rules": "rules", "select": "select",
          "prepare": "prepare", "network": "network", "backup": "finish/backup",
          "certainty": "finish/certainty", "finish": "finish"}
SKIPPED_OPS = ("parameter", "constant", "get-tuple-element", "tuple", "bitcast")
CPU = {"model": "builtin", "batch": 256, "leaves": 1, "sims": 64}
TINY = {"model": "builtin", "batch": 4, "leaves": 1, "sims": 16}


def _median_ms(fn: Callable, *args: Any, repeats: int, fresh: int = 0) -> float:
    """Median wall time of ``fn(*args)`` (ms), after one call that compiles; the first
    ``fresh`` arguments are copied before each call (outside the timing: ``fn`` donates
    them)."""
    def call() -> float:
        given = jax.block_until_ready(
            [jax.tree.map(jnp.copy, a) for a in args[:fresh]] + list(args[fresh:]))
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*given))
        return time.perf_counter() - t0

    call()
    return 1000 * statistics.median(call() for _ in range(repeats))


def _scope_of(op_name: str) -> str:
    parts = op_name.split("/")
    for part in reversed(parts):
        name = part.split("(")[0]
        if name in SCOPES:
            # an op inside finish/backup is "finish/backup"; inside rules/mate_check:
            # "mate_check"
            return SCOPES[name]
    return "other"


_HEADER = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$")
_OPCODE = re.compile(r"\s([a-z][a-z\-]*)\((?=[%)])")
_OP_NAME = re.compile(r'op_name="([^"]*)"')
_CALLED = re.compile(r"(?:body|condition|to_apply|true_computation|false_computation|calls)"
                     r"=%?([\w.\-]+)")
_BRANCHES = re.compile(r"branch_computations=\{([^}]*)\}")
_CONTROL = ("while", "conditional", "call")


def _computations(hlo_text: str) -> tuple[dict[str, list[str]], str]:
    """An HLO module's computations (name -> instruction lines) and its entry's name."""
    comps: dict[str, list[str]] = {}
    entry, current = "", None
    for line in hlo_text.splitlines():
        if line and not line[0].isspace():
            match = _HEADER.match(line)
            current = match.group(2) if match else None
            if current is not None:
                comps[current] = []
                entry = current if match.group(1) else entry
            continue
        if current is not None and " = " in line:
            comps[current].append(line)
    return comps, entry


def _called(line: str) -> list[str]:
    names = _CALLED.findall(line)
    for group in _BRANCHES.findall(line):
        names += [n.strip().lstrip("%") for n in group.split(",")]
    return names


def hlo_ops(hlo_text: str) -> dict[str, Any]:
    """The ops one run of an optimized HLO module (``compiled.as_text()``) executes as
    such: the instructions of its entry and of the loop bodies, conditions and branches
    reached from it (not the insides of fusions or of reductions' combiners), less
    ``SKIPPED_OPS``. Returns their total, the fusions among them, their count by phase
    (``SCOPES``, from each op's ``op_name`` metadata; a fusion without one takes its
    fused computation's), by op kind, and the commonest ops of no phase."""
    comps, entry = _computations(hlo_text)

    def op_name(line: str) -> str | None:
        found = _OP_NAME.search(line)
        return found.group(1) if found else None

    def fused_name(comp: str) -> str | None:
        lines = comps.get(comp, [])
        roots = [ln for ln in lines if ln.lstrip().startswith("ROOT")]
        for ln in roots + lines:
            name = op_name(ln)
            if name:
                return name
        return None

    by_phase: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    other: Counter[str] = Counter()
    todo, seen = [entry], {entry}
    while todo:
        for line in comps.get(todo.pop(), []):
            found = _OPCODE.search(line.split(" = ", 1)[1])
            if not found:
                continue  # parameter(0), constant(1), ...
            opcode = found.group(1)
            if opcode in _CONTROL:
                for comp in _called(line):
                    if comp not in seen:
                        seen.add(comp)
                        todo.append(comp)
            if opcode in SKIPPED_OPS or opcode in _CONTROL:
                continue
            kinds[opcode] += 1
            name = op_name(line)
            if name is None and opcode == "fusion":
                called = _called(line)
                name = fused_name(called[0]) if called else None
            phase = (_scope_of(name) if name
                     else "copy (XLA)" if opcode == "copy" else "other")
            by_phase[phase] += 1
            if phase == "other":
                other[f"{opcode} {'/'.join(name.split('/')[-2:]) if name else '-'}"] += 1
    return {"total": sum(kinds.values()), "fusions": kinds.get("fusion", 0),
            "by_phase": dict(sorted(by_phase.items())),
            "by_kind": dict(kinds.most_common(12)), "other_top": dict(other.most_common(12))}


def _compiled_with_own_metadata(fn: Any, *args: Any) -> Any:
    """``fn`` compiled for ``args`` with its own op names (the named scopes): jax's
    persistent cache leaves metadata out of its key, so the same computation compiled
    earlier under other names (e.g. by an older zerochess) would come back with those."""
    key = "jax_compilation_cache_include_metadata_in_key"
    before = getattr(jax.config, key)
    jax.config.update(key, True)
    try:
        return fn.lower(*args).compile()
    finally:
        jax.config.update(key, before)


def bytes_accessed(compiled_fn: Any) -> float | None:
    """XLA's estimate of the bytes a compiled program reads and writes (None if the
    backend gives none)."""
    try:
        cost = compiled_fn.cost_analysis()
    except Exception:  # noqa: BLE001 - a backend without a cost model
        return None
    if isinstance(cost, list | tuple):
        cost = cost[0] if cost else None
    if not cost:
        return None
    value = cost.get("bytes accessed")
    return None if value is None else float(value)


def _phase_programs(searcher: Searcher, num_leaves: int) -> dict[str, Callable]:
    """The phases of one step as separate jitted functions (see docs/DESIGN.md)."""
    apply_fn = searcher.model.apply
    history = searcher.cache_history_length
    expand_fn = searcher.rules.device_expand

    def rules(request):
        return expand_fn(request.parent, request.move, None, request.mask)

    def mate_check(expansion, check):
        # as the rules run it on the [B, L] rows flattened: only when some row asks
        def slots(o):
            flat = jax.tree.map(lambda a: a.reshape(-1, *a.shape[check.ndim:]), o)
            return mating_slots(flat.child, flat.legal, flat.num_legal,
                                              check.reshape(-1)).reshape(check.shape)

        return jax.lax.cond(check.any(), slots, lambda o: o.mate_slot, expansion)

    def prepare(state, cache, leaves, expansion):
        return step.prepare(state.tree, state.params, cache, leaves, expansion, history)

    def finish(state, cache, leaves, prepared, outputs):
        return step.finish(state.tree, state.params, cache, leaves, prepared, outputs)

    return {
        "select": jax.jit(lambda s, limit: loop.select(s, limit, num_leaves)),
        "rules": jax.jit(rules),
        "mate_check": jax.jit(mate_check),
        "prepare": jax.jit(prepare),
        "network": jax.jit(lambda p, net, rows: step.network(apply_fn, p, net, rows),
                           static_argnums=(2,)),
        "finish": jax.jit(finish),
        "step": jax.jit(lambda s, c, limit, p, buckets: compiled.run_steps(
            s, c, limit, jnp.int32(1), p, apply_fn, num_leaves, history, buckets, expand_fn),
            static_argnums=(4,), donate_argnums=(0, 1)),  # as the searcher runs it
    }


def profile_point(model: Any, boards: Sequence[Any], batch: int, leaves: int, sims: int,
                  out_dir: str | Path, repeats: int = 5, trace: bool = True
                  ) -> dict[str, Any]:
    """The profile table of one point (see docs/DESIGN.md); the trace goes to
    ``out_dir/trace``.

    Args:
      model: the network (``zerochess.neural.load_model``).
      boards: positions, cycled to ``batch``.
      batch, leaves, sims: B, L and S of the search.
      out_dir: the output folder (created).
      repeats: timed calls per phase (the median is kept).
      trace: capture the ``jax.profiler`` trace.

    Returns:
      The table as a dict (JSON-ready).
    """
    from zerochess.bench.fixtures import fill

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = fill(boards, batch)
    searcher = Searcher(model, max_nodes=sims + 1, leaves_per_step=leaves, rules="device",
                        shards=1)
    params = searcher.model.params
    # warm-up (compiles), then the timed search
    t0 = time.perf_counter()
    jax.block_until_ready(searcher.run(searcher.init(rows, SearchConfig(), 1), sims).shards)
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    jax.block_until_ready(searcher.run(searcher.init(rows, SearchConfig(), 0), sims).shards)
    seconds = time.perf_counter() - t0
    stats = searcher.last_run
    steps = max(stats.steps, 1)

    trace_files: list[str] = []
    if trace:
        tdir = out / "trace"
        with jax.profiler.trace(str(tdir), create_perfetto_trace=True):
            with jax.profiler.TraceAnnotation("search"):
                jax.block_until_ready(
                    searcher.run(searcher.init(rows, SearchConfig(), 0), sims).shards)
        trace_files = sorted(str(p.relative_to(out)) for p in tdir.rglob("*") if p.is_file())

    # the inputs of one step from the middle of the search
    (state,) = searcher.run(searcher.init(rows, SearchConfig(), 0), max(sims // 2, 1)).shards
    state = jax.block_until_ready(state)
    cache = searcher._cache  # noqa: SLF001 - the searcher's own evaluation cache (or None)
    limit = jnp.full((batch,), sims, jnp.int32)
    progs = _phase_programs(searcher, leaves)
    buckets = loop.network_buckets(batch * leaves)
    state1, leaves_, request, _ = progs["select"](state, limit)
    expansion = progs["rules"](request)
    check = (request.mate_check & request.mask & (expansion.status == GameStatus.ONGOING))
    mate_slot = progs["mate_check"](expansion, check)
    expansion = expansion._replace(mate_slot=mate_slot)
    prepared, net = progs["prepare"](state1, cache, leaves_, expansion)
    bound = int(np.sum(np.asarray(request.mask) & (np.asarray(expansion.status)
                                                   == GameStatus.ONGOING)))
    net_rows = 0 if bound <= 0 else next(b for b in buckets if b >= bound)
    outputs = progs["network"](params, net, net_rows)
    inputs = {"select": (state, limit), "rules": (request,), "mate_check": (expansion, check),
              "prepare": (state1, cache, leaves_, expansion),
              "network": (params, net, net_rows),
              "finish": (state1, cache, leaves_, prepared, outputs)}
    phases: dict[str, dict[str, Any]] = {}
    for name in PHASES:
        ms = _median_ms(progs[name], *inputs[name], repeats=repeats)
        lowered = progs[name].lower(*inputs[name])
        phases[name] = {"ms": ms, "bytes_accessed": bytes_accessed(lowered.compile())}
    total = sum(p["ms"] for p in phases.values())
    for p in phases.values():
        p["share"] = p["ms"] / total if total > 0 else 0.0

    one = _compiled_with_own_metadata(progs["step"], state, cache, limit, params, buckets)
    (out / "step_hlo.txt").write_text(one.as_text())
    fused_ms = _median_ms(progs["step"], state, cache, limit, params, buckets,
                          repeats=repeats, fresh=2)
    sims_per_step = batch * leaves
    step_bytes = bytes_accessed(one)
    table = {
        "method": ("step_ms: a warm search (Searcher(rules='device', shards=1)) over its "
                   "steps; phase ms: each phase compiled alone on one step's inputs from the "
                   "middle of the search (after S/2 simulations), median of repeats; share: "
                   "phase ms over the phases' sum; hlo_ops: ops of the compiled one-step "
                   "program outside fused computations by named scope; bytes: XLA "
                   "cost_analysis of the one-step program (loop bodies counted once) over "
                   "B x L simulations"),
        "backend": jax.default_backend(), "model": model.name, "batch": batch,
        "leaves": leaves, "sims": sims, "repeats": repeats, "compile_s": compile_s,
        "seconds": seconds, "steps": stats.steps, "sims_per_s": batch * sims / seconds,
        "step_ms": 1000 * seconds / steps, "host_ms_per_step": 1000 * stats.host_s / steps,
        "device_ms_per_step": 1000 * stats.wait_s / steps,
        "fused_step_ms": fused_ms, "phases_sum_ms": total,
        "network_rows_at_profiled_step": net_rows,
        "phases": phases,
        "hlo_ops_per_step": hlo_ops(one.as_text()),
        "bytes_accessed_per_step": step_bytes,
        "bytes_per_simulation": None if step_bytes is None else step_bytes / sims_per_step,
        "trace_dir": "trace" if trace else None, "trace_files": trace_files,
    }
    (out / "profile.json").write_text(json.dumps(table, indent=2) + "\n")
    (out / "profile.txt").write_text(format_table(table) + "\n")
    return table


def format_table(table: dict[str, Any]) -> str:
    """The profile table as text."""
    ops = table["hlo_ops_per_step"]
    lines = [f"device-search profile: {table['model']} B={table['batch']} L={table['leaves']} "
             f"S={table['sims']} on {table['backend']}",
             f"  {table['sims_per_s']:,.0f} sims/s; {table['step_ms']:.3f} ms per step "
             f"({table['steps']} steps; host between calls {table['host_ms_per_step']:.3f} ms "
             f"per step); one step compiled alone {table['fused_step_ms']:.3f} ms; phases "
             f"alone sum {table['phases_sum_ms']:.3f} ms",
             f"  {'phase':<12} {'ms':>9} {'share':>7} {'MB accessed':>12} {'HLO ops':>8}"]
    for name, p in table["phases"].items():
        mb = "-" if p["bytes_accessed"] is None else f"{p['bytes_accessed'] / 1e6:.2f}"
        count = sum(v for k, v in ops["by_phase"].items() if k.split("/")[0] == name)
        lines.append(f"  {name:<12} {p['ms']:9.3f} {p['share']:7.1%} {mb:>12} {count:>8}")
    per_sim = table["bytes_per_simulation"]
    lines.append(f"  HLO ops per step {ops['total']} ({ops['fusions']} fusions; by scope "
                 f"{ops['by_phase']}); bytes accessed per simulation "
                 f"{'-' if per_sim is None else f'{per_sim:,.0f}'}")
    if table.get("trace_dir"):
        lines.append(f"  trace: {table['trace_dir']}/ ({len(table['trace_files'])} files)")
    lines.append(f"  method: {table['method']}")
    return "\n".join(lines)


__all__ = ["CPU", "PHASES", "TINY", "bytes_accessed", "format_table", "hlo_ops",
           "profile_point"]
