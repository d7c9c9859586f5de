"""The engine builds report models without validating them (``audit.report.assemble``, for speed):
every report it makes must be exactly the report pydantic would have validated."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import BaseModel

from audit.citations import parse_answer
from audit.duckdb_corpus import DuckDBCorpus
from audit.engine import AnswerInput, AuditInput, CitationInput, audit_many, judge_citations
from audit.report import Flag, Report, assemble
from tests.audit.planted import KEYRING, OTHER, SETID, h, make_corpus, write_snapshot

ANSWER = " ".join(
    [
        f'Quoted [{h("pmid:99000001/abstract.3")} "312 children were diagnosed"].',
        f'Misquoted [{h("pmid:99000001/abstract.3")} "412 children were diagnosed"].',
        f'Empty quote [{h("pmid:99000001/abstract.3")} "  "].',
        f"Retracted [{h('pmid:99000002/abstract.1')}] and [{h('pmid:99000007/abstract.1')}].",
        f"Concern [{h('pmid:99000004/abstract.1')}]; preprint [{h('ppr:PPR990001@1/abstract.1')}].",
        f'Old trial [{h("nct:NCT99000001@2025-01-15/trial.brief_summary.1")} "20 mg daily"].',
        f'Now [{h("nct:NCT99000001@2025-01-15/trial.brief_summary.1")} "10 mg daily"].',
        f"Gone arm [{h('nct:NCT99000001@2025-01-15/trial.arms.2')}].",
        f"Not retained [{h(f'setid:{SETID}@3/label.boxed_warning.1')}].",
        f"Withdrawn [{h('pmid:99000010/abstract.1')}]; unknown [{h('pmid:99000999/abstract.1')}].",
        f'Versions [{h("pmid:99000020/abstract.1")} "40 patients"].',
        f"Forged [{h('pmid:99000001/abstract.4', OTHER)}]; malformed [pmid:1-x].",
        "# A heading",
        "- a list item without a citation",
        "An uncited sentence.",
    ]
)


def _same_as_validated(model: BaseModel) -> None:
    """``model`` equals the model validated from its own dump, all the way down."""
    validated = type(model).model_validate(model.model_dump())
    assert validated == model
    assert validated.model_dump_json() == model.model_dump_json()
    for name in type(model).model_fields:
        mine, theirs = getattr(model, name), getattr(validated, name)
        assert type(mine) is type(theirs), name
        if isinstance(mine, BaseModel):
            _same_as_validated(mine)
        elif isinstance(mine, list):
            for item in mine:
                if isinstance(item, BaseModel):
                    _same_as_validated(item)
    assert model.model_fields_set == validated.model_fields_set


def _reports(corpus: object) -> list[Report]:
    now = datetime(2025, 6, 2, tzinfo=UTC)
    inputs = [AuditInput("a.md", parse_answer(ANSWER)), AuditInput("b.md", AnswerInput())]
    return list(audit_many(inputs, corpus, KEYRING, now=now, fail_on=["retracted"]))  # type: ignore[arg-type]


def test_engine_reports_are_the_validated_reports_in_memory() -> None:
    reports = _reports(make_corpus())
    verdicts = {c.verdict for c in reports[0].citations()}
    assert verdicts == {"ok", "quote_mismatch", "withdrawn", "unavailable", "forged", "malformed"}
    flags = {f.name for c in reports[0].citations() for f in c.flags}
    assert flags == {"retracted", "expression_of_concern", "preprint", "version_changed"}
    for report in reports:
        _same_as_validated(report)


def test_engine_reports_are_the_validated_reports_from_a_snapshot(tmp_path: Path) -> None:
    path = write_snapshot(make_corpus(), tmp_path / "planted.duckdb")
    loose = [
        CitationInput.from_text(h("pmid:99000001/abstract.3"), "312 children"),
        CitationInput.from_text(h("pmid:99000001/abstract.3"), "412 children"),
        CitationInput.from_text("pmid:1-x"),
    ]
    with DuckDBCorpus(path) as corpus:
        reports = _reports(corpus)
        results = judge_citations(loose, corpus, KEYRING)
    assert [r.verdict for r in results] == ["ok", "quote_mismatch", "malformed"]
    for model in [*reports, *results]:
        _same_as_validated(model)


def test_assemble_is_construction_without_validation() -> None:
    flag = assemble(Flag, name="retracted", detail="marked retracted by the source")
    assert flag == Flag(name="retracted", detail="marked retracted by the source")
    assert flag.model_fields_set == {"name", "detail"}
    with pytest.raises(ValueError, match="frozen"):
        flag.name = "preprint"  # type: ignore[misc]
