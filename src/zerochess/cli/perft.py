"""``zerochess perft FEN DEPTH [--rules device|host] [--divide] [--chess960] [--force]``: the
number of move paths of DEPTH plies, as engines print it (on the device rules by default)."""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import dataclass


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("perft", help="count move paths (rules check and speed)",
                       description="Count the move paths of DEPTH plies from a position "
                       "(perft), on the device rules (jax) or the host rules (python-chess).")
    p.add_argument("fen", help='a FEN, or "startpos"')
    p.add_argument("depth", help="plies (0 to 10)")
    p.add_argument("--rules", choices=("device", "host"), default="device",
                   help="move generator (default: device)")
    p.add_argument("--divide", action="store_true",
                   help="one line per legal move with the paths below it")
    p.add_argument("--chess960", action="store_true",
                   help="read castling rights as chess960 (king-to-rook castling)")
    p.add_argument("--batch", default="4096",
                   help="positions expanded per device call (default 4096)")
    p.add_argument("--force", action="store_true",
                   help=f"count even when the estimate is over {MAX_SECONDS // 60} minutes")
    p.set_defaults(run=run)


MAX_DEPTH = 10
MAX_SECONDS = 600  # a longer estimated count needs --force
PROGRESS_SECONDS = 10.0  # a count estimated longer than this prints progress per root move
# paths per second assumed for the device rules (the host rules' rate is measured by the
# estimate): ``zerochess perft startpos 5`` on 2 busy CPU cores; an accelerator: a guess
DEVICE_RATE = {"cpu": 1.5e5}
DEVICE_RATE_OTHER = 2.0e7


def run(args: argparse.Namespace) -> int:
    from zerochess.errors import ConfigError
    from zerochess.positions import parse_fen
    from zerochess.validation import as_count

    depth = as_count(_int(args.depth, "DEPTH"), "DEPTH", 0, MAX_DEPTH)
    batch = as_count(_int(args.batch, "--batch"), "--batch", 1, 1 << 20)
    board = parse_fen(args.fen, chess960=True if args.chess960 else None)
    if args.divide and depth < 1:
        raise ConfigError("--divide needs a DEPTH of at least 1")
    estimate = estimate_paths(board, depth)
    seconds_est = _seconds(estimate, args.rules)
    if estimate is not None and seconds_est > MAX_SECONDS and not args.force:
        raise ConfigError(
            f"perft({depth}) from this position is about {estimate.paths:.2g} move paths: "
            f"about {_duration(seconds_est)} on the {args.rules} rules (at about "
            f"{estimate.rate(args.rules):,.0f} paths/s); give a smaller DEPTH, or --force "
            f"to count anyway (progress is printed)")
    start = time.perf_counter()
    if estimate is not None and seconds_est > PROGRESS_SECONDS and depth >= 2:
        print(f"perft({depth}): about {estimate.paths:.2g} paths, about "
              f"{_duration(seconds_est)}; progress per root move on stderr", file=sys.stderr,
              flush=True)
        split = _by_root_move(board, depth, args.rules, batch, start)
        if not args.divide:
            split = sum(split.values())
    elif args.rules == "host":
        split = _host(board, depth, args.divide)
    else:
        from zerochess.chess import device
        from zerochess.chess.device.perft import perft

        split = perft(device.from_board(board), depth, divide=args.divide, batch=batch)
    seconds = time.perf_counter() - start
    if args.divide:
        from zerochess.chess.policy_map import index_to_move

        for index, count in sorted(split.items(),
                                   key=lambda kv: index_to_move(board, kv[0]).uci()):
            print(f"{index_to_move(board, index).uci()}: {count}")
        total = sum(split.values())
        print()
    else:
        total = split
    print(f"Nodes searched: {total}")
    print(f"perft({depth}) = {total} in {seconds:.2f} s ({total / max(seconds, 1e-9):,.0f} "
          f"nodes/s, {args.rules} rules)")
    return 0


