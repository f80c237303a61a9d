"""How ``Searcher.run`` advances its shards: the host pipeline or the compiled steps.

``Driver.run`` is the plumbing both share (chunks, threads per shard, statistics,
progress, the deadline, the observer); a driver supplies only ``advance``.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from zerochess.search.cache import EvalCache
from zerochess.search.gather import Leaves
from zerochess.search.loop import SearchState, network_buckets
from zerochess.search.step import HostExpand, LeafOutputs, Prepared

STEP_CALL_S = 0.05  # device time per compiled call when the host must look in (clock, progress)


@dataclasses.dataclass
class PipelineStats:
    """What one ``run`` did (batch level)."""

    steps: int = 0  # groups evaluated
    rows_used: int = 0  # rows needing the network as the host saw them (new, ongoing leaves)
    rows_available: int = 0  # rows of the evaluation batches the network ran on
    rows_capacity: int = 0  # R per step (the fixed evaluation batch)
    host_s: float = 0.0  # time spent expanding on the host (compiled: between calls)
    wait_s: float = 0.0  # time the host waited for the device

    def add(self, other: PipelineStats) -> None:
        for f in dataclasses.fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


@dataclasses.dataclass
class Run:
    """One ``advance`` call's view of the shared plumbing: its statistics, the stop rule
    (the observer, the deadline, a cancelled sibling thread) and progress reports."""

    stats: PipelineStats
    deadline: float | None = None  # ``time.perf_counter()`` past which no group starts
    observe: Callable[[list[SearchState]], bool] | None = None
    report: Callable[[int, int], None] | None = None  # (shard, simulations it has left)
    cancelled: threading.Event | None = None
    alone: bool = True  # this thread drives every shard (no thread per shard)
    stopping: bool = False

    @property
    def watched(self) -> bool:
        """Whether the host must look in between steps (clock, progress, observer)."""
        return (self.deadline is not None or self.report is not None
                or self.observe is not None)

    def late(self, states: list[SearchState]) -> bool:
        """Start no new work: the observer said stop (asked once per call until it does),
        the deadline passed or another shard's thread was cancelled."""
        if not self.stopping and self.observe is not None:
            self.stopping = bool(self.observe(states))
        return (self.stopping or (self.deadline is not None and time.perf_counter() > self.deadline)
                or (self.cancelled is not None and self.cancelled.is_set()))

    def left(self, shard: int, count: int) -> None:
        if self.report is not None:
            self.report(shard, count)


