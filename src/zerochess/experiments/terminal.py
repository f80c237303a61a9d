"""An experiment's summary for an 80-column terminal: ``summary.md`` with its wide tables
replaced by narrow ones, paragraphs wrapped, plots named by path, and a "next:" line."""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from zerochess.experiments.scales import SCALES

WIDTH = 80
_IMAGE = re.compile(r"^!\[([^\]]*)\]\(([^)]+)\)\s*$")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _blocks(rows: list[list[str]], width: int) -> list[str]:
    """A table too wide for ``width`` as one wrapped block per row: ``first: col value, ...``."""
    header, body = rows[0], rows[1:]
    out = []
    for r in body:
        pairs = [f"{h} {v}" for h, v in zip(header[1:], r[1:], strict=False) if v not in ("", "-")]
        out.append(textwrap.fill(f"{header[0]} {r[0]}: " + ", ".join(pairs), width,
                                 subsequent_indent="    "))
    return out


def text_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    """Columns right-aligned to their widest cell, two spaces apart (plain text)."""
    cells = [list(map(str, columns))] + [[str(v) for v in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    return ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in cells]


def terminal_text(markdown: str, out_dir: Path, narrow: Sequence[list[str]] = (),
                  width: int = WIDTH) -> str:
    """``markdown`` (a ``summary.md``) for a terminal of ``width`` columns.

    Args:
      markdown: the summary.
      out_dir: the run folder (plots and the wide tables are named by path in it).
      narrow: replacements, in order, for the summary's tables wider than ``width`` (each
        a list of lines no wider than ``width``); a wide table without one is shown as one
        wrapped line per row.
      width: the terminal's columns.

    Returns:
      Plain text whose lines are at most ``width`` columns (a single word longer than
      that, e.g. a path, excepted).
    """
    lines = markdown.splitlines()
    out: list[str] = []
    spare = list(narrow)
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("|"):
            block = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                block.append(lines[i])
                i += 1
            if max(len(b) for b in block) <= width:
                out += block
                continue
            rows = [_cells(b) for b in block if not set(b.strip()) <= set("|-: ")]
            out += spare.pop(0) if spare else _blocks(rows, width)
            out.append(f"(all columns: {out_dir / 'summary.md'})")
            continue
        image = _IMAGE.match(line.strip())
        if image:
            out.append(f"plot: {out_dir / image.group(2)}")
        elif line.startswith("- "):
            out.append(textwrap.fill(line, width, subsequent_indent="  "))
        elif line.strip():
            out.append(textwrap.fill(line.replace("**", ""), width))
        else:
            out.append("")
        i += 1
    return "\n".join(out).rstrip() + "\n"


def wrap_lines(text: str, width: int = WIDTH) -> str:
    """Each line of ``text`` wrapped to ``width`` columns, its continuation lines indented
    two more than the line itself (for the terminal)."""
    out = []
    for line in text.splitlines():
        indent = " " * (len(line) - len(line.lstrip()) + 2)
        out.append(textwrap.fill(line, width, subsequent_indent=indent) if line else "")
    return "\n".join(out)


def compile_sentence(warmup_compile_s: float | None, play_compile_s: float) -> str:
    """One figure for the run's compile time: the warm-up's (before the games, which reuse
    it) plus any the games themselves needed (other batch sizes)."""
    warm = warmup_compile_s or 0.0
    total = warm + play_compile_s
    if warm and play_compile_s:
        return (f"compiling {total:.0f} s in all ({warm:.0f} s in the warm-up before the "
                f"games, {play_compile_s:.0f} s during them)")
    if warm:
        return f"compiling {warm:.0f} s, in the warm-up before the games (they reused it)"
    return f"compiling {play_compile_s:.0f} s during the games"


def planned_work(plan: Sequence[Any]) -> tuple[int, float, float]:
    """(games, searched positions, mean nodes per position) of the planned games, at the
    plan's assumed game length."""
    games, positions, nodes = 0, 0.0, 0.0
    for part in plan:
        for spec in part.specs:
            sides = [getattr(part.players.get(side), "nodes", 0) or 0
                     for side in (spec.white, spec.black)]
            games += 1
            positions += part.plies
            nodes += part.plies / 2 * sum(sides)
    return games, positions, nodes / positions if positions else 0.0


def duration_text(seconds: float) -> str:
    """A rough duration: "45 s", "12 min", "1.5 h"."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def next_line(name: str, scale: str, seed: int, next_plan: Callable[[str], Sequence[Any]] | None,
              positions_per_s: float | None, nodes_per_position: float | None = None) -> str:
    """What to run next: the next scale, its size, a rough time at this run's pace, and
    ``--estimate``, which measures its time on this machine."""
    following = SCALES[SCALES.index(scale) + 1] if scale in SCALES[:-1] else None
    seed_arg = f" --seed {seed}" if seed else ""
    if following is None:
        return textwrap.fill(f"next: the {scale} scale is the largest; other experiments: "
                             "zerochess experiment --help and experiments/README.md", WIDTH,
                             subsequent_indent="      ")
    cmd = f"zerochess experiment {name} --scale {following}{seed_arg}"
    about = ""
    if next_plan is not None:
        try:
            games, positions, per_position = planned_work(next_plan(following))
        except Exception:  # noqa: BLE001 - a hint: never fail a finished run over it
            games = 0
        if games:
            about = f"{games} games, {positions:,.0f} positions of {per_position:.0f} nodes"
            if positions_per_s:
                about += (f"; at this run's {positions_per_s:.1f} positions/s "
                          f"{duration_text(positions / positions_per_s)}")
                if nodes_per_position and per_position > 1.5 * nodes_per_position:
                    about += (f", longer with trees {per_position / nodes_per_position:.0f}x "
                              "this run's")
            about += ". "
    if next_plan is None:  # no plan: no run-time estimate either
        return f"next: {cmd}"
    more = textwrap.fill(f"{about}--estimate measures its time on this machine first "
                         "(a short warm-up; nothing is played).", WIDTH,
                         initial_indent="      ", subsequent_indent="      ")
    return f"next: {cmd}\n{more}"


def _num(v: Any) -> float:
    """A CSV or table cell as a float ("" and None: NaN)."""
    return math.nan if v in ("", None) else float(v)


def wdl_table(rows: Sequence[Mapping[str, Any]], key: str, label: str) -> list[str]:
    """A narrow W/D/L table from ``wdl_counts`` rows (or their CSV): ``key`` | games |
    W-D-B | (w+l)/d [95%] | draws [95%] | plies (about 70 columns)."""
    def fmt(v: Any) -> str:
        v = _num(v)
        return "inf" if math.isinf(v) else "-" if math.isnan(v) else f"{v:.2f}"

    def interval(name: str) -> str:
        return f"{fmt(r[name])} [{fmt(r[name + '_low'])}, {fmt(r[name + '_high'])}]"

    body = []
    for r in rows:
        value = r[key]
        shown = "PUCT" if key == "n_scl" and _num(value) >= 10**6 else value
        plies = _num(r["mean_plies"])
        body.append([shown, int(_num(r["games"])),
                     "-".join(str(int(_num(r[k]))) for k in ("white_wins", "draws",
                                                             "black_wins")),
                     interval("decisive_over_draws"), interval("draw_rate"),
                     "-" if math.isnan(plies) else f"{plies:.0f}"])
    return text_table([label, "games", "W-D-B", "(w+l)/d [95%]", "draws [95%]", "plies"],
                      body) + ["(W-D-B: white wins, draws, black wins; plies: mean game length)"]


__all__ = ["WIDTH", "compile_sentence", "duration_text", "next_line", "planned_work",
           "terminal_text", "text_table", "wdl_table", "wrap_lines"]
