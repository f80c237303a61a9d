"""A plain-Python reference of lc0's minibatch gathering (dicts, lists, python-chess).

Written from lc0's ``src/search/classic/search.cc`` (``GatherMinibatch``,
``PickNodesToExtendTask``, ``CalculateCollisionsLeft``, ``DoBackupUpdateSingleNode``,
``CancelSharedCollisions``) and ``node.cc`` (``TryStartScoreUpdate``,
``FinalizeScoreUpdate``), one visit per pass:

- a child's U uses its N-started (N + N-in-flight); the parent's N (cpuct, the U
  factor sqrt(N - 1)), every Q and the FPU's visited policy use completed visits;
- a descent that reaches a child with N = 0 and visits in flight is a collision: it
  adds a visit in flight to every node above that child (not the child), is not
  evaluated, and is cancelled once the batch is done;
- a descent that ends at a new leaf or a terminal node adds a visit in flight to its
  whole path; the batch's backup turns those into completed visits;
- a batch stops at L leaves or when its collisions reach lc0's collision limit for
  the root's N (1 up to N = 28, 80000 at N = 145000, power 1.25; capped by
  MaxCollisionEvents).

Priors below the root are kept at float16 precision, the documented storage of the
search (lc0 stores priors in 16 bits too); the root's at full precision.

Search-contempt (opponent nodes freeze their children's visit distribution at
``n_scl`` and then sample it with the draws of ``contempt_uniform``) follows the
single-leaf reference in ``test_search_reference.py``, each descent drawing with its own
index. It shares nothing with the code under test but the evaluator and those draws.

lc0's newer search-contempt options (``sc_temperature``, lc0 PR #2242's ScTemperature;
``hybrid_sampling_ratio`` and ``hybrid_ratio_mode``, PR #2371's HybridSamplingRatio and
its schedules), written from those PRs' search.cc and params.cc: a visit through a frozen
node draws u; it samples when u < the ratio (``lc0_hybrid_ratio`` of the node's visits,
transcribed from ``GetDynamicHybridRatio``), with u / ratio, from the frozen counts raised
to 1/T (T = 0: the most visited ones); otherwise PUCT picks as at any node.

Certainty propagation (``certainty_propagation``, lc0's bounds): every node holds
(lower, upper) bounds on its value for the player who moved into it; a game end is
exact. After a batch's backups, each new game end re-bounds its ancestors in turn
(lc0 ``MaybeSetBounds``: the side to move takes the max of its children's bounds, an
unexpanded move counting as (-1, +1)). A node whose bounds meet is proven: its value
becomes exact for all its visits and the change is added to its ancestors (lc0
``MakeTerminal`` / ``AdjustForTerminal``); below the root a descent stops there, as
at a game end, and backs up the exact value.

Moves left (``moves_left=True``: the network has lc0's moves-left head; the evaluator
then returns a fourth value, M in plies): every node keeps lc0's M, the mean over its
visits of the leaf's M plus its distance (a game end 0, a proven node its plies), and
selection adds lc0's moves-left utility (``MEvaluator::GetMUtility``, written from
search.cc) to the Q of visited children.

Mate check (``SearchConfig.mate_check``, zerochess's, not lc0's): a new node whose side
to move has a move that mates (python-chess ``is_checkmate`` after each legal move) is
proven lost for the player who moved into it, one ply from the end (its network
evaluation is made but not backed up), and propagates like a game end; a root with a
mating move (else a check that forces mate in two) gets search priors one-hot on it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import chess
import numpy as np

# (moves, priors, wdl) or, for a network with a moves-left head, (moves, priors, wdl, m)
Evaluate = Callable[[chess.Board, float], tuple]
Uniform = Callable[[int, int], float]  # (draw index, depth) -> u in [0, 1)


def earlier_occurrences(board: chess.Board) -> tuple[int, int]:
    """(count, plies to the nearest) of earlier occurrences of the current position."""
    key = board._transposition_key()
    b = board.copy()
    count, nearest = 0, 0
    for plies in range(1, min(board.halfmove_clock, len(board.move_stack)) + 1):
        b.pop()
        if plies % 2 == 0 and b._transposition_key() == key:
            count += 1
            nearest = nearest or plies
    return count, nearest


class Node:
    def __init__(self, board: chess.Board, depth: int, parent: Node | None):
        self.board, self.depth, self.parent = board, depth, parent
        self.children: dict[int, Node] = {}
        self.n = 0
        self.in_flight = 0
        self.wl = self.d = 0.0
        self.msum = 0.0  # sum of moves left over the visits (lc0's M = msum / n)
        self.value_m = 0.0  # the network's moves left (0 at a game end or without a head)
        self.frozen: dict[int, int] | None = None
        self.terminal: tuple[float, float] | None = None
        self.moves: list[chess.Move] = []
        self.priors = np.zeros(0)
        self.value = (0.0, 0.0)
        self.lower, self.upper, self.m = -1, 1, 0

    def mating_index(self) -> int:
        """The first legal move that checkmates at once, -1 if none."""
        for i, move in enumerate(self.moves):
            self.board.push(move)
            mate = self.board.is_checkmate()
            self.board.pop()
            if mate:
                return i
        return -1

    def checking_mate_in_two(self) -> int:
        """The first checking move after which every reply allows a mate in one (brute
        force; a reply reaching the 50-move limit defends), -1 if none."""
        board = self.board
        for i, move in enumerate(self.moves):
            if not board.gives_check(move):
                continue
            board.push(move)
            replies = list(board.legal_moves)
            forced = bool(replies)
            for reply in replies:
                board.push(reply)
                mates = False
                if board.halfmove_clock < 100:
                    for answer in list(board.legal_moves):
                        board.push(answer)
                        mates = board.is_checkmate()
                        board.pop()
                        if mates:
                            break
                board.pop()
                if not mates:
                    forced = False
                    break
            board.pop()
            if forced:
                return i
        return -1

    def expand(self, evaluate: Evaluate, temperature: float, mate_check: bool = False) -> None:
        """lc0's ExtendNode + the network (or the terminal result); with ``mate_check`` a
        node whose side to move mates in one is proven (see the module docstring)."""
        board, moves = self.board, list(self.board.legal_moves)  # (only: any at all?)
        if not moves:
            self.terminal = (1.0, 0.0) if board.is_check() else (0.0, 1.0)
        elif self.parent is not None:
            count, nearest = earlier_occurrences(board)
            if (board.is_insufficient_material() or board.halfmove_clock >= 100
                    or count >= 2 or (count == 1 and nearest <= self.depth)):
                self.terminal = (0.0, 1.0)
        if self.terminal is None:
            out = evaluate(board, temperature)
            self.moves, self.priors, wdl = out[:3]
            self.value_m = float(out[3]) if len(out) > 3 else 0.0
            if self.parent is not None:  # stored at 16 bits below the root (as lc0 does)
                self.priors = self.priors.astype(np.float16).astype(np.float64)
            self.value = (wdl[2] - wdl[0], wdl[1])  # mover-into-node perspective
            if mate_check and self.parent is None:
                key = self.mating_index()
                key = key if key >= 0 else self.checking_mate_in_two()
                if key >= 0:
                    self.priors = np.zeros(len(self.moves))
                    self.priors[key] = 1.0
            elif mate_check and self.mating_index() >= 0:
                self.lower = self.upper = -1
                self.m = 1
                self.value, self.value_m = (-1.0, 0.0), 1.0
        else:
            self.moves, self.priors, self.value = moves, np.zeros(len(moves)), self.terminal
            self.lower = self.upper = int(self.terminal[0])

    def proven(self) -> bool:
        return self.lower == self.upper

    def rebound(self) -> bool:
        """lc0's MaybeSetBounds from the children; True if this proved the node."""
        los, his, proven = [], [], []
        for i in range(len(self.moves)):
            child = self.children.get(i)
            if child is None or child.n == 0:
                los.append(-1)
                his.append(1)
            else:
                los.append(child.lower)
                his.append(child.upper)
                if child.proven():
                    proven.append(child)
        lo, hi = max(los), max(his)
        was = self.proven()
        self.lower, self.upper = -hi, -lo
        if self.proven():
            if lo == 1:
                self.m = 1 + min(c.m for c in proven if c.lower == 1)
            else:
                self.m = 1 + max([c.m for c in proven if c.lower == lo] or [0])
        return self.proven() and not was

    def path(self) -> list[Node]:
        out, node = [], self
        while node is not None:
            out.append(node)
            node = node.parent
        return out[::-1]