class Driver:
    """Advances a batch's shards to their simulation limits. ``Searcher`` picks one at
    construction (``HostPipeline`` or ``CompiledSteps``) and calls ``run``. ``cache``: the
    searcher's evaluation cache (or None), replaced as each program returns a new one."""

    groups: int = 1  # groups of leaves in flight per shard
    threads: bool = True  # each shard may run on its own host thread (without a cache)
    cache: EvalCache | None = None

    def default_shards(self, leaves_per_step: int) -> int:
        raise NotImplementedError

    def advance(self, states: list[SearchState], limits: Sequence[jax.Array], net_params: Any,
                run: Run) -> list[SearchState]:
        """Simulate ``states`` until their trees reach ``limits`` (int32 [B] each) or are
        stopped, or until ``run.late`` (then the work in flight is finished); count into
        ``run.stats`` and report each shard's simulations left through ``run.left``."""
        raise NotImplementedError

    def run(self, states: list[SearchState], budget: np.ndarray, max_nodes: int,
            net_params: Any, deadline: float | None = None,
            progress: Callable[[int, int], None] | None = None,
            observe: Callable[[list[SearchState]], bool] | None = None
            ) -> tuple[list[SearchState], PipelineStats]:
        """Run the trees up to ``budget`` [B] simulations with the network ``net_params``.

        A full tree stops: once a tree has dropped a simulation (no room for a node or its
        edges), every simulation it has left is dropped at once (``dropped_simulations``)
        instead of costing a search step each. ``advance`` runs in chunks of at most the
        nodes left in each tree, so a tree's simulations do not depend on how they are
        split into ``run`` calls; a search that fits its tree is one chunk.
        ``progress(done, total)``: simulations started so far and requested, over the batch.
        """
        stats, states = PipelineStats(), list(states)
        size = len(budget) // len(states)
        before, observed, total = None, [False], 0

        def watch(shards: list[SearchState]) -> bool:
            observed[0] = observed[0] or bool(observe(shards))
            return observed[0]

        while True:
            sims, dropped, nodes, stopped = (np.concatenate(x) for x in jax.device_get(
                ([s.tree.simulations for s in states], [s.tree.dropped for s in states],
                 [s.tree.node_count for s in states], [s.stopped for s in states])))
            sims, nodes = sims.astype(np.int64), nodes.astype(np.int64)
            if before is None:
                total = int((budget - sims).sum())  # the simulations this run asks for
            elif np.array_equal(sims, before):
                return states, stats  # nothing moved (every tree stopped): done
            before = sims
            remaining = np.where(stopped, 0, budget - sims)
            stop = (dropped > 0) & (remaining > 0)
            if stop.any():
                for k in range(len(states)):
                    add = jax.device_put(np.where(stop, remaining, 0)[k * size:(k + 1) * size]
                                         .astype(np.int32))
                    tree = states[k].tree
                    states[k] = states[k].replace(tree=tree.replace(
                        dropped=tree.dropped + add, simulations=tree.simulations + add))
                remaining = np.where(stop, 0, remaining)
            late = (deadline is not None and time.perf_counter() > deadline) or observed[0]
            if not remaining.any() or late:
                return states, stats
            chunk = np.minimum(remaining, np.maximum(max_nodes - nodes, 1))
            limits = [(sims + chunk)[k * size:(k + 1) * size].astype(np.int32)
                      for k in range(len(states))]
            other = int(remaining.sum() - chunk.sum())
            report = None if progress is None else (
                lambda left, other=other, total=total: progress(total - left - other, total))
            states = self._shards(
                states, limits, net_params, stats, deadline, report,
                None if observe is None else watch,
                [int(c) for c in chunk.reshape(len(states), size).sum(axis=1)])

    def _shards(self, states: list[SearchState], limits: list[np.ndarray], net_params: Any,
                stats: PipelineStats, deadline: float | None,
                progress: Callable[[int], None] | None,
                observe: Callable[[list[SearchState]], bool] | None, left: list[int]
                ) -> list[SearchState]:
        """``advance`` on every shard: from one thread per shard when the driver allows it
        and nothing is shared between the shards (no cache, no observer: a shard's steps
        then do not depend on another's, and the trees are those of the shards run one
        after the other), else from this thread. ``progress(left)`` gets the batch's
        simulations left to start (``left``: each shard's before it reports)."""
        lock = threading.Lock()

        def reporter(first: int) -> Callable[[int, int], None] | None:
            def report(shard: int, count: int) -> None:
                with lock:
                    left[first + shard] = count
                    progress(sum(left))
            return None if progress is None else report

        if not self.threads or len(states) < 2 or self.cache is not None or observe is not None:
            return self.advance(states, limits, net_params,
                                Run(stats, deadline, observe, reporter(0)))
        # jax's CPU backend runs one host thread's programs one at a time, mostly on one
        # core: a thread per shard runs the shards' searches side by side
        cancelled = threading.Event()

        def shard(k: int) -> SearchState:
            own = PipelineStats()
            (state,) = self.advance([states[k]], [limits[k]], net_params,
                                    Run(own, deadline, None, reporter(k), cancelled, False))
            with lock:
                stats.add(own)
            return state

        with concurrent.futures.ThreadPoolExecutor(len(states)) as pool:
            futures = [pool.submit(shard, k) for k in range(len(states))]
            try:
                return [f.result() for f in futures]
            except BaseException:
                # e.g. KeyboardInterrupt in this thread: the shards finish the work in
                # flight and start no more, so the pool's exit does not wait for the search
                cancelled.set()
                raise


# --- the compiled steps (device rules) -----------------------------------------------------


