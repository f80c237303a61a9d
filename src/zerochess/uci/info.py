"""UCI output as lc0 prints it: ``info`` lines, MultiPV, VerboseMoveStats, ponder rewrite."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import chess

from zerochess.chess.policy_map import move_to_index
from zerochess.search.results import SearchResult
from zerochess.search.scores import centipawns, wdl_permille


@dataclasses.dataclass
class ThinkingInfo:
    """One ``info`` line's fields (lc0 ThinkingInfo); None / -1 = not printed."""

    depth: int = -1
    seldepth: int = -1
    time: int = -1
    nodes: int = -1
    score_cp: int | None = None
    mate: int | None = None
    wdl: tuple[int, int, int] | None = None
    moves_left: int | None = None
    hashfull: int = -1
    nps: int = -1
    eps: int = -1
    tbhits: int = -1
    multipv: int = -1
    pv: list[str] = dataclasses.field(default_factory=list)
    comment: str = ""


def format_info(info: ThinkingInfo, show_wdl: bool = False, show_moves_left: bool = False,
                show_eps: bool = False) -> str:
    parts = ["info"]
    if info.depth >= 0:
        parts += ["depth", str(max(info.depth, 1))]
    if info.seldepth >= 0:
        # never below the depth shown (a search with no playouts yet shows depth 1)
        parts += ["seldepth", str(max(info.seldepth, info.depth, 1) if info.depth >= 0
                                  else info.seldepth)]
    if info.time >= 0:
        parts += ["time", str(info.time)]
    if info.nodes >= 0:
        parts += ["nodes", str(info.nodes)]
    if info.mate is not None:
        parts += ["score", "mate", str(info.mate)]
    if info.score_cp is not None:
        parts += ["score", "cp", str(info.score_cp)]
    if info.wdl is not None and show_wdl:
        parts += ["wdl", *(str(x) for x in info.wdl)]
    if info.moves_left is not None and show_moves_left:
        parts += ["movesleft", str(info.moves_left)]
    if info.hashfull >= 0:
        parts += ["hashfull", str(info.hashfull)]
    if info.nps >= 0:
        parts += ["nps", str(info.nps)]
    if info.eps >= 0 and show_eps:
        parts += ["eps", str(info.eps)]
    if info.tbhits >= 0:
        parts += ["tbhits", str(info.tbhits)]
    if info.multipv >= 0:
        parts += ["multipv", str(info.multipv)]
    if info.pv:
        parts += ["pv", *info.pv]
    if info.comment:
        parts += ["string", info.comment]
    return " ".join(parts)


def move_text(board: chess.Board, move: chess.Move, chess960: bool = False) -> str:
    return board.uci(move, chess960=chess960)


def line_text(board: chess.Board, moves: Sequence[chess.Move]) -> list[str]:
    """UCI strings of a line played from ``board``."""
    out, b = [], board.copy(stack=False)
    for move in moves:
        out.append(b.uci(move))
        b.push(move)
    return out


def thinking_infos(res: SearchResult, *, time_ms: int, nodes: int, nps: int, eps: int,
                   multipv: int, score_type: str, has_wdl: bool, per_pv_counters: bool,
                   draw_score: float, hashfull: int = -1) -> list[ThinkingInfo]:
    """One ``ThinkingInfo`` per PV (best first), as lc0's SendUciInfo fills them: depth
    is the playouts' mean depth, seldepth the largest (this search's, lc0's counters).

    ``hashfull`` (per mille of the fixed tree in use) is a zerochess addition: lc0's
    classic search leaves the field out; a full tree ends a zerochess search."""
    common = ThinkingInfo(depth=int(res.depth), seldepth=res.seldepth, time=time_ms,
                          nodes=-1 if per_pv_counters else nodes, hashfull=hashfull, nps=nps,
                          eps=eps, tbhits=0)
    w, d_root, loss = (float(x) for x in res.root_wdl)
    default_wl, default_d = w - loss, d_root
    infos = []
    order = res.order()
    count = min(multipv, len(order))
    for rank, i in enumerate(order[:count], start=1):
        info = dataclasses.replace(common, pv=[])
        visited = res.visits[i] > 0
        wl = float(res.wl[i]) if visited else default_wl
        d = float(res.d[i]) if visited else default_d
        proven = res.proven(i)
        if proven is not None:  # lc0 shows a terminal edge's exact value
            wl, d = float(proven), 1.0 - abs(proven)
        q = wl + draw_score * d
        mate = res.mate(i)
        if mate is not None:
            info.mate = mate
        else:
            info.score_cp = centipawns(wl, d, q, score_type, has_wdl)
        info.wdl = wdl_permille(wl, d)
        if len(res.m) and not math.isnan(float(res.m[i])):  # a moves-left head
            info.moves_left = int((1.0 + float(res.m[i])) / 2.0)
        if multipv > 1:
            info.multipv = rank
        if per_pv_counters:
            info.nodes = int(res.visits[i])
        info.pv = line_text(res.board, [res.moves[i], *res.pvs[i]])
        infos.append(info)
    return infos


