"""Every run record a document cites is in the repository (issue 8): a path under
``docs/results/`` or ``records/``, or a ``benchmarks/results/*.json``, named in a Markdown
file must be a committed file or folder, so a figure cannot point at a record that was
never committed (a ``.gitignore`` rule once dropped one silently)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CITED = re.compile(r"(?:(?:docs/results|records)/[A-Za-z0-9_.\-]+(?:/[A-Za-z0-9_.\-]+)*"
                   r"|benchmarks/results/[A-Za-z0-9_.\-]+\.json)")


def _documents() -> list[Path]:
    skip = {".venv", ".git", "node_modules", "build"}
    return [p for p in REPO.rglob("*.md") if not skip & set(p.relative_to(REPO).parts)]


def _tracked() -> set[str] | None:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        return None
    out = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True)
    return set(out.stdout.splitlines()) if out.returncode == 0 else None


OUTPUT_ARG = re.compile(r"--(?:out|json)[ =]\S+")


def cited_records(text: str) -> list[str]:
    """Record paths in ``text``; placeholders (``docs/results/DIR``, ``<name>``) are not, nor
    a command's output argument (``--out PATH``, ``--json PATH``: where a run will write)."""
    paths = [m.rstrip("./") for m in CITED.findall(OUTPUT_ARG.sub("", text))]
    return [p for p in paths if not any(part.isupper() for part in p.split("/"))]


def test_the_pattern_finds_record_paths_only() -> None:
    text = ("recorded in `docs/results/contempt_wdl_maia_small/` and "
            "benchmarks/results/2026-11-22-h100.json and records/benchmarks/x/run.json; not "
            "`benchmarks/results/` nor docs/results/<name> nor docs/results/DIR nor "
            "results/contempt_wdl/tiny-seed0/ nor `run --out records/new/run1 --json "
            "records/new/run1.json`")
    assert cited_records(text) == ["docs/results/contempt_wdl_maia_small",
                                   "benchmarks/results/2026-11-22-h100.json",
                                   "records/benchmarks/x/run.json"]


def test_every_cited_record_is_committed() -> None:
    tracked = _tracked()
    missing = []
    for doc in _documents():
        for path in cited_records(doc.read_text(encoding="utf-8")):
            if tracked is None:
                full = REPO / path
                ok = full.exists() or any(full.parent.glob(full.name + ".*"))
            else:
                ok = path in tracked or any(t.startswith((path + "/", path + "."))
                                            for t in tracked)  # a folder, or NAME.{json,log}
            if not ok:
                missing.append(f"{doc.relative_to(REPO)} cites {path}")
    assert not missing, missing
