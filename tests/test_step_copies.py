"""The search step's loops update the trees in place: no copy of a tree array per loop trip.

XLA copies a loop-carried array whole when a value read from it before an in-place
update also feeds another array's update (its copy insertion cannot order the two).
Inside the gather's descents or the certainty walk, that is one copy of the tree per
trip: with 262,144 nodes a step took 120 ms instead of 2 ms, so a UCI search at the
default tree size ran at a tenth of its speed. This test compiles the host pipeline's
programs (whose ``gather`` and ``step.finish`` the device search shares) for a tree whose
node and pool counts are found in no other shape, and reads the optimised HLO: no
computation run as a loop body or a branch may copy an array of those sizes.
"""

from __future__ import annotations

import re

import chess
import jax
import pytest

from zerochess.search import SearchConfig
from zerochess.search.programs import StateProgram

import searchers

COMPUTATION = re.compile(r"^(ENTRY )?%([\w.\-]+) ")
COPY = re.compile(r"^\s*(?:ROOT )?%\S+ = \w+\[([\d,]*)\][^ ]* copy\(")
PROGRAMS = ("select", "finish_select", "finish_only")
ADVANCE = "advance_state"  # tree reuse (``reroot``): its pool must not be copied at all


def loop_copies(hlo: str, sizes: set[int]) -> list[str]:
    """Copies of arrays with a dimension in ``sizes`` made by loop bodies and branches
    (the computations a ``while`` or ``conditional`` runs), as HLO lines."""
    bodies: dict[str, list[str]] = {}
    current = None
    for line in hlo.splitlines():
        head = COMPUTATION.match(line)
        if head and line.rstrip().endswith("{"):
            current = head.group(2)
            bodies[current] = []
        elif current is not None:
            bodies[current].append(line)
    looped = set()
    for lines in bodies.values():
        for line in lines:
            for names in re.findall(r"body=%([\w.\-]+)", line):
                looped.add(names)
            branches = re.search(r"branch_computations=\{([^}]*)\}", line)
            if branches:
                looped.update(x.strip().lstrip("%") for x in branches.group(1).split(","))
    found = []
    for name in looped:
        for line in bodies.get(name, ()):
            copy = COPY.match(line)
            if copy and sizes & {int(d) for d in copy.group(1).split(",") if d}:
                found.append(f"{name}: {line.strip()[:120]}")
    return found


@pytest.fixture(scope="module")
def compiled_hlo() -> tuple[dict[str, str], set[int]]:
    """The optimised HLO of each step program of a 4-leaf search with certainty, and the
    tree's node and pool counts."""
    searcher = searchers.toy_searcher(4)
    seen: dict[str, tuple] = {}
    call = StateProgram.__call__

    def record(self, state, *args, **static):
        name = self.name.split(".")[-1].split("/")[0]
        if name in (*PROGRAMS, ADVANCE) and name not in seen:
            shapes = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype),
                                  (state, args))
            seen[name] = (self, shapes, static)
        return call(self, state, *args, **static)

    StateProgram.__call__ = record
    try:
        batch = searcher.init([chess.Board()], SearchConfig(certainty_propagation=True), seed=0)
        batch = searcher.run(batch, 24)
        state = batch.shards[0]
        searcher.advance(batch, [searcher.results(batch)[0].pv[:1]])
    finally:
        StateProgram.__call__ = call
    assert set(seen) == {*PROGRAMS, ADVANCE}, sorted(seen)
    hlo = {name: program.lower(shapes[0], *shapes[1], **static).compile().as_text()
           for name, (program, shapes, static) in seen.items()}
    return hlo, {state.tree.num_nodes, state.tree.edges.child.shape[-1]}


def test_the_sizes_are_the_trees_own(compiled_hlo):
    hlo, sizes = compiled_hlo
    assert len(sizes) == 2 and min(sizes) > 128  # no other array has such a dimension
    # the programs do carry the tree arrays through their loops
    for name, text in hlo.items():
        assert "while(" in text, name


