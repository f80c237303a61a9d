"""Time managers (lc0's ``search/classic/stoppers/``): legacy, smooth, alphazero, simple.

Example::

    tm = make_time_manager("smooth(max-move-budget=0.3)", move_overhead_ms=100)
    stopper = tm.get_stopper(go, ply, black, current_nodes)   # one per ``go``
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from zerochess.errors import ConfigError, quote
from zerochess.uci.protocol import GoParams
from zerochess.uci.stoppers import (
    HINT_IMMEDIATE_MOVE,
    HINT_NEED_MORE_TIME,
    CapacityStopper,
    ChainedStopper,
    DepthStopper,
    IterationStats,
    MateStopper,
    PlayoutsStopper,
    SearchStopper,
    SmartPruningStopper,
    StoppersHints,
    TimeLimitStopper,
    VisitsStopper,
)


class TimeManagerError(ConfigError):
    """A bad ``TimeManager`` string (unknown manager or key, bad value)."""


# --- lc0 option-string syntax: name(key=value, sub(key=value)) ------------------------------

_TOKEN = re.compile(r"\s*(?:(?P<punct>[(),=])|(?P<string>'[^']*'|\"[^\"]*\")"
                    r"|(?P<number>[-+.0-9][-+.0-9eExX]*)|(?P<ident>[A-Za-z0-9/][-A-Za-z0-9_./]*))")


def parse_options_string(text: str) -> dict[str, Any]:
    """lc0's OptionsDict syntax -> nested dict (subdicts are dicts; a bare name is {})."""
    tokens: list[tuple[str, Any, int]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise TimeManagerError(f"cannot parse {quote(text)} at offset {pos}")
        kind = m.lastgroup
        raw = m.group(kind)
        if kind == "string":
            tokens.append(("value", raw[1:-1], m.start(kind)))
        elif kind == "number":
            try:
                value: Any = float(raw) if any(c in raw for c in ".eE") else int(raw, 0)
            except ValueError:
                raise TimeManagerError(f"bad number {quote(raw)} in {quote(text)}") from None
            tokens.append(("value", value, m.start(kind)))
        elif kind == "ident":
            tokens.append(("ident", raw, m.start(kind)))
        else:
            tokens.append((raw, raw, m.start(kind)))
        pos = m.end()
    tokens.append(("eof", None, len(text)))
    index = 0

    def peek() -> tuple[str, Any, int]:
        return tokens[index]

    def take(kind: str) -> Any:
        nonlocal index
        tok = tokens[index]
        if tok[0] != kind:
            where = f"offset {tok[2]}" if tok[0] != "eof" else "the end"
            raise TimeManagerError(f"cannot parse {quote(text)} at {where}: expected {quote(kind)}")
        index += 1
        return tok[1]

    def parse_list(out: dict[str, Any]) -> None:
        while peek()[0] == "ident":
            name = take("ident")
            if name in out:
                raise TimeManagerError(f"{quote(name)} given twice in {quote(text)}")
            if peek()[0] == "=":
                take("=")
                kind, value, _ = peek()
                if kind == "ident":
                    value = {"true": True, "false": False}.get(value, value)
                elif kind != "value":
                    raise TimeManagerError(f"{quote(text)}: expected a value for {quote(name)}")
                index_advance()
                out[name] = value
            else:
                sub: dict[str, Any] = {}
                if peek()[0] == "(":
                    take("(")
                    parse_list(sub)
                    take(")")
                out[name] = sub
            if peek()[0] != ",":
                return
            take(",")

    def index_advance() -> None:
        nonlocal index
        index += 1

    result: dict[str, Any] = {}
    parse_list(result)
    take("eof")
    return result


class _Params:
    """Typed reads from one parsed subdict; unknown keys are an error naming them."""

    def __init__(self, manager: str, values: dict[str, Any], known: dict[str, float],
                 subdicts: Sequence[str] = ()) -> None:
        self.manager = manager
        self.values = values
        for key, value in values.items():
            if isinstance(value, dict):
                if key not in subdicts:
                    raise TimeManagerError(f"{manager}: unknown setting {key}(...); "
                                           f"known: {_known(known, subdicts)}")
            elif key not in known:
                hint = _RENAMED.get((manager, key), "")
                raise TimeManagerError(f"{manager}: unknown setting {quote(key)}{hint}; "
                                       f"known: {_known(known, subdicts)}")
            elif isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TimeManagerError(f"{manager}: {key} needs a number, got {quote(value)}")
        self.known = known

    def get(self, key: str) -> float:
        return float(self.values.get(key, self.known[key]))


_RENAMED = {
    ("smooth", "nps-update-rate"): (" (the seed's exponential nps decay; lc0's source has "
                                    "nps-update-period, a linear window in seconds)"),
}


def _known(known: dict[str, float], subdicts: Sequence[str]) -> str:
    return ", ".join(sorted(known) + [f"{s}(...)" for s in subdicts])


def estimated_moves_to_go(ply: int, midpoint: float, steepness: float) -> float:
    """Median residual game length in moves at ``ply`` (lc0 ComputeEstimatedMovesToGo:
    log-logistic game lengths, Clark & El-Taha 2015)."""
    move = ply / 2.0
    return midpoint * math.pow(1.0 + 2.0 * math.pow(move / midpoint, steepness),
                               1.0 / steepness) - move


def exponential_decay(start: float, target: float, step: float, value: float) -> float:
    """From ``start`` towards ``target``: halfway after ``value`` = ``step``."""
    return target - (target - start) * math.pow(0.5, value / step)


def linear_decay(cur: float, target: float, since_reliable_ms: float,
                 since_last_update_ms: float, window_ms: float) -> float:
    """lc0's LinearDecay for the nps estimate: rises at once, falls linearly over a window."""
    if cur <= target:
        return target
    if since_last_update_ms <= 0:
        return cur
    if since_reliable_ms >= window_ms:
        return target
    since_last_update_ms = min(since_last_update_ms, since_reliable_ms)
    prev_frac = (since_reliable_ms - since_last_update_ms) / window_ms
    reliable = (prev_frac * target - cur) / (prev_frac - 1.0)
    theta = since_reliable_ms / window_ms
    if theta <= 0:
        return reliable
    if theta >= 1:
        return target
    return reliable + (target - reliable) * theta


class TimeManager:
    name = "none"

    def get_stopper(self, go: GoParams, ply: int, black: bool,
                    current_nodes: int) -> SearchStopper | None:
        raise NotImplementedError


# --- legacy ------------------------------------------------------------------------------

class _LegacyStopper(TimeLimitStopper):
    def __init__(self, limit_ms: float, manager: LegacyTimeManager) -> None:
        super().__init__(limit_ms)
        self.manager = manager

    def on_search_done(self, stats: IterationStats) -> None:
        self.manager.time_spared_ms += int(self.limit_ms - stats.time_since_movestart)


class LegacyTimeManager(TimeManager):
    """lc0's default manager (``stoppers/legacy.cc``)."""

    name = "legacy"
    DEFAULTS = {"slowmover": 1.0, "midpoint-move": 51.5, "steepness": 7.0,
                "immediate-use": 1.0, "first-move-bonus": 1.8, "book-ply-bonus": 0.25}
    SMART_PRUNING_TOLERANCE_MS = 200

    def __init__(self, move_overhead_ms: int, params: dict[str, Any] | None = None) -> None:
        p = _Params(self.name, params or {}, self.DEFAULTS)
        self.move_overhead = move_overhead_ms
        self.slowmover = p.get("slowmover")
        self.midpoint = p.get("midpoint-move")
        self.steepness = p.get("steepness")
        self.immediate_use = p.get("immediate-use")
        self.first_move_bonus = p.get("first-move-bonus")
        self.book_ply_bonus = p.get("book-ply-bonus")
        self.first_move_of_game = True
        self.time_spared_ms = 0
        self.last_budget_ms: float | None = None

    def get_stopper(self, go: GoParams, ply: int, black: bool,
                    current_nodes: int) -> SearchStopper | None:
        time = go.own_time(black)
        if go.infinite or go.ponder or time is None:
            return None
        inc = go.own_increment(black)
        movestogo = estimated_moves_to_go(ply, self.midpoint, self.steepness)
        if go.movestogo is not None and 0 < go.movestogo < movestogo:
            movestogo = float(go.movestogo)
        total = max(0.0, time + inc * (movestogo - 1) - self.move_overhead)
        squander = 0
        if self.time_spared_ms > 0:
            total = max(0.0, total - self.time_spared_ms)
            squander = int(self.time_spared_ms * self.immediate_use)
            self.time_spared_ms -= squander
        this_move = total / movestogo
        if self.first_move_of_game:
            this_move *= 1.0 + self.first_move_bonus + self.book_ply_bonus * min(12, ply)
            self.first_move_of_game = False
        if self.slowmover < 1.0 or this_move * self.slowmover > self.SMART_PRUNING_TOLERANCE_MS:
            self.time_spared_ms -= int(this_move * (self.slowmover - 1))
            this_move *= self.slowmover
        this_move += squander
        deadline = min(int(this_move), time - self.move_overhead)
        self.last_budget_ms = deadline
        return _LegacyStopper(deadline, self)


# --- alphazero and simple -----------------------------------------------------------------

class AlphazeroTimeManager(TimeManager):
    """A fixed share of the remaining clock (``stoppers/alphazero.cc``)."""

    name = "alphazero"
    DEFAULTS = {"alphazero-time-pct": 12.0}

    def __init__(self, move_overhead_ms: int, params: dict[str, Any] | None = None) -> None:
        p = _Params(self.name, params or {}, self.DEFAULTS)
        self.move_overhead = move_overhead_ms
        self.pct = p.get("alphazero-time-pct")
        if not 0.0 <= self.pct <= 100.0:
            raise TimeManagerError("alphazero-time-pct must be in [0, 100]")

    def get_stopper(self, go: GoParams, ply: int, black: bool,
                    current_nodes: int) -> SearchStopper | None:
        time = go.own_time(black)
        if go.infinite or go.ponder or time is None:
            return None
        return TimeLimitStopper((time - self.move_overhead) * self.pct / 100.0)


class SimpleTimeManager(TimeManager):
    """``stoppers/simple.cc``: a share of the clock growing with the ply and increment."""

    name = "simple"
    DEFAULTS = {"base-pct": 1.4, "ply-pct": 0.049, "time-factor": 1.5, "opening-bonus-pct": 0.0}

    def __init__(self, move_overhead_ms: int, params: dict[str, Any] | None = None) -> None:
        p = _Params(self.name, params or {}, self.DEFAULTS)
        self.move_overhead = move_overhead_ms
        self.base_pct = p.get("base-pct")
        self.ply_pct = p.get("ply-pct")
        self.time_factor = p.get("time-factor")
        self.opening_bonus_pct = p.get("opening-bonus-pct")
        for key, lo, hi in (("base-pct", 1e-9, 100.0), ("ply-pct", 0.0, 1.0),
                            ("time-factor", 0.0, 100.0), ("opening-bonus-pct", 0.0, 1000.0)):
            if not lo <= p.get(key) <= hi:
                raise TimeManagerError(f"simple: {key} must be in [{lo:g}, {hi:g}]")
        self.prev_budgeted = 0.0
        self.prev_available = 0.0
        self.bonus_applied = False

    def get_stopper(self, go: GoParams, ply: int, black: bool,
                    current_nodes: int) -> SearchStopper | None:
        time = go.own_time(black)
        if go.infinite or go.ponder or time is None:
            return None
        inc = go.own_increment(black)
        available = float(time - self.move_overhead)
        ratio = inc / time if time else 0.0
        pct = (self.base_pct + ply * self.ply_pct) * 0.01 + ratio * self.time_factor
        budget = available * pct
        if not self.bonus_applied:
            budget += budget * self.opening_bonus_pct * 0.01
            self.bonus_applied = True
        if self.prev_budgeted > 0:
            saved = self.prev_budgeted - (self.prev_available - (available - inc))
            budget += max(saved, 0.0)
        budget = min(budget, available)
        self.prev_budgeted, self.prev_available = budget, available
        return TimeLimitStopper(budget)


# --- smooth --------------------------------------------------------------------------------

SMOOTH_DEFAULTS = {
    "init-tree-reuse": 0.52, "max-tree-reuse": 0.73, "tree-reuse-update-rate": 3.39,
    "nps-update-period": 20.0, "init-nps": 20000.0, "init-timeuse": 0.7,
    "min-timeuse": 0.34, "timeuse-update-rate": 5.51, "max-move-budget": 0.42,
    "init-piggybank": 0.09, "per-move-piggybank": 0.12, "max-piggybank-use": 0.94,
    "max-piggybank-moves": 36.5, "trend-nps-update-period-ms": 3000.0,
    "bestmove-optimism": 0.2, "overtaker-optimism": 4.0, "force-piggybank-ms": 1000.0,
    "midpoint": 45.2, "steepness": 5.93,
}
# The PR 1195 write-up's (seed 000) values; no piggybank then. Its mle example 50/12 is an
# example, not a default: the legacy manager's curve (51.5 / 7.0) was in use.
SEED_SMOOTH_DEFAULTS = {
    "init-tree-reuse": 0.5, "max-tree-reuse": 0.7, "tree-reuse-update-rate": 4.0,
    "init-nps": 20000.0, "init-timeuse": 0.7, "min-timeuse": 0.3,
    "timeuse-update-rate": 10.0, "max-move-budget": 0.3, "init-piggybank": 0.0,
    "per-move-piggybank": 0.0, "max-piggybank-use": 0.0, "midpoint": 51.5, "steepness": 7.0,
}
_MLE_DEFAULTS = {"midpoint": 45.2, "steepness": 5.93}


def smooth_spec(values: dict[str, float]) -> str:
    """A ``TimeManager`` string setting ``values`` (e.g. ``SEED_SMOOTH_DEFAULTS``)."""
    return "smooth(" + ",".join(f"{k}={float(v)!r}" for k, v in values.items()) + ")"


class VisitsTrendWatcher:
    """Projects root visit rates to see whether the best move may be overtaken."""

    def __init__(self, period_ms: float, bestmove_optimism: float,
                 overtaker_optimism: float) -> None:
        self.period = period_ms
        self.best_optimism = bestmove_optimism
        self.overtaker_optimism = overtaker_optimism
        self.prev_ts = self.cur_ts = self.last_ts = 0
        self.prev: np.ndarray | None = None
        self.cur: np.ndarray | None = None
        self.last: np.ndarray | None = None

    def update(self, timestamp: int, visits: Sequence[int]) -> None:
        if timestamp <= self.last_ts:
            return
        visits = np.asarray(visits, np.float64)
        if self.prev is None:
            self.prev = self.cur = visits
            self.prev_ts = self.cur_ts = timestamp
        self.last_ts, self.last = timestamp, visits
        # lc0 shifts the window while *within* the period (`cur + period >= now`), so at a
        # watchdog rate above 1/period the rates are measured over the last interval.
        if self.cur_ts + self.period >= timestamp:
            self.prev_ts, self.prev = self.cur_ts, self.cur
            self.cur, self.cur_ts = self.last, self.last_ts

    def best_move_being_overtaken(self, by_ms: float) -> bool:
        if self.prev is None or self.last is None or self.prev_ts >= self.last_ts:
            return False
        if by_ms <= self.last_ts or len(self.last) != len(self.prev) or not len(self.last):
            return False
        rate = (self.last - self.prev) / (self.last_ts - self.prev_ts)
        best = int(np.argmax(self.last))
        ahead = by_ms - self.last_ts
        planned_best = self.last[best] + self.best_optimism * rate[best] * ahead
        planned = self.last + self.overtaker_optimism * rate * ahead
        planned[best] = -np.inf
        return bool(np.any(planned > planned_best))


class SmoothStopper(SearchStopper):
    def __init__(self, deadline_ms: float, piggybank_ms: int, manager: SmoothTimeManager) -> None:
        p = manager.p
        self.deadline = deadline_ms
        self.piggybank = piggybank_ms
        self.forced_piggybank_ms = int(p["force-piggybank-ms"])
        self.trend = VisitsTrendWatcher(p["trend-nps-update-period-ms"],
                                        p["bestmove-optimism"], p["overtaker-optimism"])
        self.manager = manager
        self.used_piggybank = False

    def should_stop(self, stats: IterationStats, hints: StoppersHints) -> bool:
        nps = self.manager.update_nps(stats.time_since_first_batch, stats.nodes_since_movestart)
        if stats.time_usage_hint == HINT_IMMEDIATE_MOVE:
            return True
        self.trend.update(stats.time_since_movestart, stats.edge_n)
        with_bank = self.deadline + self.piggybank
        use_bank = (stats.time_usage_hint == HINT_NEED_MORE_TIME
                    or stats.time_since_first_batch <= self.forced_piggybank_ms
                    or self.trend.best_move_being_overtaken(with_bank))
        limit = with_bank if use_bank else self.deadline
        hints.estimated_nps = nps
        hints.update_remaining_time_ms(limit - stats.time_since_movestart)
        if use_bank and stats.time_since_movestart >= self.deadline:
            self.used_piggybank = True
        return stats.time_since_movestart >= limit

    def on_search_done(self, stats: IterationStats) -> None:
        self.manager.end_of_move(stats.time_since_movestart, self.used_piggybank, self.deadline,
                                 stats.total_nodes)


class SmoothTimeManager(TimeManager):
    """lc0's smooth manager (``stoppers/smooth.cc``); see docs/DESIGN.md."""

    name = "smooth"

    def __init__(self, move_overhead_ms: int, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        mle = params.pop("mle-legacy", None)
        checked = _Params(self.name, params, SMOOTH_DEFAULTS)
        p = {k: checked.get(k) for k in SMOOTH_DEFAULTS}
        if mle is not None:
            m = _Params("mle-legacy", mle, _MLE_DEFAULTS)
            p["midpoint"], p["steepness"] = m.get("midpoint"), m.get("steepness")
        for key in ("max-tree-reuse", "init-tree-reuse"):
            if not 0.0 <= p[key] < 1.0:
                raise TimeManagerError(f"smooth: {key} must be in [0, 1), got {p[key]}")
        for key in ("init-timeuse", "min-timeuse", "tree-reuse-update-rate",
                    "timeuse-update-rate", "init-nps", "midpoint", "steepness",
                    "nps-update-period", "max-move-budget"):
            if p[key] <= 0:
                raise TimeManagerError(f"smooth: {key} must be > 0, got {p[key]}")
        self.p = p
        self.move_overhead = move_overhead_ms
        self.tree_reuse = p["init-tree-reuse"]
        self.nps = p["init-nps"]
        self.nps_reliable = False
        self.timeuse = p["init-timeuse"]
        self.avg_ms_per_move = 0.0
        self.allocated_ms = 0.0
        self.last_final_nodes = 0
        self.last_time = 0
        self.piggybank_ms = 0
        self.first_move = True
        self.log: list[str] = []

    def moves_left(self, ply: int) -> float:
        return estimated_moves_to_go(ply, self.p["midpoint"], self.p["steepness"])

    def update_nps(self, since_first_batch_ms: int, nodes: int) -> float:
        if since_first_batch_ms <= 0:
            return self.nps
        measured = 1000.0 * nodes / since_first_batch_ms
        if self.nps_reliable and since_first_batch_ms > self.last_time:
            self.nps = linear_decay(self.nps, measured, since_first_batch_ms,
                                    since_first_batch_ms - self.last_time,
                                    self.p["nps-update-period"] * 1000.0)
        else:
            self.nps = measured
        self.last_time = since_first_batch_ms
        return self.nps

    def end_of_move(self, move_ms: int, used_piggybank: bool, budget_ms: float,
                    total_nodes: int) -> None:
        self.nps_reliable = True
        fraction = 0.0 if self.avg_ms_per_move <= 0 else move_ms / self.avg_ms_per_move
        use = 1.0 if self.allocated_ms <= 0 else move_ms / self.allocated_ms
        if used_piggybank:
            self.piggybank_ms -= max(0, int(move_ms - budget_ms))
        self.timeuse = exponential_decay(self.timeuse, 1.0 if used_piggybank else use,
                                         self.p["timeuse-update-rate"], fraction)
        self.timeuse = max(self.timeuse, self.p["min-timeuse"])
        self.last_final_nodes = total_nodes
        self.log.append(f"TMGR: end of move: used={move_ms}ms allocated={self.allocated_ms:.1f}ms "
                        f"timeuse={self.timeuse:.4f} piggybank_used={used_piggybank}")

    def _update_tree_reuse(self, nodes_now: int) -> None:
        fraction = 0.0 if self.avg_ms_per_move <= 0 else self.last_time / self.avg_ms_per_move
        reuse = nodes_now / self.last_final_nodes
        self.tree_reuse = min(self.p["max-tree-reuse"], exponential_decay(
            self.tree_reuse, reuse, self.p["tree-reuse-update-rate"], fraction))

    def get_stopper(self, go: GoParams, ply: int, black: bool,
                    current_nodes: int) -> SearchStopper | None:
        time = go.own_time(black)
        if go.infinite or go.ponder or time is None:
            return None
        p = self.p
        if self.first_move:
            self.piggybank_ms = int(time * p["init-piggybank"])
            self.first_move = False
        if self.last_final_nodes and self.last_time and self.avg_ms_per_move >= 0:
            self._update_tree_reuse(current_nodes)
        self.last_time = 0
        moves = self.moves_left(ply)
        if go.movestogo is not None and 0 < go.movestogo < moves:
            moves = float(go.movestogo)
        inc = go.own_increment(black)
        overhead = self.move_overhead
        max_bank = p["max-piggybank-moves"] * max(0.0, time + inc * (moves - 1) - overhead) / moves
        if self.piggybank_ms > max_bank:
            self.piggybank_ms = int(max_bank)
        total_ms = max(0.0, time - self.piggybank_ms + inc * (moves - 1) - overhead)
        game_nodes = total_ms * self.nps / 1000.0
        avg_nodes = game_nodes / moves
        self.avg_ms_per_move = total_ms / moves
        target_nodes = avg_nodes / (1.0 - self.tree_reuse)
        new_nodes = max(0.0, target_nodes - current_nodes)
        brutto_ms = new_nodes / self.nps * 1000.0
        to_bank = min(max_bank - self.piggybank_ms, brutto_ms * p["per-move-piggybank"])
        netto_ms = brutto_ms - to_bank
        allowed_bank = int(self.piggybank_ms * p["max-piggybank-use"])
        self.allocated_ms = netto_ms / self.timeuse
        self.allocated_ms = min(self.allocated_ms, time * p["max-move-budget"])
        if self.allocated_ms > time - overhead:
            self.allocated_ms = float(max(0, time - overhead))
        allowed_bank = max(0, min(allowed_bank, int(time - overhead - self.allocated_ms)))
        self.piggybank_ms += int(to_bank)
        self.log.append(
            f"TMGR: allocated={self.allocated_ms:.1f}ms brutto={brutto_ms:.1f}ms "
            f"netto={netto_ms:.1f}ms timeuse={self.timeuse:.4f} reuse={self.tree_reuse:.4f} "
            f"reused={current_nodes} nps={self.nps:.1f} moves_left={moves:.2f} "
            f"piggybank={self.piggybank_ms}ms longthink={allowed_bank}ms")
        return SmoothStopper(self.allocated_ms, allowed_bank, self)


# --- factory ------------------------------------------------------------------------------

MANAGERS = {m.name: m for m in (LegacyTimeManager, SmoothTimeManager, AlphazeroTimeManager,
                                SimpleTimeManager)}


def make_time_manager(spec: str, move_overhead_ms: int, slowmover: float = 1.0,
                      slowmover_is_default: bool = True,
                      spec_is_default: bool = True) -> TimeManager:
    """A manager from lc0's ``TimeManager`` option string (e.g. ``smooth(init-nps=1.0)``)."""
    parsed = parse_options_string(spec)
    if not slowmover_is_default:
        if not spec_is_default:
            raise TimeManagerError("you can't set both TimeManager and Slowmover")
        parsed.setdefault("legacy", {})["slowmover"] = slowmover
    names = [k for k, v in parsed.items() if isinstance(v, dict)]
    plain = [k for k, v in parsed.items() if not isinstance(v, dict)]
    if plain:
        raise TimeManagerError(f"TimeManager {quote(spec)}: settings {plain} outside a manager's "
                               "parentheses, e.g. smooth(max-move-budget=0.3)")
    if len(names) != 1:
        raise TimeManagerError(f"exactly one time manager should be given, got {len(names)} "
                               f"in {quote(spec)}")
    cls = MANAGERS.get(names[0])
    if cls is None:
        raise TimeManagerError(f"unknown time manager {quote(names[0])}; known: "
                               f"{', '.join(MANAGERS)}")
    return cls(move_overhead_ms, parsed[names[0]])


def make_search_stopper(time_manager: TimeManager | None, go: GoParams, *, ply: int,
                        black: bool, current_nodes: int, move_overhead_ms: int,
                        smart_pruning_factor: float, smart_pruning_min_batches: int = 0,
                        nodes_as_playouts: bool = False,
                        tree_capacity: int | None = None) -> ChainedStopper:
    """The stoppers of one search, in lc0's order (CommonTimeManager +
    PopulateCommonUciStoppers): time manager, memory, nodes, movetime, depth, mate,
    then smart pruning unless the search is infinite/ponder/mate (lc0's KLD-gain stopper
    runs in the search core: ``SearchConfig.minimum_kld_gain_per_node``)."""
    chain = ChainedStopper()
    if time_manager is not None:
        chain.add(time_manager.get_stopper(go, ply, black, current_nodes))
    infinite = go.infinite or go.ponder or go.mate is not None
    populate = smart_pruning_factor > 0
    if tree_capacity is not None:
        chain.add(CapacityStopper(tree_capacity, populate))
    node_limit = 4_000_000_000
    if go.nodes is not None:
        if nodes_as_playouts:
            chain.add(PlayoutsStopper(go.nodes, populate))
        else:
            node_limit = go.nodes
    chain.add(VisitsStopper(node_limit, populate))
    if go.movetime is not None and not infinite:
        chain.add(TimeLimitStopper(go.movetime - move_overhead_ms))
    if go.depth is not None:
        chain.add(DepthStopper(go.depth))
    if go.mate is not None:
        chain.add(MateStopper(go.mate))
    if not infinite and smart_pruning_factor > 0:
        chain.add(SmartPruningStopper(smart_pruning_factor, smart_pruning_min_batches))
    return chain


__all__ = [
    "MANAGERS", "SEED_SMOOTH_DEFAULTS", "SMOOTH_DEFAULTS", "AlphazeroTimeManager",
    "LegacyTimeManager", "SimpleTimeManager", "SmoothTimeManager", "TimeManager",
    "TimeManagerError", "VisitsTrendWatcher", "estimated_moves_to_go", "exponential_decay",
    "linear_decay", "make_search_stopper", "make_time_manager", "parse_options_string",
    "smooth_spec",
]