def collision_limit(root_n: int, cfg: Any) -> int:
    """lc0's CalculateCollisionsLeft(root N), capped by MaxCollisionEvents."""
    start, end = cfg.max_collision_visits_scaling_start, cfg.max_collision_visits_scaling_end
    if root_n >= end:
        limit = cfg.max_collision_visits
    elif root_n <= start:
        limit = 1
    else:
        ratio = ((root_n - start) / (end - start)) ** cfg.max_collision_visits_scaling_power
        limit = int(round(1 + (cfg.max_collision_visits - 1) * ratio))
    return min(limit, cfg.max_collision_events)


def m_utility(cfg: Any, parent: Node, child: Node, q: float) -> float:
    """lc0's MEvaluator::GetMUtility for a visited child (the network has the head)."""
    thr = cfg.moves_left_threshold
    if not abs(parent.wl / parent.n) > thr:  # WithinThreshold: |parent->GetQ(0)| > thr
        return 0.0
    m = cfg.moves_left_slope * (child.msum / child.n - parent.msum / parent.n)
    m = min(max(m, -cfg.moves_left_max_effect), cfg.moves_left_max_effect)
    m *= math.copysign(1.0, -q)
    if 0.0 < thr < 1.0:
        q = max(0.0, abs(q) - thr) / (1.0 - thr)
    return m * (cfg.moves_left_constant_factor + cfg.moves_left_scaled_factor * abs(q)
                + cfg.moves_left_quadratic_factor * q * q)


