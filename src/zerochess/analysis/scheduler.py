"""Continuous batching on the host: a priority queue of positions and the tree slots."""

from __future__ import annotations

import dataclasses
import heapq
import itertools
from collections.abc import Callable, Iterator

from zerochess.analysis.protocol import Query, TurnSpec


@dataclasses.dataclass(eq=False)
class Job:
    """One position to search: a turn of a query, and its progress once in a slot."""

    query: Query
    spec: TurnSpec
    seq: int  # arrival order: ties between equal priorities go to the earlier job
    slot: int | None = None
    started: float | None = None  # monotonic time the search started
    next_report: float | None = None  # when the next partial report is due
    simulations: int = 0  # simulations done (the root visits are simulations + 1)
    terminated: bool = False

    @property
    def turn(self) -> int:
        return self.spec.turn

    @property
    def priority(self) -> int:
        return self.spec.priority

    @property
    def budget(self) -> int:
        """Simulations to run: maxVisits counts the root's own evaluation as its first visit."""
        return self.query.max_visits - 1

    @property
    def remaining(self) -> int:
        return 0 if self.terminated else max(self.budget - self.simulations, 0)

    def start(self, slot: int, now: float) -> None:
        self.slot = slot
        self.started = now
        self.simulations = 0
        if self.query.first_report_after is not None:
            self.next_report = now + self.query.first_report_after

    def report_due(self, now: float) -> bool:
        return self.next_report is not None and now >= self.next_report

    def reported(self, now: float) -> None:
        """Schedule the next partial report: on the cadence, without bursts after a stall."""
        every = self.query.report_every
        if every is None:
            self.next_report = None
            return
        nxt = (self.next_report or now) + every
        self.next_report = nxt if nxt > now else now + every

    def matches(self, query_id: str | None, turns: frozenset[int] | None) -> bool:
        """Whether a terminate (``query_id`` None: terminate_all) applies to this job."""
        return ((query_id is None or self.query.id == query_id)
                and (turns is None or self.turn in turns))


class JobQueue:
    """Waiting jobs, highest priority first, then first come first served."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Job]] = []
        self._arrivals = itertools.count()

    def __len__(self) -> int:
        return len(self._heap)

    def add(self, query: Query) -> list[Job]:
        """One job per turn of ``query`` (turn order breaks ties within a query)."""
        jobs = [Job(query, spec, next(self._arrivals)) for spec in query.turns]
        for job in jobs:
            heapq.heappush(self._heap, (-job.priority, job.seq, job))
        return jobs

    def pop(self) -> Job | None:
        return heapq.heappop(self._heap)[2] if self._heap else None

    def peek(self) -> Job | None:
        """The job ``pop`` would return, left in the queue."""
        return self._heap[0][2] if self._heap else None

    def first(self, count: int) -> list[Job]:
        """The ``count`` jobs ``pop`` would return next, in that order, left in the queue."""
        return [e[2] for e in heapq.nsmallest(count, self._heap)]

    def requeue(self, job: Job) -> None:
        """Put back a job taken from its slot: it keeps its place by priority and arrival,
        and starts over when it gets a slot again."""
        job.slot = None
        job.started = None
        job.next_report = None
        job.simulations = 0
        heapq.heappush(self._heap, (-job.priority, job.seq, job))

    def remove(self, predicate: Callable[[Job], bool]) -> list[Job]:
        """Take out the jobs matching ``predicate`` (in queue order)."""
        keep, taken = [], []
        for entry in self._heap:
            (taken if predicate(entry[2]) else keep).append(entry)
        if taken:
            self._heap = keep
            heapq.heapify(self._heap)
        return [e[2] for e in sorted(taken, key=lambda e: e[:2])]


class Slots:
    """Which job each of the B tree slots is searching (None: free)."""

    def __init__(self, count: int):
        self.jobs: list[Job | None] = [None] * count

    def __len__(self) -> int:
        return len(self.jobs)

    def free(self) -> list[int]:
        return [i for i, job in enumerate(self.jobs) if job is None]

    def active(self) -> Iterator[tuple[int, Job]]:
        return ((i, job) for i, job in enumerate(list(self.jobs)) if job is not None)

    @property
    def busy(self) -> int:
        return sum(job is not None for job in self.jobs)

    def assign(self, slot: int, job: Job) -> None:
        if self.jobs[slot] is not None:
            raise RuntimeError(f"slot {slot} is busy")
        self.jobs[slot] = job

    def preemptible(self, priority: int) -> int | None:
        """The slot a queued job of ``priority`` may take when none is free: of the jobs
        with a lower priority, the lowest, then the one with the fewest simulations (the
        least work lost), then the latest arrival; None if every job ranks as high."""
        lower = [(job.priority, job.simulations, -job.seq, slot)
                 for slot, job in self.active() if job.priority < priority]
        return min(lower)[3] if lower else None

    def release(self, slot: int) -> Job:
        job = self.jobs[slot]
        if job is None:
            raise RuntimeError(f"slot {slot} is already free")
        self.jobs[slot] = None
        return job
