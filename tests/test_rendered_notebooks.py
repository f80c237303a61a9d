"""The rendered notebook copies in docs/notebooks/ (issue 38: a visitor sees the plots
without running anything): each is linked from the README, names its notebook, resolves
every image it shows and stays small; and scripts/render_notebook.py turns a cell's
outputs into Markdown blocks. Nothing here runs a notebook."""

from __future__ import annotations

import base64
import re
from pathlib import Path

from repo_scripts import load_script

REPO = Path(__file__).resolve().parents[1]
RENDERED = REPO / "docs" / "notebooks"
COPIES = sorted(RENDERED.glob("*.md"))
MAX_BYTES = 3 * 1024 * 1024  # all copies with their images


def test_every_rendered_copy_is_linked_from_the_readme_and_names_its_notebook():
    readme = (REPO / "README.md").read_text()
    assert len(COPIES) >= 3
    for md in COPIES:
        assert f"docs/notebooks/{md.name}" in readme, f"README does not link {md.name}"
        text = md.read_text()
        sources = re.findall(r"\]\(\.\./\.\./(notebooks/[\w/]+\.ipynb)\)", text)
        assert sources and (REPO / sources[0]).is_file(), f"{md.name} names no notebook"
        assert Path(sources[0]).stem == md.stem


def test_every_rendered_copy_the_readme_links_exists():
    readme = (REPO / "README.md").read_text()
    links = re.findall(r"\]\((docs/notebooks/[\w]+\.md)\)", readme)
    assert links
    for link in links:
        assert (REPO / link).is_file(), f"README links {link}, which does not exist"


def test_every_image_of_a_rendered_copy_exists_and_the_copies_stay_small():
    total = 0
    for md in COPIES:
        text = md.read_text()
        links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
        local = [link for link in links if not link.startswith("http")]
        notebook = REPO / re.findall(r"\]\(\.\./\.\./(notebooks/[\w/]+\.ipynb)\)", text)[0]
        if re.search(r"\bplt\.|\.plot\(", notebook.read_text()):  # it draws: show it
            assert local, f"{md.name} shows no image"
        for link in local:
            assert (md.parent / link).is_file(), f"{md.name}: missing {link}"
        files = RENDERED / f"{md.stem}_files"
        total += md.stat().st_size + sum(f.stat().st_size for f in files.glob("*"))
    assert total < MAX_BYTES


def test_cell_markdown_writes_images_and_cuts_long_text(tmp_path):
    render = load_script("scripts/render_notebook.py")
    png = b"\x89PNG\r\n\x1a\nnot really"
    cell = {"cell_type": "code", "source": "x = 1\n", "outputs": [
        {"output_type": "stream", "name": "stdout", "text": "a\n" * 100},
        {"output_type": "display_data", "data": {"image/png": base64.b64encode(png).decode(),
                                                 "text/plain": "<Figure>"}},
        {"output_type": "display_data", "data": {
            "text/html": "<div><svg a='1'>b</svg><br>first</div><div><svg>c</svg><br>two</div>"}},
        {"output_type": "execute_result", "data": {"text/plain": "   col\n0    1"}},
        {"output_type": "error", "traceback": ["\x1b[31mValueError\x1b[0m: bad"]},
    ]}
    blocks = render.cell_markdown(cell, 7, tmp_path, "nb_files")
    assert blocks[0] == "```python\nx = 1\n```\n"
    stream = blocks[1].splitlines()
    assert len(stream) == render.MAX_TEXT_LINES + 3 and "40 more lines" in stream[-2]
    assert blocks[2] == "![output of cell 7](nb_files/cell7_1.png)\n"
    assert (tmp_path / "cell7_1.png").read_bytes() == png
    assert blocks[3].startswith("![first](nb_files/cell7_2_0.svg)")
    assert (tmp_path / "cell7_2_1.svg").read_text() == "<svg>c</svg>"
    assert blocks[5] == "```text\n   col\n0    1\n```\n"
    assert blocks[6] == "```text\nValueError: bad\n```\n"
    assert render.cell_markdown({"cell_type": "markdown", "source": "# T\n\n"}, 0, tmp_path,
                                "x") == ["# T\n"]