def search_priors(node: Node) -> list[float]:
    """The priors selection uses: lc0's MakeTerminal clears P of a move proven to lose
    for its mover (the child's upper bound is a loss)."""
    return [0.0 if i in node.children and node.children[i].n > 0 and node.children[i].upper == -1
            else float(p)
            for i, p in enumerate(node.priors)]


def _scores(node: Node, cfg: Any, moves_left: bool = False) -> list[float]:
    is_root = node.parent is None
    c = cfg.cpuct_root if is_root and cfg.cpuct_root is not None else cfg.cpuct
    cpuct = c + cfg.cpuct_factor * math.log((node.n + cfg.cpuct_base) / cfg.cpuct_base)
    mult = cpuct * math.sqrt(max(node.n - 1, 1))
    ds = cfg.draw_score if node.depth % 2 == 0 else -cfg.draw_score
    priors = search_priors(node)
    visited_p = sum(p for i, p in enumerate(priors)
                    if i in node.children and node.children[i].n > 0)
    fpu = -node.wl / node.n + ds * node.d / node.n - cfg.fpu_value * math.sqrt(visited_p)
    if cfg.fpu_absolute:
        fpu = cfg.fpu_value
    scores = []
    for i, p in enumerate(priors):
        child = node.children.get(i)
        n = child.n if child else 0
        started = n + (child.in_flight if child else 0)
        q = (child.wl + ds * child.d) / n if n else fpu
        if n and moves_left:
            q += m_utility(cfg, node, child, q)
        scores.append(q + mult * p / (1 + started))
    return scores


