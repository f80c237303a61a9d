"""Run a notebook at its CI scale and write a rendered Markdown copy with its plots.

    python scripts/render_notebook.py notebooks/library_quickstart.ipynb docs/notebooks

writes ``docs/notebooks/library_quickstart.md`` and its images under
``docs/notebooks/library_quickstart_files/`` (the layout of the committed copies linked
from the README). The notebook runs in a Jupyter kernel (nbclient) at
``ZEROCHESS_NOTEBOOK_SCALE`` (default ``tiny``), as ``tests/test_notebooks.py`` runs it;
the notebook file itself is not changed (it stays committed without outputs). Unlike the
test, it keeps XLA's default optimisation, so the speed a notebook prints is the usual one.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import os
import platform
import re
import sys
import time
from pathlib import Path

__all__ = ["cell_markdown", "header", "main", "render", "strip_ansi"]

COLAB = "https://colab.research.google.com/github/zerochess/zerochess/blob/main/"
MAX_TEXT_LINES = 60  # a longer text output is cut, with a line saying so
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    """Text without terminal colour codes (tracebacks, rich output)."""
    return _ANSI.sub("", text)


def _text_block(text: str) -> str:
    lines = strip_ansi(text).rstrip("\n").split("\n")
    if len(lines) > MAX_TEXT_LINES:
        cut = len(lines) - MAX_TEXT_LINES
        lines = lines[:MAX_TEXT_LINES] + [f"... ({cut} more lines not shown)"]
    return "```text\n" + "\n".join(lines) + "\n```\n"


def cell_markdown(cell: dict, index: int, files_dir: Path, files_rel: str) -> list[str]:
    """The Markdown blocks of one executed cell; images are written to ``files_dir``.

    Args:
      cell: an nbformat cell (markdown or code, with outputs).
      index: the cell's index among the notebook's cells (names the image files).
      files_dir: where image outputs are written.
      files_rel: how the Markdown file refers to ``files_dir``.
    Returns:
      Markdown blocks, in order.
    """
    if cell["cell_type"] == "markdown":
        return [cell["source"].rstrip("\n") + "\n"]
    if cell["cell_type"] != "code":
        return []
    blocks = ["```python\n" + cell["source"].rstrip("\n") + "\n```\n"]
    for k, out in enumerate(cell.get("outputs", [])):
        kind = out["output_type"]
        if kind == "stream":
            blocks.append(_text_block(out["text"]))
        elif kind == "error":
            blocks.append(_text_block("\n".join(out["traceback"])))
        elif kind in ("display_data", "execute_result"):
            data = out.get("data", {})
            if "image/png" in data:
                name = f"cell{index}_{k}.png"
                (files_dir / name).write_bytes(base64.b64decode(data["image/png"]))
                blocks.append(f"![output of cell {index}]({files_rel}/{name})\n")
            elif "image/svg+xml" in data:
                name = f"cell{index}_{k}.svg"
                (files_dir / name).write_text(data["image/svg+xml"])
                blocks.append(f"![output of cell {index}]({files_rel}/{name})\n")
            elif "text/html" in data and "<svg" in data["text/html"]:
                # chess boards side by side (HTML around inline SVGs): one SVG file each
                svgs = re.findall(r"<svg.*?</svg>", data["text/html"], flags=re.S)
                captions = re.findall(r"<br>(.*?)</div>", data["text/html"], flags=re.S)
                for j, svg in enumerate(svgs):
                    name = f"cell{index}_{k}_{j}.svg"
                    (files_dir / name).write_text(svg)
                    caption = captions[j] if j < len(captions) else ""
                    blocks.append(f"![{caption or f'output of cell {index}'}]"
                                  f"({files_rel}/{name}) {caption}\n")
            elif "text/plain" in data:
                blocks.append(_text_block(data["text/plain"]))
    return blocks


def header(stem: str, source: str, scale: str | None, seconds: float) -> str:
    """The rendered copy's opening: what it is, how the run was made, how to read it.
    ``source``: the notebook's path in the repository (the copy lives in docs/notebooks/);
    ``scale``: None for a notebook without a scale parameter."""
    title = f"# {stem} — rendered copy" + (f" (scale `{scale}`)" if scale else "")
    how = (f"The run used `ZEROCHESS_NOTEBOOK_SCALE={scale}` and took" if scale
           else "The notebook has one size; the run took")
    read = ("At this scale the numbers are a smoke test of the machinery, not\nresults. "
            if scale else "")
    return (
        f"{title}\n\n"
        f"This is [`{source}`](../../{source}) with the outputs of one run, so that you can\n"
        f"see what it shows without running it ([open it in Colab]({COLAB}{source})).\n"
        f"{how} {seconds:.0f} s in a Jupyter kernel on {os.cpu_count()} shared CPU cores\n"
        f"({platform.machine()}, no accelerator) on {datetime.date.today().isoformat()}, made "
        f"by\n`python scripts/render_notebook.py {source} docs/notebooks`. Times printed "
        "below depend on\nwhat jax's compilation cache already held. "
        f"{read}The notebook in the\nrepository is committed without outputs.\n\n---\n")


def render(path: Path, out_dir: Path, scale: str = "tiny", timeout: int = 600) -> Path:
    """Execute ``path`` at ``scale`` and write ``out_dir/<stem>.md`` with its images.

    Returns:
      The Markdown file written.
    """
    import nbformat
    from nbclient import NotebookClient

    os.environ["ZEROCHESS_NOTEBOOK_SCALE"] = scale
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    nb = nbformat.read(path, as_version=4)
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    seconds = time.perf_counter() - t0
    files_rel = f"{path.stem}_files"
    files_dir = out_dir / files_rel
    files_dir.mkdir(parents=True, exist_ok=True)
    for old in files_dir.iterdir():
        old.unlink()
    repo = Path(__file__).resolve().parents[1]
    source = path.resolve().relative_to(repo).as_posix()
    scaled = any("ZEROCHESS_NOTEBOOK_SCALE" in c.source for c in nb.cells
                 if c.cell_type == "code")
    head = header(path.stem, source, scale if scaled else None, seconds)

    blocks = [head]
    for i, cell in enumerate(nb.cells):
        blocks += cell_markdown(cell, i, files_dir, files_rel)
    md = out_dir / f"{path.stem}.md"
    md.write_text("\n".join(blocks))
    return md


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--scale", default="tiny", choices=["tiny", "small", "full"])
    args = parser.parse_args(argv)
    if not args.notebook.is_file():
        print(f"error: no notebook at {args.notebook}", file=sys.stderr)
        return 2
    md = render(args.notebook, args.out_dir, args.scale)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
