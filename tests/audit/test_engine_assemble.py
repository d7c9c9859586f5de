"""The engine builds report models without validating them (``audit.report.assemble``, for speed):
every report it makes must be exactly the report pydantic would have validated."""

from __future__ import annotations

import copy
import pickle
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import BaseModel

from audit.citations import parse_answer
from audit.duckdb_corpus import DuckDBCorpus
from audit.engine import AnswerInput, AuditInput, CitationInput, audit_many, judge_citations
from audit.report import CitationResult, Flag, Report, assemble
from audit.support.model import SupportResult
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


def test_an_assembled_model_is_the_validated_one_to_pickle_and_compare() -> None:
    """Nothing but the fields in ``__dict__``, pydantic's private slot set: it pickles, copies
    and compares as the validated model does."""
    flag = assemble(Flag, name="retracted", detail=None)
    validated = Flag(name="retracted", detail=None)
    assert flag.__dict__ == validated.__dict__ == {"name": "retracted", "detail": None}
    assert flag.__pydantic_private__ is None
    assert pickle.loads(pickle.dumps(flag)) == validated  # noqa: S301 (our own bytes)
    assert copy.deepcopy(flag) == validated


def test_a_field_left_out_when_none_is_set_when_it_holds_a_value() -> None:
    """``support`` (and ``references``) is left out of the dump when None; an assembled
    citation that holds one has it set, as validation does, and dumps it."""
    result = next(c for c in _reports(make_corpus())[0].citations() if c.verdict == "ok")
    support = SupportResult(
        label="supported", reason="The passage states it.", judge="rules", judge_version="1"
    )
    values = dict(result.__dict__, support=support)
    assembled = assemble(CitationResult, **values)
    validated = CitationResult(**values)
    assert "support" in assembled.model_fields_set
    assert assembled.model_fields_set == validated.model_fields_set
    assert assembled.model_dump()["support"]["label"] == "supported"
    assert "support" not in assemble(CitationResult, **dict(values, support=None)).model_fields_set
