"""The analysis protocol's output side: KataGo-style responses with chess fields."""

from __future__ import annotations

import math
from typing import Any

import chess
import chess.polyglot
import numpy as np

from zerochess.analysis.scheduler import Job
from zerochess.search.results import SearchResult
from zerochess.search.scores import DEFAULT_SCORE_TYPE, centipawns

DIGITS = 8  # significant digits of reported floats (KataGo's OUTPUT_PRECISION)


def winrate_lcb(winrate: float, visits: int, stdevs: float) -> float:
    """KataGo's LCB shape: winrate - stdevs * sqrt(variance / ess), with KataGo's
    small-sample prior (weight 1/n^2 on the widest variance, 0.25 on [0, 1]).

    The tree does not keep second moments of the values yet, so the variance is the
    largest one a [0, 1] value with this mean can have, w (1 - w): the bound is wider
    (more cautious) than KataGo's sample-variance one.
    """
    # TODO(core): per-node value second moments would give KataGo's sample variance.
    if visits <= 0:
        return float("nan")
    n = float(visits)
    prior = 1.0 / (n * n)
    variance = max(winrate * (1.0 - winrate), 0.25e-8) + 0.25 * prior / (n + prior)
    ess = (n + prior) ** 2 / (n + prior * prior)
    return winrate - stdevs * math.sqrt(variance / ess)


def _num(x: float) -> float:
    if not math.isfinite(x):
        return x
    return float(f"{x:.{DIGITS}g}")


def _flip(job: Job, board: chess.Board) -> bool:
    """Whether values turn to the other side's view (reportAnalysisWinratesAs)."""
    perspective = job.query.perspective
    return (perspective == "WHITE" and board.turn == chess.BLACK) or (
        perspective == "BLACK" and board.turn == chess.WHITE)


def _root_fields(job: Job, board: chess.Board) -> dict[str, Any]:
    return {
        "currentPlayer": "w" if board.turn == chess.WHITE else "b",
        "thisHash": f"{chess.polyglot.zobrist_hash(board):016X}",
        "fen": board.fen(),
    }


def _values(w: float, d: float, draw_score: float, flip: bool) -> dict[str, Any]:
    loss = max(0.0, 1.0 - w - d)
    if flip:
        w, loss = loss, w
    q = w - loss + draw_score * d
    return {"winrate": _num(w), "drawrate": _num(d), "q": _num(q),
            "scoreCp": centipawns(w - loss, d, q, DEFAULT_SCORE_TYPE)}


def analysis_response(job: Job, result: SearchResult, pv_visits: np.ndarray, during: bool,
                      lcb_stdevs: float) -> dict[str, Any]:
    """One response for ``job``: moveInfos of the visited moves, best first (lc0's order)."""
    query = job.query
    board = result.board
    flip = _flip(job, board)
    draw_score = query.config.draw_score
    infos = []
    ranked = [int(i) for i in result.order() if result.visits[i] > 0]
    for order, i in enumerate(ranked):
        visits = int(result.visits[i])
        wl, d = float(result.wl[i]), float(result.d[i])
        proven = result.proven(i)
        if proven is not None:  # a proven result's value is exact (lc0's terminal edges)
            wl, d = float(proven), 1.0 - abs(proven)
        w = (1.0 + wl - d) / 2.0
        info: dict[str, Any] = {"move": result.moves[i].uci(), "order": order, "visits": visits}
        info.update(_values(w, d, draw_score, flip))
        mate = result.mate(i)  # a proven win or loss (a mate, or certainty propagation)
        if mate is not None:
            del info["scoreCp"]
            info["scoreMate"] = -mate if flip else mate
        lcb = winrate_lcb(w, visits, lcb_stdevs)
        radius = w - lcb
        info["lcb"] = _num(max(0.0, 1.0 - w - d) + radius if flip else lcb)
        info["prior"] = _num(float(result.prior[i]))
        pv = [result.moves[i], *result.pvs[i]][:1 + query.pv_len]
        info["pv"] = [m.uci() for m in pv]
        if query.include_pv_visits:
            # a tree, not a graph: the visits of a PV node are those of the edge into it
            visits_along = [int(v) for v in pv_visits[i][:len(pv)]]
            info["pvVisits"] = visits_along
            info["pvEdgeVisits"] = list(visits_along)
        infos.append(info)
    w_root, d_root, _ = (float(x) for x in result.root_wdl)
    root: dict[str, Any] = {"visits": int(result.root_visits)}
    root.update(_values(w_root, d_root, draw_score, flip))
    raw = [float(x) for x in result.raw_wdl]
    root["rawWdl"] = [_num(x) for x in (raw[::-1] if flip else raw)]
    root.update(_root_fields(job, board))
    out: dict[str, Any] = {"id": query.id, "turnNumber": job.turn, "isDuringSearch": during,
                           "moveInfos": infos, "rootInfo": root}
    if query.include_policy:
        out["policy"] = {m.uci(): _num(float(p))
                         for m, p in zip(result.moves, result.policy, strict=True)}
    return out


def game_over_response(job: Job, board: chess.Board) -> dict[str, Any]:
    """The final response for a position without legal moves: its value is exact, no search."""
    mated = board.is_checkmate()
    w, d = 0.0, 0.0 if mated else 1.0
    root: dict[str, Any] = {"visits": 0}
    root.update(_values(w, d, job.query.config.draw_score, _flip(job, board)))
    if mated:
        del root["scoreCp"]
        root["scoreMate"] = 0  # the side to move is mated (python-chess Mate(0), "#0")
    root["gameOver"] = "checkmate" if mated else "stalemate"
    root.update(_root_fields(job, board))
    out: dict[str, Any] = {"id": job.query.id, "turnNumber": job.turn, "isDuringSearch": False,
                           "moveInfos": [], "rootInfo": root}
    if job.query.include_policy:
        out["policy"] = {}
    return out


def no_results_response(job: Job) -> dict[str, Any]:
    """A job terminated before its search started (KataGo's ``noResults``)."""
    return {"id": job.query.id, "turnNumber": job.turn, "isDuringSearch": False,
            "noResults": True}
