"""The golden ``citeseal check`` reports of the demo references document
(``snapshots/demo/references.md``) against the demo snapshot, one per format:
``python -m tests.pipeline.check_demo_golden`` rewrites them (``make golden-references``);
``tests/pipeline/test_check_demo_golden.py`` checks that the CLI prints exactly these.

The demo snapshot is built from its replay, as ``citeseal demo`` builds it. Its sha256 and
snapshot id differ between builds of the same content (DuckDB's file layout, the build's
stamp), so they are written as ``<sha256>`` and ``<snapshot-id>`` in the goldens and replaced
before comparing."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from tests.conftest import ROOT

DOCUMENT = ROOT / "snapshots" / "demo" / "references.md"
LABEL = "references.md"
GOLDEN = ROOT / "tests" / "golden" / "check-demo"
FORMATS = ("text", "md", "json", "html", "sarif")
EXTENSIONS = {"text": "txt", "md": "md", "json": "json", "html": "html", "sarif": "sarif"}


def golden_path(fmt: str) -> Path:
    return GOLDEN / f"{LABEL}.check.golden.{EXTENSIONS[fmt]}"


def snapshot_facts(snapshot: Path) -> tuple[str, str]:
    """The snapshot's sha256 and id, from its manifest."""
    manifest = json.loads(snapshot.with_suffix(".manifest.json").read_text(encoding="utf-8"))
    return manifest["sha256"], manifest["snapshot_id"]


def normalised(text: str, snapshot: Path) -> str:
    """``text`` with the build-specific digest (whole and as shown in text) and id replaced."""
    sha256, snapshot_id = snapshot_facts(snapshot)
    return (
        text.replace(sha256, "<sha256>")
        .replace(sha256[:12], "<sha256>")
        .replace(snapshot_id, "<snapshot-id>")
    )


def outputs(snapshot: Path) -> dict[str, str]:
    """Each format's report of the demo document against ``snapshot`` (normalised)."""
    from audit import __version__
    from audit.references import extract_bytes
    from audit.references.check import SnapshotRef, check_document, make_report
    from audit.references.resolve import SnapshotResolver
    from pipeline.cli.check_cmd import Format, render

    sha256, snapshot_id = snapshot_facts(snapshot)
    resolver = SnapshotResolver.open(snapshot, "demo")
    try:
        checked = check_document(extract_bytes(DOCUMENT.read_bytes(), LABEL), resolver)
    finally:
        resolver.close()
    ref = SnapshotRef(name="demo", sha256=sha256, snapshot_id=snapshot_id)
    report = make_report([checked], ref, f"citeseal {__version__}")
    return {fmt: normalised(render(report, Format(fmt)), snapshot) for fmt in FORMATS}


def build_demo(folder: Path) -> Path:
    """The demo snapshot, built from its replay and sealed with the tests' key."""
    from pipeline.settings import Settings
    from pipeline.snapshot.build import build_snapshot
    from tests.conftest import TEST_KEYRING
    from tests.pipeline.snapshot.conftest import DEMO_REPLAY, copy_demo_spec

    spec = copy_demo_spec(folder)
    built = build_snapshot(
        spec, keyring=TEST_KEYRING, replay=[DEMO_REPLAY], settings=Settings(), resume=False
    )
    return built.path


if __name__ == "__main__":
    GOLDEN.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        made = outputs(build_demo(Path(folder)))
    for fmt, text in made.items():
        golden_path(fmt).write_text(text, encoding="utf-8")
        print(f"wrote {golden_path(fmt).relative_to(ROOT)}")
