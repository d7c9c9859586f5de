"""Re-audit: a report published against one snapshot, re-checked against its newer child,
lists exactly the citations whose status changed (newly retracted, new version, withdrawn)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from audit.duckdb_corpus import DuckDBCorpus
from audit.engine import AnswerInput, CitationInput, SentenceInput, audit_answer
from audit.handles import Locator, mint
from audit.keys import Keyring
from audit.report import CitationResult, Flag, RecordView, Report
from pipeline.site.build import build_site, load_site
from pipeline.site.reaudit import compare_citation, compare_reports
from tests.conftest import TRUST
from tests.pipeline.site.factory import demo_records, write_snapshot

KEYS = Keyring.demo_keyring()


def cite(scheme: str, id_: str, path: str, version: str | None = None, quote: str | None = None):
    return CitationInput.from_text(mint(KEYS, Locator(scheme, id_, path, version)), quote)


ANSWER = AnswerInput(
    (
        SentenceInput(
            1, "A cohort found no risk.", citations=(cite("pmid", "99000001", "abstract.1"),)
        ),
        SentenceInput(
            2,
            "The trial dosed once daily.",
            citations=(
                cite("nct", "NCT99000001", "trial.brief_summary.1", "2025-01-15", "once daily"),
            ),
        ),
        SentenceInput(
            3,
            "Another trial was planned.",
            citations=(cite("nct", "NCT99000002", "trial.brief_summary.1", "2025-01-15"),),
        ),
        SentenceInput(
            4,
            "A forged one.",
            citations=(CitationInput.from_text("pmid:99000001/abstract.1~zzzzz"),),
        ),
        SentenceInput(5, "Uncited."),
    )
)


@pytest.fixture
def lineage(tmp_path: Path) -> tuple[Path, Path, Report]:
    snapshots = tmp_path / "snapshots"
    old = snapshots / "demo" / "demo-1.duckdb"
    first = write_snapshot(old, demo_records(second=False))
    write_snapshot(
        snapshots / "demo" / "demo-2.duckdb",
        demo_records(second=True),
        created_at="2025-06-02T00:00:00Z",
        parent_sha256=first,
    )
    with DuckDBCorpus(old) as corpus:
        report = audit_answer(ANSWER, corpus, KEYS, source_label="answer.md")
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "answer.json").write_text(report.model_dump_json(), encoding="utf-8")
    return reports, snapshots, report


def test_the_published_report_was_clean_but_for_the_forgery(
    lineage: tuple[Path, Path, Report],
) -> None:
    report = lineage[2]
    assert [c.verdict for c in report.citations()] == ["ok", "ok", "ok", "forged"]
    assert all(not c.flags for c in report.citations())


def test_reaudit_lists_each_status_change_since_publication(
    lineage: tuple[Path, Path, Report],
) -> None:
    reports, snapshots, _ = lineage
    data = load_site(reports, snapshots, env={}, trust=TRUST)
    outcome = data.reaudits["answer"]
    assert outcome.against is not None and outcome.against.label == "demo/demo-2.duckdb"
    assert outcome.method == "check codes verified again with the public demo key"
    changes = [(c.anchor, c.kinds, c.was, c.now) for c in outcome.changes]
    assert changes == [
        ("s1c1", ("newly retracted",), "ok", "ok [retracted]"),
        ("s2c1", ("new version",), "ok", "ok [version_changed]"),
        ("s3c1", ("withdrawn",), "ok", "withdrawn"),
    ]
    assert data.warnings == ()


def test_reaudit_without_the_key_trusts_the_published_check_codes(
    lineage: tuple[Path, Path, Report], tmp_path: Path
) -> None:
    reports, snapshots, report = lineage
    document = report.model_dump(mode="json")
    document["key"] = {"fingerprint": "0123456789ab", "demo": False}
    (reports / "answer.json").write_text(Report.model_validate(document).model_dump_json())
    outcome = load_site(reports, snapshots, env={}, trust=TRUST).reaudits["answer"]
    assert outcome.method == (
        "check codes taken as published (the key 0123456789ab is not available to this build)"
    )
    assert [c.anchor for c in outcome.changes] == ["s1c1", "s2c1", "s3c1"]
    assert outcome.rechecked is not None
    assert [c.verdict for c in outcome.rechecked.citations()][3] == "forged"


def test_reaudit_against_the_same_snapshot_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "snapshots" / "demo-1.duckdb"
    write_snapshot(path, demo_records(second=False))
    with DuckDBCorpus(path) as corpus:
        report = audit_answer(ANSWER, corpus, KEYS)
        again = audit_answer(ANSWER, corpus, KEYS)
    assert compare_reports(report, again) == ()


def test_the_reaudit_page_and_the_index_show_the_changes(
    lineage: tuple[Path, Path, Report], tmp_path: Path
) -> None:
    reports, snapshots, _ = lineage
    out = tmp_path / "public"
    build_site(reports, snapshots, out, env={"SOURCE_DATE_EPOCH": "0"}, trust=TRUST)
    page = (out / "reaudit.html").read_text(encoding="utf-8")
    assert '<a href="reports/answer.html#s1c1">sentence 1, citation 1</a>' in page
    assert "<strong>newly retracted</strong>" in page
    assert "<strong>new version</strong>" in page
    assert "<strong>withdrawn</strong>" in page
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "3 cited passages have changed status since publication" in index
    report = (out / "reports/answer.html").read_text(encoding="utf-8")
    assert "3 citations changed status since publication." in report


def _citation(
    verdict: str = "ok", flags: tuple[tuple[str, str | None], ...] = (), **record: Any
) -> CitationResult:
    view = None
    if record:
        view = RecordView(record_id="pmid:99000001", source="pubmed", **record)
    return CitationResult(
        raw="[h]",
        handle="pmid:99000001/abstract.1~abcde",
        verdict=verdict,  # type: ignore[arg-type]
        flags=[Flag(name=n, detail=d) for n, d in flags],  # type: ignore[arg-type]
        record=view,
    )


@pytest.mark.parametrize(
    ("was", "now", "kinds"),
    [
        (_citation(), _citation(), []),
        (_citation(), _citation("unavailable"), ["unavailable"]),
        (_citation(), _citation("quote_mismatch"), ["now quote_mismatch"]),
        (
            _citation(flags=(("expression_of_concern", "pmid:99000005"),)),
            _citation(),
            ["expression of concern lifted"],
        ),
        (
            _citation(flags=(("version_changed", "current 2"),)),
            _citation(flags=(("version_changed", "current 3"),)),
            ["new version"],
        ),
        (
            _citation(current_version="1"),
            _citation(current_version="2"),
            ["new version"],
        ),
        (
            _citation(current_version="1"),
            _citation(current_version="1", withdrawn=True),
            ["withdrawn"],
        ),
    ],
)
def test_each_kind_of_change_is_named(
    was: CitationResult, now: CitationResult, kinds: list[str]
) -> None:
    assert compare_citation(was, now)[0] == kinds