@pytest.mark.parametrize("name", PROGRAMS)
def test_no_tree_array_is_copied_inside_a_loop(compiled_hlo, name):
    hlo, sizes = compiled_hlo
    assert loop_copies(hlo[name], sizes) == []


def all_copies(hlo: str, size: int) -> list[str]:
    """Copies anywhere in the program (loops, branches and the top level) of arrays with a
    dimension ``size``."""
    return [line.strip()[:120] for line in hlo.splitlines()
            if (copy := COPY.match(line)) and size in {int(d) for d in copy.group(1).split(",")
                                                       if d}]


def test_advance_copies_no_tree_array(compiled_hlo):
    """Tree reuse moves the kept nodes and their edges in place, up to the used ones
    (``test_reuse.test_advance_leaves_the_unused_pool_alone``): no copy of the pool
    anywhere in its program, and the only node-sized copies are of fresh fills (its
    scratch arrays) and, inside the walk that takes removed two-folds off their
    ancestors, of the walk's positions.

    A read of a tree array that nothing orders before the loops that move it (the new
    root's priors read after the pool's loop, the root checks of ``find_root``) made XLA
    copy that array into the loop and out again: the pool's two copies cost two passes
    over 2.6M entries per tree at the UCI engine's default size.
    """
    hlo, sizes = compiled_hlo
    nodes, pool = sorted(sizes)
    text = hlo[ADVANCE]
    assert all_copies(text, pool) == []
    top = text[text.index("\nENTRY "):]
    assert [c for c in all_copies(top, nodes) if "broadcast" not in c] == []
    assert len(loop_copies(text, {nodes})) <= 1, loop_copies(text, {nodes})


def test_the_check_finds_a_copy_in_a_loop():
    """The scan itself: a loop that reads an array and writes another from that read
    (the pattern that makes XLA copy) is reported."""
    import jax.numpy as jnp

    n = 1031

    def loop(x, y):
        def body(c):
            i, x, y = c
            w = y[i + 1]
            return i + 1, x.at[i].set(x[i] + w), y.at[i].set(w + 1)

        return jax.lax.while_loop(lambda c: c[0] < 10, body, (0, x, y))[1:]

    text = jax.jit(loop, donate_argnums=(0, 1)).lower(
        jnp.zeros(n), jnp.zeros(n)).compile().as_text()
    assert loop_copies(text, {n})


@pytest.mark.tier2  # compiles the device search's program (about a minute)
def test_the_device_search_step_copies_no_pool_or_boards():
    """The device-rules search runs every step in one ``while_loop``; its body may copy
    neither the edge pool nor the boards (it copied 17 tree arrays per step before
    ``step.apart``). It copies one node array: search-contempt freezing compares each
    node's visits before and after the backup (``step._backup``), and one more copy of
    an int32 node array that this test tolerates, found but not yet removed."""
    from zerochess import program_store
    from zerochess.neural import load_model
    from zerochess.search.api import Searcher

    searcher = Searcher(load_model("builtin"), max_nodes=1031, leaves_per_step=4,
                        rules="device", shards=1)
    seen: list = []
    call = program_store.Program.__call__

    def record(self, *args, **kwargs):
        if self.name.endswith("run_steps") and not seen:
            seen.append((self, jax.tree.map(
                lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype) if hasattr(x, "shape") else x,
                args), kwargs))
        return call(self, *args, **kwargs)

    program_store.Program.__call__ = record
    try:
        state = searcher.run(searcher.init([chess.Board()], SearchConfig(), seed=0), 24).shards[0]
    finally:
        program_store.Program.__call__ = call
    assert seen, "the device search ran no run_steps program"
    program, args, kwargs = seen[0]
    hlo = program.lower(*args, **kwargs).compile().as_text()
    nodes, pool = state.tree.num_nodes, state.tree.edges.child.shape[-1]
    copies = loop_copies(hlo, {nodes, pool})
    assert not loop_copies(hlo, {pool}), copies
    assert not [c for c in copies if f"[1,{nodes},64]" in c], copies
    assert len(copies) <= 2 and all(f"s32[1,{nodes}]" in c for c in copies), copies