def lc0_hybrid_ratio(cfg: Any, node_count: int, sc_limit: float) -> float:
    """lc0 PR #2371's ``SearchParams::GetDynamicHybridRatio(node_count)`` (params.cc), in
    float64; ``thermal_annealing``'s draw is averaged out (the per-visit probability)."""
    if node_count < sc_limit:
        return 0.0
    mode = getattr(cfg, "hybrid_ratio_mode", "static")
    if mode == "manual_schedule":
        sched = list(cfg.hybrid_ratio_schedule)
        if not sched or node_count <= sched[0][0]:
            return sched[0][1] if sched else 0.0
        if node_count >= sched[-1][0]:
            return sched[-1][1]
        for (n1, r1), (n2, r2) in zip(sched, sched[1:], strict=False):
            if n1 <= node_count < n2:
                progress = (node_count - n1) / (n2 - n1)
                return min(max(r1 + (r2 - r1) * progress, 0.0), 1.0)
        return sched[-1][1]
    if mode == "static":
        return getattr(cfg, "hybrid_sampling_ratio", 1.0)
    # lc0's FloatOptions are C++ floats: the parameters at float32 precision
    lo, hi = float(np.float32(cfg.hybrid_min_ratio)), float(np.float32(cfg.hybrid_max_ratio))
    scale = float(cfg.hybrid_scaling_factor)
    p1 = float(np.float32(cfg.hybrid_shape_param1))
    p2 = float(np.float32(cfg.hybrid_shape_param2))
    progress = (node_count - sc_limit) / scale if scale > 0 else 1.0
    c = min(1.0, progress)
    e, pi = 2.71828, 3.1415926535
    since = node_count - sc_limit
    ratio = lo
    if mode == "linear":
        ratio = lo + (hi - lo) * c
    elif mode == "logarithmic":
        ratio = lo + (hi - lo) * math.log(c * (e - 1.0) + 1.0)
    elif mode == "power":
        ratio = lo + (hi - lo) * c ** p1
    elif mode == "root":
        ratio = lo + (hi - lo) * math.sqrt(c)
    elif mode == "sigmoid":
        ratio = lo + (hi - lo) / (1.0 + math.exp(-12.0 * (c - 0.5)))
    elif mode == "exponential":
        ratio = lo + (hi - lo) * (math.exp(c) - 1.0) / (e - 1.0)
    elif mode == "step_decay":
        if p1 > 0:
            ratio = hi - (hi - lo) * math.floor(c * p1) / p1
    elif mode == "inverse_sigmoid":
        ratio = lo + (hi - lo) * (1.0 - 1.0 / (1.0 + math.exp(-12.0 * (c - 0.5))))
    elif mode == "steps":
        if p1 > 0:
            ratio = lo + (hi - lo) * math.floor(c * p1) / p1
    elif mode == "gaussian_peak":
        ratio = lo + (hi - lo) * math.exp(-((c - p1) ** 2) / (2.0 * max(0.001, p2)))
    elif mode == "double_peak":
        w = 0.02
        ratio = lo + (hi - lo) * max(math.exp(-((c - p1) ** 2) / (2 * w)),
                                     math.exp(-((c - p2) ** 2) / (2 * w)))
    elif mode == "sawtooth_wave":
        if p1 > 0:
            ratio = lo + (hi - lo) * (math.fmod(since, p1) / p1)
    elif mode == "oscillating":
        if p1 > 0:
            ratio = lo + (hi - lo) * (0.5 + 0.5 * math.sin(2.0 * pi * since / p1))
    elif mode == "thermal_annealing":
        grid = (np.arange(4096) + 0.5) / 4096  # the midpoints of R's range
        draws = hi * (1.0 - c) * grid + (lo + (hi - lo) * c)
        return float(np.mean(np.clip(draws, 0.0, 1.0)))
    elif mode == "asymptotic_approach":
        ratio = hi - (hi - lo) * math.exp(-5.0 * c)
    elif mode == "plateau":
        if c < 0.5 - p2 / 2.0:
            ratio = lo + (p1 - lo) * (c / max(0.001, 0.5 - p2 / 2.0))
        elif c > 0.5 + p2 / 2.0:
            ratio = p1 + (hi - p1) * ((c - (0.5 + p2 / 2.0)) / max(0.001, 0.5 - p2 / 2.0))
        else:
            ratio = p1
    elif mode in ("heartbeat", "multi_timescale"):
        if p1 > 0 and p2 > 0:
            slow = 0.6 * (0.5 + 0.5 * math.sin(2.0 * pi * since / p1))
            fast = 0.4 * (0.5 + 0.5 * math.sin(2.0 * pi * since / p2))
            ratio = lo + (hi - lo) * (slow + fast)
    else:
        raise ValueError(f"unknown hybrid ratio mode {mode!r}")
    return min(max(ratio, 0.0), 1.0)