class CompiledSteps(Driver):
    """Device rules: a shard advances by calls of ``compiled.run_steps``, each many steps;
    between calls the host checks the clock, reports progress and asks the observer.
    Calls are sized to about ``STEP_CALL_S`` of device time once the step time is known
    (with a deadline: a smaller share of the time left), so a stop is seen within one call.

    ``run_steps(state, cache, limit, max_steps, net_params, buckets=)``: the program with
    the searcher's other static arguments bound."""

    def __init__(self, run_steps: Callable, leaves_per_step: int):
        self.run_steps, self.leaves_per_step = run_steps, leaves_per_step

    def default_shards(self, leaves_per_step: int) -> int:
        # on a CPU, two shards search on two threads; not with the evaluation cache, which
        # every tree shares
        return 2 if jax.default_backend() == "cpu" and self.cache is None else 1

    def advance(self, states: list[SearchState], limits: Sequence[jax.Array], net_params: Any,
                run: Run) -> list[SearchState]:
        rows = states[0].tree.batch_size * self.leaves_per_step
        buckets = network_buckets(rows)
        stats = run.stats
        for k in range(len(states)):
            limit = jax.device_put(np.asarray(limits[k], np.int32))
            steps = 2 if run.watched else None
            t_host = time.perf_counter()
            while True:
                t0 = time.perf_counter()
                host = t0 - t_host  # the host's work since the last call returned
                budget = np.int32(steps if steps is not None else np.iinfo(np.int32).max)
                # the cache is donated: the searcher's reference is renewed at once
                states[k], self.cache, counts = self.run_steps(
                    states[k], self.cache, limit, budget, net_params, buckets=buckets)
                counts = jax.device_get(counts)
                t_host = time.perf_counter()
                spent = t_host - t0
                done = int(counts.steps)
                finished = done < budget or int(counts.left) == 0
                # wait_s: the compiled calls (as the host waits for them); host_s: the
                # host's work between them
                stats.wait_s += spent
                stats.host_s += host
                stats.steps += done
                stats.rows_used += int(counts.rows_used)
                stats.rows_available += int(counts.rows_available)
                stats.rows_capacity += done * rows
                run.left(k, 0 if finished else int(counts.left))
                if run.late(states) or finished:
                    break
                per_step = spent / max(done, 1)
                target = STEP_CALL_S if run.deadline is None else max(
                    min(STEP_CALL_S, (run.deadline - time.perf_counter()) / 4), per_step)
                steps = max(1, int(target / max(per_step, 1e-6)))
        return states


# --- the host pipeline (host rules) --------------------------------------------------------


@dataclasses.dataclass
class Programs:
    """The compiled programs of one ``Searcher`` and shard shape (see docs/DESIGN.md)."""

    select: Callable  # (state, limit) -> (state, leaves, request, left)
    evaluate: Callable  # (state, cache, leaves, expansion, rows) -> (prepared, outputs)
    prepare: Callable  # (state, cache, leaves, expansion) -> (prepared, net_inputs)
    network: Callable  # (net_inputs, rows) -> outputs
    finish_select: Callable  # (state, cache, leaves, prepared, outputs, limit)
    #                          -> (state, cache, leaves, request, left)
    finish: Callable  # (state, cache, leaves, prepared, outputs) -> (state, cache)
    host_expand: HostExpand
    rows: int  # R, the evaluation batch (B x L of a shard)
    buckets: tuple[int, ...]  # network sizes, ascending; the last is R

    def bucket(self, count: int) -> int:
        return 0 if count <= 0 else next(b for b in self.buckets if b >= count)


@dataclasses.dataclass
class _Lane:
    shard: int
    stage: str = "idle"  # idle -> selected -> evaluating -> selected ... -> idle
    exhausted: bool = False
    leaves: Leaves | None = None
    request: Any = None
    left: Any = None
    prepared: Prepared | None = None
    outputs: LeafOutputs | concurrent.futures.Future | None = None


