"""pipeline/sources/notices.py: a notice's relation turned round onto the record it concerns."""

from __future__ import annotations

from pipeline.records import Flags, Record, Relation
from pipeline.sources.notices import apply_notices


def _record(record_id: str, **fields: object) -> Record:
    return Record.model_validate({"record_id": record_id, "source": "europepmc", **fields})


def test_a_notice_named_by_doi_flags_the_record_and_applying_twice_changes_nothing() -> None:
    concerned = _record("pmcid:PMC99200040", doi="10.5555/EPMC.0040", flags=Flags())
    notice = _record(
        "pmcid:PMC99200041",
        title="Expression of concern: an invented article",
        content_type="expression_of_concern",
        relations=[
            Relation(kind="expression_of_concern_for", target="doi:10.5555/epmc.0040", source="x")
        ],
    )
    once = apply_notices([concerned, notice])
    assert once[1] == notice
    assert once[0].flags == Flags(expression_of_concern=True)  # True wins, unknowns stay
    assert once[0].relations == [
        Relation(
            kind="expression_of_concern_in",
            target="pmcid:PMC99200041",
            source="x",
            detail="Expression of concern: an invented article",
        )
    ]
    assert apply_notices(once) == once


def test_records_no_notice_names_come_back_unchanged() -> None:
    records = [
        _record(
            "pmid:99200042", relations=[Relation(kind="comment_on", target="pmid:1", source="x")]
        ),
        _record("pmid:99200043", flags=Flags(retracted=False)),
    ]
    assert apply_notices(records) == records