def ponder_infos(infos: list[ThinkingInfo], ponder_move: str) -> list[ThinkingInfo]:
    """lc0's UciPonderForwarder: while pondering on the position before the expected
    reply, print the main line's stats from the side to move after it (score negated,
    W and L swapped, depth - 1) with the PV that starts after the ponder move."""
    out = ThinkingInfo()
    for info in infos:
        if info.multipv <= 1:
            out = dataclasses.replace(info, pv=[])
            if out.mate is not None:
                out.mate = -out.mate
            if out.score_cp is not None:
                out.score_cp = -out.score_cp
            if out.depth > 1:
                out.depth -= 1
            if out.seldepth > 1:
                out.seldepth -= 1
            if out.wdl is not None:
                out.wdl = (out.wdl[2], out.wdl[1], out.wdl[0])
            out.multipv = -1
        if info.pv and info.pv[0] == ponder_move:
            out.pv = list(info.pv[1:])
    return [out]


def _head(label: str, index: int, n: int, in_flight: int, p: float) -> str:
    prec = 1 if p >= 0.99995 else 2
    return (f"{label:<5} ({index:<4}) N: {n:>7} (+{in_flight:>2}) "
            f"(P: {p * 100:>5.{prec}f}%) ")


def _stats(wl: float | None, d: float, m: float, q: float) -> str:
    if wl is None:
        return f"(WL:  -.-----) (D: -.---) (M:  -.-) (Q: {q:>8.5f}) "
    return f"(WL: {wl:>8.5f}) (D: {d:>5.3f}) (M: {m:>4.1f}) (Q: {q:>8.5f}) "


def _tail(v: float | None, tag: str) -> str:
    text = "(V:  -.----) " if v is None or math.isnan(v) else f"(V: {v:>7.4f}) "
    return text + (f"({tag}) " if tag else "")


def _bound_tag(res: SearchResult, i: int) -> str:
    """lc0's tag of a root edge: T proven, W can't lose, L can't win (root side)."""
    if res.proven(i) is not None:  # a mate or a proven bound
        return "T"
    if len(res.bounds) == 0:
        return ""
    lower, upper = (int(x) for x in res.bounds[i])
    return "W" if lower == 0 else "L" if upper == 0 else ""


def verbose_move_stats(res: SearchResult) -> list[str]:
    """lc0's VerboseMoveStats: one line per root move, ascending by (N, Q + U) so the best
    is last, then the ``node`` line (edge count, visited policy, no U/S). Q, U and S are
    the search's own (``SearchResult.q_shown``/``u``/``s``, read by ``search.view`` from
    ``selection``'s formulas)."""
    visited = res.visits > 0
    visited_policy = float(res.prior[visited].sum())
    # lc0 sorts by (N, Q + U): the moves-left utility is in S, not in the order
    order = sorted(range(len(res.moves)),
                   key=lambda i: (int(res.visits[i]), float(res.q_shown[i] + res.u[i])))
    lines = []
    for i in order:
        m = float(res.m[i]) if len(res.m) and not math.isnan(float(res.m[i])) else 0.0
        label = res.board.uci(res.moves[i], chess960=True)
        text = _head(label, move_to_index(res.board, res.moves[i]), int(res.visits[i]),
                     int(res.in_flight[i]) if len(res.in_flight) else 0, float(res.prior[i]))
        if visited[i]:
            text += _stats(float(res.wl[i]), float(res.d[i]), m, float(res.q_shown[i]))
        else:
            text += _stats(None, 0.0, 0.0, float(res.q_shown[i]))
        text += f"(U: {float(res.u[i]):>6.5f}) (S: {float(res.s[i]):>8.5f}) "
        tag = _bound_tag(res, i) if visited[i] else ""
        v = float(res.v[i]) if visited[i] and len(res.v) else None
        text += _tail(v, tag)
        lines.append(text)
    w, d, loss = (float(x) for x in res.root_wdl)
    raw = res.raw_wdl
    node = _head("node ", len(res.moves), int(res.root_visits), int(res.root_in_flight),
                 visited_policy)
    root_m = 0.0 if math.isnan(res.root_moves_left) else float(res.root_moves_left)
    node += _stats(w - loss, d, root_m, (w - loss) + res.draw_score * d)
    node += _tail(float(raw[0] - raw[2]), "")
    lines.append(node)
    return lines


__all__ = ["ThinkingInfo", "format_info", "line_text", "ponder_infos", "thinking_infos",
           "verbose_move_stats"]