def _sample_frozen(frozen: dict[int, int], u: float, temperature: float) -> int:
    """The slot of the frozen counts ``N`` sampled by ``u`` with weights N^(1/T)."""
    slots = sorted(frozen)
    if temperature == 1.0:
        weights = [float(frozen[s]) for s in slots]
    elif temperature == 0.0:
        top = max(frozen.values())
        weights = [1.0 if frozen[s] == top else 0.0 for s in slots]
    else:
        top = max(frozen.values())
        weights = [(frozen[s] / top) ** (1.0 / temperature) for s in slots]
    total, acc = sum(weights), 0.0
    for s, w in zip(slots, weights, strict=True):
        acc += w
        if acc > u * total:
            return s
    return slots[-1]


def _pick(node: Node, cfg: Any, n_scl: float, uniform: Uniform, draw: int,
          moves_left: bool = False) -> int:
    if node.depth % 2 == 1 and node.frozen is None and node.n - 1 >= n_scl:
        node.frozen = {i: c.n for i, c in node.children.items() if c.n > 0}
    if node.depth % 2 == 1 and node.frozen is not None:
        u = uniform(draw, node.depth)
        ratio = lc0_hybrid_ratio(cfg, node.n, n_scl)
        if u < ratio:
            if ratio < 1.0:
                u = min(u / ratio, 1.0 - 2.0**-24)
            return _sample_frozen(node.frozen, u, getattr(cfg, "sc_temperature", 1.0))
    scores = _scores(node, cfg, moves_left)
    # lc0 sorts a node's edges by P at expansion and takes the first best edge
    return max(range(len(scores)), key=lambda i: (scores[i], node.priors[i], -i))


