"""Fingerprints of what the parsers and the demo build produce, to prove a refactor changes
nothing: ``python -m tests.fingerprints`` rewrites the golden files, the tests in
``tests/pipeline/test_fingerprints.py`` recompute them.

A fingerprint is the sha256 of a canonical JSON dump (sorted keys, no spaces, non-ASCII
kept) of everything an input gave:

* **a response file** (a fixture under ``tests/fixtures/``, a recorded exchange of the demo
  under ``snapshots/demo/replay*/``, a reference response under ``../shared/``): the source
  ``citeseal parse auto`` detects for it, and what its source's parser returned — the whole
  :class:`~pipeline.records.ParseResult` (records, ids, paging hints, annotations, notices,
  refusals) — or the error it raised (class and message). History fixtures go through the
  history parsers (their entries, or their error).
* **the demo snapshots** (the demo corpus built from ``replay``, then its child from
  ``replay-update``, as ``citeseal demo`` builds them): per table, the rows of what was
  harvested — records with their flags, passages, relations, annotations, record versions
  and state, per-source counts — leaving out what names the build (snapshot ids, stamps,
  times, paths).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from audit.errors import CiteSealError
from tests.conftest import REFERENCE, ROOT

FIXTURES = ROOT / "tests" / "fixtures"
DEMO = ROOT / "snapshots" / "demo"
GOLDEN = ROOT / "tests" / "golden" / "fingerprints.json"
GOLDEN_REFERENCE = ROOT / "tests" / "golden" / "fingerprints-reference.json"
PARSED = ("pubmed", "europepmc", "pubtator3", "crossref", "clinicaltrials", "openfda")

# the columns of each demo table that say what was harvested (not when, nor in which build)
DEMO_TABLES: dict[str, tuple[str, ...]] = {
    "records": (
        "record_id",
        "version",
        "source",
        "content_hash",
        "version_date",
        "title",
        "doi",
        "pmid",
        "pmcid",
        "year",
        "journal",
        "authors",
        "publication_types",
        "content_type",
        "status",
        "retracted",
        "expression_of_concern",
        "preprint",
        "metadata",
        "licence",
        "licence_raw",
    ),
    "passages": ("record_id", "version", "path", "seq", "section", "text", "folded"),
    "relations": ("record_id", "kind", "target", "source", "detail", "date"),
    "annotations": ("record_id", "version", "path", "start", '"end"', "text", "type", "identifier"),
    "record_versions": ("record_id", "version", "seq", "content_hash", "origin"),
    "record_state": ("record_id", "source", "current_version", "withdrawn"),
    "sources": ("source", "status", "records", "passages", "failed_requests", "detail"),
}


def digest(value: object) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _outcome(call: Callable[[], object]) -> object:
    try:
        value = call()
    except CiteSealError as error:
        return {"error": type(error).__name__, "message": str(error)}
    if isinstance(value, list):
        return [dataclasses.asdict(v) if dataclasses.is_dataclass(v) else v for v in value]  # type: ignore[arg-type]
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if dump is not None else value


def response_fingerprint(path: Path, source: str) -> str:
    """The fingerprint of one response file read as ``source`` (module docstring)."""
    from pipeline.cli.parse_cmd import detect, unwrap
    from pipeline.sources import history, parser_for

    body, url, status = unwrap(path.read_bytes())
    if source == "history":
        reader = history.parse_label_history if "dailymed" in path.parts else None
        reader = reader or history.parse_trial_history
        result = _outcome(lambda: reader(body))
    elif source == "history-version":
        result = _outcome(lambda: history.parse_trial_version(body, _history_entry(path)))
    else:
        result = _outcome(lambda: parser_for(source)(body, url=url))
    return digest({"detected": detect(body, url), "status": status, "result": result})


def _history_entry(path: Path) -> Any:
    """The entry of ``history-NCT….json`` beside ``version-NCT…-N.json`` for version N."""
    from pipeline.cli.parse_cmd import unwrap
    from pipeline.sources import history

    nct, number = path.stem.removeprefix("version-").rsplit("-", 1)
    body, _, _ = unwrap((path.parent / f"history-{nct}.json").read_bytes())
    return next(e for e in history.parse_trial_history(body) if e.version == number)


def _source_of(path: Path, root: Path) -> str:
    first = path.relative_to(root).parts[0]
    if first in ("history", "backfill"):  # ClinicalTrials.gov / DailyMed record histories
        return "history" if path.name.startswith("history-") else "history-version"
    return first


def fixture_files() -> list[tuple[str, Path, str]]:
    """``(name, path, source)`` of every fixture file a parser reads, and of every recorded
    exchange of the demo."""
    out = [
        (str(p.relative_to(ROOT)), p, _source_of(p, FIXTURES))
        for p in sorted(FIXTURES.rglob("*"))
        if p.is_file()
    ]
    for folder in ("replay", "replay-update"):
        base = DEMO / folder
        out += [
            (str(p.relative_to(ROOT)), p, p.relative_to(base).parts[0])
            for p in sorted(base.rglob("*.json"))
        ]
    return out


def reference_files() -> list[tuple[str, Path, str]]:
    """``(name, path, source)`` of every reference response (none when ../shared is absent)."""
    from tests.conftest import reference_files as of_source

    return [(f"{source}/{p.name}", p, source) for source in PARSED for p in of_source(source)]


def files_fingerprints(files: list[tuple[str, Path, str]]) -> dict[str, str]:
    return {name: response_fingerprint(path, source) for name, path, source in files}


def demo_fingerprints(first: Path, second: Path) -> dict[str, Any]:
    """Per demo snapshot and table: its row count and the fingerprint of its sorted rows."""
    import duckdb

    out: dict[str, Any] = {}
    for label, path in (("demo", first), ("demo-update", second)):
        con = duckdb.connect(str(path), read_only=True)
        try:
            for table, columns in DEMO_TABLES.items():
                rows = con.execute(
                    f"SELECT {', '.join(columns)} FROM {table} ORDER BY ALL"  # noqa: S608 (our names)
                ).fetchall()
                out[f"{label}/{table}"] = {"rows": len(rows), "sha256": digest(rows)}
        finally:
            con.close()
    return out


def build_demo(folder: Path) -> tuple[Path, Path]:
    """The two demo snapshots (as the ``demo_pair`` fixture builds them)."""
    from pipeline.settings import Settings
    from pipeline.snapshot.build import build_snapshot
    from tests.conftest import TEST_KEYRING
    from tests.pipeline.snapshot.conftest import DEMO_REPLAY, DEMO_UPDATE, copy_demo_spec

    spec = copy_demo_spec(folder)
    first = build_snapshot(
        spec, keyring=TEST_KEYRING, replay=[DEMO_REPLAY], settings=Settings(), resume=False
    )
    second = build_snapshot(
        spec,
        keyring=TEST_KEYRING,
        parent="latest",
        replay=[DEMO_UPDATE, DEMO_REPLAY],
        settings=Settings(),
        resume=False,
    )
    return first.path, second.path


def write(value: object, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def main() -> int:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        first, second = build_demo(Path(tmp))
        demo = demo_fingerprints(first, second)
    write({"fixtures": files_fingerprints(fixture_files()), "demo": demo}, GOLDEN)
    if REFERENCE.is_dir():
        write({"reference": files_fingerprints(reference_files())}, GOLDEN_REFERENCE)
    else:
        print("../shared/reference-responses is absent: reference golden left as it is")
    return 0


if __name__ == "__main__":
    sys.exit(main())
