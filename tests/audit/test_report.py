"""Report models: the published JSON Schema matches the committed golden copy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

import audit
from audit.report import (
    ByStatus,
    ByVerdict,
    CitationResult,
    KeyInfo,
    Metrics,
    Report,
    SentenceResult,
    SnapshotInfo,
    report_json_schema_text,
)

GOLDEN = Path(audit.__file__).parent / "schemas" / "report.schema.json"


def _report() -> Report:
    citation = CitationResult(
        raw="[pmid:99000001/abstract.3~abcde]",
        handle="pmid:99000001/abstract.3~abcde",
        record_id="pmid:99000001",
        verdict="forged",
        detail="check code does not verify under any key of the keyring",
    )
    return Report(
        contract_version=audit.CONTRACT_VERSION,
        tool_version=audit.__version__,
        created_at="2025-01-01T00:00:00Z",
        source="answer.md",
        verdict="fail",
        verdict_reasons=["1 fabricated citation"],
        snapshot=SnapshotInfo(name="demo", path="demo.duckdb", sha256="0" * 64),
        key=KeyInfo(fingerprint="abcd1234", demo=True),
        metrics=Metrics(
            fabricated=1,
            retracted_cited=0,
            sentences=1,
            cited_sentences=0,
            quotes=0,
            verbatim_quotes=0,
            citations=1,
            valid_citations=0,
            citation_validity=0.0,
            by_verdict=ByVerdict(forged=1),
            by_status=ByStatus(invalid_only=1),
        ),
        sentences=[
            SentenceResult(index=1, text="A claim.", status="invalid_only", citations=[citation])
        ],
    )


def test_committed_schema_matches_the_models() -> None:
    # Regenerate with: citeseal schema report > audit/schemas/report.schema.json
    assert GOLDEN.read_text(encoding="utf-8") == report_json_schema_text()


def test_schema_names_the_contract_keys() -> None:
    schema = json.loads(report_json_schema_text())
    assert {"contract_version", "verdict", "snapshot", "key", "metrics", "sentences"} <= set(
        schema["required"]
    )
    citation = schema["$defs"]["CitationResult"]["properties"]
    assert citation["verdict"]["enum"] == [
        "malformed",
        "forged",
        "unavailable",
        "withdrawn",
        "quote_mismatch",
        "ok",
    ]
    assert citation["checked_against"]["anyOf"][0]["enum"] == ["issued", "current"]


def test_report_round_trips_through_json() -> None:
    report = _report()
    again = Report.model_validate_json(report.model_dump_json())
    assert again == report
    assert [c.verdict for c in again.citations()] == ["forged"]


def test_unknown_verdict_is_rejected() -> None:
    data = json.loads(_report().model_dump_json())
    data["sentences"][0]["citations"][0]["verdict"] = "fine"
    with pytest.raises(ValidationError):
        Report.model_validate(data)
