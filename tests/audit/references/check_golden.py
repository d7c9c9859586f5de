"""The golden check reports of data/check.md against the works snapshot, one per format:
``python -m tests.audit.references.check_golden`` rewrites them (``make golden-references``);
tests/audit/references/test_check_golden.py and tests/pipeline/test_check_cmd.py check them.

The snapshot's sha256 differs between builds of the same content (DuckDB's file layout), so
it is written as ``<sha256>`` in the goldens and replaced before comparing."""

from __future__ import annotations

import tempfile
from pathlib import Path

import audit
from audit.references import extract_bytes
from audit.references.check import (
    CheckReport,
    SnapshotRef,
    check_document,
    make_report,
    render_text,
)
from audit.references.resolve import SnapshotResolver
from audit.references.sarif import render_sarif
from tests.audit.references.works import write_works

DATA = Path(__file__).resolve().parent / "data"
INPUT = "check.md"
FORMATS = ("text", "json", "sarif")
SHA = "<sha256>"


def golden_path(fmt: str) -> Path:
    return DATA / f"{INPUT}.check.golden.{'txt' if fmt == 'text' else fmt}"


def normalised(text: str, sha256: str) -> str:
    """``text`` with the snapshot digest (whole and as shown in text) as ``<sha256>``."""
    return text.replace(sha256, SHA).replace(sha256[:12], SHA)


def report(snapshot: Path) -> CheckReport:
    resolver = SnapshotResolver.open(snapshot)
    try:
        checked = check_document(extract_bytes((DATA / INPUT).read_bytes(), INPUT), resolver)
    finally:
        resolver.close()
    ref = SnapshotRef(name="works", sha256="0" * 64, snapshot_id="works-1")
    return make_report([checked], ref, f"citeseal {audit.__version__}")


def render(made: CheckReport, fmt: str) -> str:
    if fmt == "json":
        return made.model_dump_json(indent=2) + "\n"
    if fmt == "sarif":
        return render_sarif(made, audit.__version__)
    return render_text(made)


def outputs() -> dict[str, str]:
    with tempfile.TemporaryDirectory() as folder:
        made = report(write_works(Path(folder) / "works.duckdb"))
    return {fmt: normalised(render(made, fmt), "0" * 64) for fmt in FORMATS}


if __name__ == "__main__":
    for fmt, text in outputs().items():
        golden_path(fmt).write_text(text, encoding="utf-8")
        print(f"wrote {golden_path(fmt).relative_to(Path.cwd())}")