def _int(text: str, name: str) -> int:
    from zerochess.errors import ConfigError, quote

    # ASCII digits only: int() would also read "1_0" as 10 and other scripts' digits
    if not re.fullmatch(r"\s*[+-]?[0-9]+\s*", text, flags=re.ASCII):
        raise ConfigError(f"{name} must be an integer, got {quote(text)}")
    return int(text)


def _host(board, depth: int, divide: bool):
    from zerochess.chess.policy_map import move_to_index

    def count(b, d: int) -> int:
        if d == 0:
            return 1
        if d == 1:
            return b.legal_moves.count()
        total = 0
        for move in b.legal_moves:
            b.push(move)
            total += count(b, d - 1)
            b.pop()
        return total

    if not divide:
        return count(board, depth)
    out = {}
    for move in list(board.legal_moves):
        index = move_to_index(board, move)
        board.push(move)
        out[index] = count(board, depth - 1)
        board.pop()
    return out


@dataclass(frozen=True)
class Estimate:
    """An estimate of perft(depth): the paths and python-chess's measured rate."""

    paths: float
    host_rate: float  # paths/s python-chess counted while estimating

    def rate(self, rules: str) -> float:
        if rules == "host":
            return self.host_rate
        import jax

        return DEVICE_RATE.get(jax.default_backend(), DEVICE_RATE_OTHER)


def estimate_paths(board, depth: int, budget: int = 1_000) -> Estimate | None:
    """perft(``depth``) extrapolated from exact counts of the first plies (python-chess):
    the last known count times the last branching factor per further ply. None for depths
    under 3 (quick whatever the position). Counts a ply only while the one before it has
    at most ``budget`` paths, so the estimate itself takes about a second at most."""
    if depth < 3:
        return None
    t0 = time.perf_counter()
    counts = [1]
    parents = [board.copy()]
    while len(counts) <= min(depth, 3):
        if counts[-1] > budget:
            break
        nxt = []
        total = 0
        for b in parents:
            for move in b.legal_moves:
                total += 1
                if len(counts) < 3:
                    child = b.copy(stack=False)
                    child.push(move)
                    nxt.append(child)
        counts.append(total)
        parents = nxt
    spent = max(time.perf_counter() - t0, 1e-6)
    known = len(counts) - 1
    if counts[-1] == 0:
        return Estimate(paths=0.0, host_rate=sum(counts) / spent)
    factor = counts[-1] / max(counts[-2], 1)
    return Estimate(paths=counts[-1] * factor ** (depth - known),
                    host_rate=max(sum(counts) / spent, 1.0))


def _seconds(estimate: Estimate | None, rules: str) -> float:
    return 0.0 if estimate is None else estimate.paths / estimate.rate(rules)


def _duration(seconds: float) -> str:
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("hours", 3600),
                       ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:,.0f} {unit}"
    return f"{seconds:.0f} s"


def _by_root_move(board, depth: int, rules: str, batch: int, start: float) -> dict[int, int]:
    """perft divided at the root, one root move at a time, with a progress line each."""
    from zerochess.chess.policy_map import move_to_index

    moves = list(board.legal_moves)
    out: dict[int, int] = {}
    for i, move in enumerate(moves):
        child = board.copy()
        child.push(move)
        if rules == "host":
            count = _host(child, depth - 1, False)
        else:
            from zerochess.chess import device
            from zerochess.chess.device.perft import perft

            count = perft(device.from_board(child), depth - 1, batch=batch)
        out[move_to_index(board, move)] = count
        spent = time.perf_counter() - start
        left = spent / (i + 1) * (len(moves) - i - 1)
        print(f"perft({depth}): {i + 1}/{len(moves)} root moves ({move.uci()}: {count:,}), "
              f"{sum(out.values()):,} paths in {spent:.0f} s, about {_duration(left)} left",
              file=sys.stderr, flush=True)
    return out