class HostPipeline(Driver):
    """Host rules: ``groups`` lanes per shard in flight, the host expanding one lane's
    leaves (python-chess) while the device evaluates another's (see docs/DESIGN.md).

    ``programs(shard_size, net_params)``: the searcher's ``Programs``. ``threads``: for
    jax's CPU backend, which runs the programs one host thread dispatches one after
    another: each shard gets its own thread (``Driver.run``), or, when the shards stay on
    one thread, the networks (pure functions of their inputs) run on helper threads
    beside it. Results do not depend on it."""

    def __init__(self, programs: Callable[[int, Any], Programs], groups: int,
                 threads: bool):
        self.programs, self.groups, self.threads = programs, groups, threads

    def default_shards(self, leaves_per_step: int) -> int:
        # B >= 16 and L = 1: one shard's network runs while the other is expanded
        return 2 if leaves_per_step == 1 else 1

    def advance(self, states: list[SearchState], limits: Sequence[jax.Array], net_params: Any,
                run: Run) -> list[SearchState]:
        programs = self.programs(states[0].tree.batch_size, net_params)
        if self.threads and run.alone and len(states) * self.groups > 1:
            with concurrent.futures.ThreadPoolExecutor(len(states) * self.groups) as networks:
                return self._lanes(programs, states, limits, run, networks)
        return self._lanes(programs, states, limits, run)

    def _lanes(self, programs: Programs, states: list[SearchState],
               limits: Sequence[jax.Array], run: Run,
               networks: concurrent.futures.Executor | None = None) -> list[SearchState]:
        """The host pipeline from one host thread: every shard's lanes in turn.

        ``groups`` lanes per shard are kept in flight. A lane cycles: its leaves are fetched
        and expanded on the host; its ``prepare`` is dispatched; then the ``finish_select``
        of the lane evaluated before it (back up, then gather that lane's next group); then
        this lane's ``network``. So the other lane's next leaves are gathered ahead of this
        network in the device's queue and can be expanded on the host while it runs. With
        one lane every step is gather, expand, evaluate (one program), back up and gather
        again (one program). ``networks``: an executor the networks are submitted to (their
        outputs are awaited at the lane's backup).

        The network of a step runs on the smallest compiled batch that holds the new,
        ongoing leaves the host expanded (cache hits and repetition draws among them, known
        only on the device, are padding). ``run.late`` is asked before each group is expanded,
        with the shards' latest states (every group dispatched so far backed up in them).
        """
        stats = run.stats
        lanes = [_Lane(shard=s) for _ in range(self.groups) for s in range(len(states))]
        states = list(states)

        def select(lane: _Lane) -> None:
            state, leaves, request, left = programs.select(states[lane.shard], limits[lane.shard])
            states[lane.shard] = state
            lane.leaves, lane.request, lane.left, lane.stage = leaves, request, left, "selected"

        def expand(lane: _Lane) -> tuple[Any, int]:
            """Fetch and expand the lane's leaves; returns the expansion and the network rows."""
            t0 = time.perf_counter()
            request, left = jax.device_get((lane.request, lane.left))
            t1 = time.perf_counter()
            lane.exhausted = lane.exhausted or not np.any(left > 0) or run.late(states)
            run.left(lane.shard, int(np.sum(left)))
            expansion = programs.host_expand(request)
            stats.wait_s += t1 - t0
            stats.host_s += time.perf_counter() - t1
            bound = int(np.sum(np.asarray(request.mask) & (expansion.status == 0)))
            rows = programs.bucket(bound)
            stats.steps += 1
            stats.rows_used += bound
            stats.rows_available += rows
            stats.rows_capacity += programs.rows
            lane.request = lane.left = None
            return expansion, rows

        def finish(lane: _Lane) -> None:
            s = lane.shard
            if isinstance(lane.outputs, concurrent.futures.Future):
                lane.outputs = lane.outputs.result()
            if lane.exhausted:
                states[s], self.cache = programs.finish(states[s], self.cache, lane.leaves,
                                                        lane.prepared, lane.outputs)
                lane.leaves = None
                lane.stage = "idle"
            else:
                (states[s], self.cache, lane.leaves, lane.request,
                 lane.left) = programs.finish_select(states[s], self.cache, lane.leaves,
                                                     lane.prepared, lane.outputs, limits[s])
                lane.stage = "selected"
            lane.prepared = lane.outputs = None

        for lane in lanes:
            if run.late(states):
                break
            select(lane)
        count = len(lanes)
        i = 0
        while any(lane.stage != "idle" for lane in lanes):
            cur = lanes[i % count]
            i += 1
            if count == 1:
                if cur.stage == "selected":
                    expansion, rows = expand(cur)
                    cur.prepared, cur.outputs = programs.evaluate(states[cur.shard], self.cache,
                                                                  cur.leaves, expansion, rows)
                finish(cur)
                continue
            nxt = lanes[i % count]
            net = None
            if cur.stage == "selected":
                expansion, rows = expand(cur)
                cur.prepared, net = programs.prepare(states[cur.shard], self.cache, cur.leaves,
                                                     expansion)
            if nxt.stage == "evaluating":
                finish(nxt)
            if net is not None:
                cur.outputs = (programs.network(net, rows) if networks is None
                               else networks.submit(programs.network, net, rows))
                cur.stage = "evaluating"
        return states


__all__ = ["STEP_CALL_S", "CompiledSteps", "Driver", "HostPipeline", "PipelineStats",
           "Programs", "Run"]
