"""The pure core of ``scale ingest``: a record's events → its rows (no Spark)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.scale.generate import article_xml, retracted_xml
from pipeline.scale.history import Event, Rows, file_events, generation_ids, record_rows
from pipeline.sources.pubmed_files import InputFile

GENERATIONS = ["c-base", "c-u1", "c-u2"]
PMID = 99_500_001
RID = f"pmid:{PMID}"


def _file(articles: list[str], deleted: tuple[int, ...] = ()) -> bytes:
    dele = "".join(f"<PMID>{p}</PMID>" for p in deleted)
    tail = f"<DeleteCitation>{dele}</DeleteCitation>" if deleted else ""
    return f"<PubmedArticleSet>{''.join(articles)}{tail}</PubmedArticleSet>".encode()


def events(
    generation: int, number: int, *articles: str, deleted: tuple[int, ...] = ()
) -> list[Event]:
    item = InputFile(f"f{number}.xml", Path(f"f{number}.xml"), generation)
    _, found = file_events(number, item, _file(list(articles), deleted))
    return [event for rid, event in found if rid == RID]


def rows_of(*groups: list[Event]) -> Rows:
    return record_rows(RID, [e for group in groups for e in group], GENERATIONS)


def test_a_revision_is_a_second_version_and_the_first_is_carried() -> None:
    rows = rows_of(events(0, 0, article_xml(PMID)), events(1, 1, article_xml(PMID, revision=1)))
    versions = [(v[1], v[2], v[4], v[5], v[6]) for v in rows.versions]
    assert versions == [
        ("1", 1, "c-base", "c-base", "carried"),
        ("2", 2, "c-u1", "c-u2", "harvest"),
    ]
    assert [r[1] for r in rows.records] == ["1", "2"]
    assert {p[1] for p in rows.passages} == {"1", "2"}
    assert rows.state == [(RID, "pubmed", "2", False, None)]


def test_the_same_content_again_is_the_same_version() -> None:
    rows = rows_of(events(0, 0, article_xml(PMID)), events(2, 2, article_xml(PMID)))
    assert [(v[1], v[5], v[6]) for v in rows.versions] == [("1", "c-u2", "harvest")]
    assert len(rows.records) == 1


def test_coming_back_to_an_earlier_content_is_that_version() -> None:
    rows = rows_of(
        events(0, 0, article_xml(PMID)),
        events(1, 1, article_xml(PMID, revision=1)),
        events(2, 2, article_xml(PMID)),
    )
    assert [(v[1], v[5]) for v in rows.versions] == [("1", "c-u2"), ("2", "c-u1")]
    assert rows.state[0][2] == "1"


def test_a_deletion_withdraws_and_keeps_the_versions() -> None:
    rows = rows_of(events(0, 0, article_xml(PMID)), events(1, 1, deleted=(PMID,)))
    assert rows.state == [(RID, "pubmed", "1", True, "c-u1")]
    assert [(v[1], v[5], v[6]) for v in rows.versions] == [("1", "c-base", "carried")]


def test_a_record_that_comes_back_is_no_longer_withdrawn() -> None:
    rows = rows_of(
        events(0, 0, article_xml(PMID)),
        events(1, 1, deleted=(PMID,)),
        events(2, 2, article_xml(PMID)),
    )
    assert rows.state == [(RID, "pubmed", "1", False, None)]


def test_a_deletion_follows_the_records_of_its_file() -> None:
    rows = rows_of(events(0, 0, article_xml(PMID), deleted=(PMID,)))
    assert rows == Rows()  # never held: no row at all


def test_the_last_file_of_a_generation_wins() -> None:
    rows = rows_of(events(0, 0, article_xml(PMID)), events(0, 1, article_xml(PMID, revision=1)))
    assert len(rows.versions) == 1 and rows.versions[0][4] == "c-base"
    revised = events(0, 1, article_xml(PMID, revision=1))[0]
    assert rows.versions[0][3] == revised.content_hash


def test_relations_are_kept_from_the_generation_they_came_in() -> None:
    rows = rows_of(events(0, 0, article_xml(PMID)), events(1, 1, retracted_xml(PMID, 99_600_000)))
    assert rows.relations == [
        (RID, "retraction_in", "pmid:99600000", "pubmed", "Synthetic J. 2025", None, "c-u1")
    ]
    assert rows.records[-1][15] is True  # the retracted flag of the second version


def test_generation_ids_name_the_last_file_of_each() -> None:
    files = [
        InputFile("p01.xml.gz", Path("b/p01.xml.gz"), 0),
        InputFile("p02.xml.gz", Path("b/p02.xml.gz"), 0),
        InputFile("p03.xml", Path("u/p03.xml"), 1),
    ]
    assert generation_ids("pubmed", files) == ["pubmed-p02", "pubmed-p03"]


@pytest.mark.parametrize("bad", ["0", "abc"])
def test_a_deleted_pmid_that_cannot_be_cited_is_refused_not_dropped(bad: str) -> None:
    item = InputFile("f.xml", Path("f.xml"), 1)
    body = (
        f"<PubmedArticleSet><DeleteCitation><PMID>{bad}</PMID></DeleteCitation></PubmedArticleSet>"
    )
    summary, found = file_events(0, item, body.encode())
    assert found == [] and sum(summary.refused.values()) == 1
