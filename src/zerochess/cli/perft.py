"""``zerochess perft FEN DEPTH [--rules device|host] [--divide] [--chess960]``: the number of
move paths of DEPTH plies, as engines print it (on the device rules by default)."""

from __future__ import annotations

import argparse
import time


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
    p.set_defaults(run=run)


MAX_DEPTH = 10


def run(args: argparse.Namespace) -> int:
    from zerochess.errors import ConfigError
    from zerochess.positions import parse_fen
    from zerochess.validation import as_count

    depth = as_count(_int(args.depth, "DEPTH"), "DEPTH", 0, MAX_DEPTH)
    batch = as_count(_int(args.batch, "--batch"), "--batch", 1, 1 << 20)
    board = parse_fen(args.fen, chess960=True if args.chess960 else None)
    if args.divide and depth < 1:
        raise ConfigError("--divide needs a DEPTH of at least 1")
    start = time.perf_counter()
    if args.rules == "host":
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

    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"{name} must be an integer, got {quote(text)}") from None


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