class ReferenceSearch:
    """lc0's gather / evaluate / backup loop on one position, L leaves per batch."""

    def __init__(self, board: chess.Board, cfg: Any, evaluate: Evaluate, uniform: Uniform,
                 leaves: int, max_nodes: int | None = None, moves_left: bool = False):
        self.cfg, self.evaluate, self.uniform, self.width = cfg, evaluate, uniform, leaves
        self.moves_left = moves_left
        self.n_scl = math.inf if cfg.n_scl is None else cfg.n_scl
        self.root = Node(board.copy(), 0, None)
        self.mate_check = bool(getattr(cfg, "mate_check", False))
        self.root.expand(evaluate, cfg.policy_temperature, self.mate_check)
        self.root.n, self.root.wl, self.root.d = 1, *self.root.value
        self.root.msum = self.root.value_m
        self.simulations = 0  # simulations started (collisions excluded)
        self.draws = 0  # descents started
        self.collisions = 0
        self.nodes = 1
        self.max_nodes = max_nodes

    def gather(self, quota: int) -> tuple[list[Node], list[Node]]:
        """One batch: (leaves to back up, the collided nodes' parents). Visits in flight
        stay on the tree until ``backup``."""
        leaves: list[Node] = []
        collided: list[Node] = []
        budget = collision_limit(self.root.n, self.cfg)
        while len(leaves) < quota and len(collided) < budget:
            node, draw = self.root, self.draws
            self.draws += 1
            while True:
                if (node.terminal is not None or not node.moves
                        or (node.parent is not None and node.proven())):
                    leaves.append(node)  # a terminal node visited again
                    end = node
                    break
                pick = _pick(node, self.cfg, self.n_scl, self.uniform, draw, self.moves_left)
                child = node.children.get(pick)
                if child is None:
                    if self.max_nodes is not None and self.nodes >= self.max_nodes:
                        end = None  # dropped: counted, nothing in flight
                        leaves.append(None)
                        break
                    board = node.board.copy()
                    board.push(node.moves[pick])
                    child = Node(board, node.depth + 1, node)
                    node.children[pick] = child
                    self.nodes += 1
                    leaves.append(child)
                    end = child
                    break
                if child.n == 0:  # in flight, never evaluated: a collision
                    collided.append(node)
                    end = node
                    break
                node = child
            if end is not None:
                for n in end.path():
                    n.in_flight += 1
        self.simulations += len(leaves)
        self.collisions += len(collided)
        return leaves, collided

    def release(self, collided: list[Node]) -> None:
        for node in collided:
            for n in node.path():
                n.in_flight -= 1

    def backup(self, leaves: list[Node]) -> None:
        """Evaluate the new leaves and back every leaf up; then freeze contempt nodes
        lazily (at their next selection, with the counts after this backup); then
        propagate the new game ends' results (certainty propagation)."""
        ended = []
        for leaf in leaves:
            if leaf is None:
                continue
            if leaf.n == 0:
                leaf.expand(self.evaluate, self.cfg.policy_temperature, self.mate_check)
                wl, d = leaf.value
                m = leaf.value_m
                if leaf.terminal is not None or leaf.proven():
                    ended.append(leaf)
            else:
                wl, d, m = float(leaf.lower), 1.0 - abs(leaf.lower), float(leaf.m)
            for n in reversed(leaf.path()):
                n.n += 1
                n.in_flight -= 1
                n.wl += wl
                n.d += d
                n.msum += m
                wl = -wl
                m += 1.0
        if getattr(self.cfg, "certainty_propagation", False):
            for leaf in ended:
                self.propagate(leaf.parent)

    def propagate(self, node: Node | None) -> None:
        """Re-bound ``node`` and its ancestors; a node proven now takes its exact value
        and its ancestors the change."""
        dwl = dd = dm = 0.0
        while node is not None:
            node.wl += dwl
            node.d += dd
            node.msum += dm
            if node.rebound():
                wl, d = float(node.lower) * node.n, (1.0 - abs(node.lower)) * node.n
                m = float(node.m) * node.n
                dwl, dd, dm = dwl + wl - node.wl, dd + d - node.d, dm + m - node.msum
                node.wl, node.d, node.msum = wl, d, m
            dwl = -dwl
            node = node.parent

    def run(self, simulations: int) -> None:
        """Steps of up to L leaves until ``simulations`` more have started."""
        target = self.simulations + simulations
        while self.simulations < target:
            leaves, collided = self.gather(min(self.width, target - self.simulations))
            self.release(collided)
            self.backup(leaves)

    def root_visits(self) -> list[int]:
        return [self.root.children[i].n if i in self.root.children else 0
                for i in range(len(self.root.moves))]


def walk(root: Node) -> dict[tuple[str, ...], Node]:
    """Every node by its move path from the root (UCI strings)."""
    out: dict[tuple[str, ...], Node] = {}
    stack: list[tuple[tuple[str, ...], Node]] = [((), root)]
    while stack:
        path, node = stack.pop()
        out[path] = node
        for i, child in node.children.items():
            stack.append(((*path, node.moves[i].uci()), child))
    return out
