"""Report models: the published JSON Schema matches the committed golden copy."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from pydantic import ValidationError

import audit
from audit.citations import parse_answer
from audit.engine import audit_answer
from audit.errors import InputError
from audit.report import (
    FAIL_ON_ITEMS,
    ByStatus,
    ByVerdict,
    CitationResult,
    KeyInfo,
    Metrics,
    Report,
    SentenceResult,
    SnapshotInfo,
    fail_on_items,
    partial_note,
    report_json_schema_text,
    snapshot_info,
)
from audit.support.model import SUPPORT_LABELS
from audit.support.rules import RulesJudge
from audit.support.run import with_support
from tests.audit.planted import KEYRING, h, make_corpus

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


def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(GOLDEN.read_text(encoding="utf-8")))


def test_a_report_without_support_is_valid_and_says_support_was_not_checked() -> None:
    corpus = make_corpus()
    answer = f"Zentravir is safe [{h('pmid:99000001/abstract.3')}]."
    plain = audit_answer(parse_answer(answer), corpus, KEYRING)
    data = json.loads(plain.model_dump_json())
    _validator().validate(data)
    assert data["support_checked"] is False
    assert "support" not in data["sentences"][0]["citations"][0]
    judged = json.loads(with_support(plain, corpus, RulesJudge()).model_dump_json())
    _validator().validate(judged)
    assert judged["support_checked"] is True
    assert judged["sentences"][0]["citations"][0]["support"]["label"] in SUPPORT_LABELS


def test_an_incomplete_report_is_valid_against_the_schema_and_counts_checkable_citations() -> None:
    corpus = make_corpus(openfda="failed")
    label = h("setid:5eed0001-0000-4000-8000-000000000999@4/label.boxed_warning.1")
    answer = f"Zentravir is safe [{h('pmid:99000001/abstract.3')}]. Labels agree [{label}]."
    data = json.loads(audit_answer(parse_answer(answer), corpus, KEYRING).model_dump_json())
    _validator().validate(data)
    assert (data["verdict"], data["verdict_reasons"]) == (
        "incomplete",
        ["incomplete: 1 unavailable citation", "warn: 1 sentence with only invalid citations"],
    )
    metrics = data["metrics"]
    assert (metrics["citations"], metrics["checkable_citations"]) == (2, 1)
    assert metrics["citation_validity"] == 1.0


def test_a_report_from_before_contract_0_2_still_loads() -> None:
    data = json.loads(_report().model_dump_json())
    del data["support_checked"], data["metrics"]["checkable_citations"]
    old = Report.model_validate(data)
    assert (old.support_checked, old.metrics.checkable_citations) == (False, None)


def test_contract_0_3_adds_the_references_section_and_its_fail_on_tiers() -> None:
    schema = json.loads(report_json_schema_text())
    assert "references" in schema["properties"] and "references" not in schema["required"]
    items = schema["properties"]["fail_on"]["items"]["enum"]
    assert items[-4:] == ["hallucinated", "mismatch", "unresolved", "incomplete"]
    assert "needs_review" not in items  # never fails


def test_a_report_from_before_contract_0_3_loads_without_references() -> None:
    data = json.loads(_report().model_dump_json())
    assert "references" not in data  # a handle-only report is as before
    assert Report.model_validate(data).references is None


def test_contract_0_4_adds_the_reference_entry_sentence_kind() -> None:
    assert audit.CONTRACT_VERSION == "0.4.0"
    schema = json.loads(report_json_schema_text())
    kinds = schema["$defs"]["SentenceResult"]["properties"]["kind"]["enum"]
    assert kinds[-1] == "reference_entry"


def test_the_contract_version_names_the_incomplete_verdict() -> None:
    schema = json.loads(report_json_schema_text())
    assert schema["properties"]["verdict"]["enum"] == ["pass", "warn", "incomplete", "fail"]
    assert schema["properties"]["fail_on"]["items"]["enum"][-1] == "incomplete"


def test_fail_on_items_keeps_the_values_in_order_and_names_the_option_of_an_unknown_one() -> None:
    assert fail_on_items(["retracted", "forged", "retracted"]) == [
        "retracted",
        "forged",
        "retracted",
    ]
    assert fail_on_items([]) == []
    listed = ", ".join(FAIL_ON_ITEMS)
    with pytest.raises(InputError) as raised:
        fail_on_items(["forged", "fabricated"])
    assert raised.value.message == f"unknown fail_on value 'fabricated' (expected one of {listed})"
    with pytest.raises(InputError) as raised:
        fail_on_items(["ok"], option="--fail-on")
    assert raised.value.message == f"unknown --fail-on value 'ok' (expected one of {listed})"


def test_snapshot_info_keeps_its_id_and_date_and_decides_partial_from_the_statuses() -> None:
    info = snapshot_info(
        "demo",
        "snapshots/demo/x.duckdb",
        "ab" * 32,
        {"pubmed": "ok", "crossref": "partial", "openfda": "failed"},
        snapshot_id="demo-2",
        created_at="2025-06-02T00:00:00Z",
    )
    assert (info.snapshot_id, info.created_at) == ("demo-2", "2025-06-02T00:00:00Z")
    assert info.partial and info.incomplete_sources == {"crossref": "partial", "openfda": "failed"}
    assert partial_note(info) == (
        "partial snapshot (crossref partial, openfda failed): records whose refresh failed are "
        "as an earlier snapshot of the lineage had them"
    )
    complete = snapshot_info("demo", "p", "ab" * 32, {"pubmed": "ok"})
    assert (complete.snapshot_id, complete.created_at, complete.partial) == (None, None, False)
    assert partial_note(complete) is None


def test_a_partial_snapshot_that_names_no_source_says_requests_failed() -> None:
    """A report read back (``partial`` true, no source named) still says why it is partial."""
    info = SnapshotInfo(name="demo", path="p", sha256="ab" * 32, partial=True)
    assert partial_note(info) == (
        "partial snapshot (requests failed): records whose refresh failed are "
        "as an earlier snapshot of the lineage had them"
    )
