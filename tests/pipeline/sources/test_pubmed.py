"""PubMed efetch/esearch parsing, flags and relations, and the harvest functions."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs

import httpx
import pytest
from hypothesis import given

from pipeline.errors import ParseError
from pipeline.http import HttpClient
from pipeline.records import REF_TYPE_KINDS, RELATION_KINDS, Flags, Passage, Relation
from pipeline.settings import Settings
from pipeline.sources import crossref, pubmed
from tests.conftest import reference_files, requires_reference
from tests.pipeline.sources.fuzzing import (
    FUZZ_SETTINGS,
    REFERENCE_SETTINGS,
    check_fails_closed,
    mutated,
    seeds,
)
from tests.pipeline.sources.helpers import (
    FIXTURES,
    assert_conformant,
    fixture,
    mock_client,
    wrapper_body,
)


def test_book_chapter_is_a_record_with_labelled_sections() -> None:
    [record] = pubmed.parse(fixture("pubmed", "book-chapter.xml")).records
    assert record.record_id == "pmid:99100001"
    assert record.content_type == "book_chapter"
    assert record.title == "Farrow Syndrome (synthetic chapter)"
    assert record.journal == "FarrowReviews (synthetic)"
    assert record.year == 2021
    assert record.authors == ["Chapterwright N"]
    assert record.metadata == {
        "book_title": "FarrowReviews (synthetic)",
        "publisher": "Invented University Press",
    }
    assert [(p.path, p.section) for p in record.passages] == [
        ("title", "Title"),
        ("abstract.1", "CLINICAL CHARACTERISTICS"),
        ("abstract.2", "DIAGNOSIS/TESTING"),
        ("abstract.3", "MANAGEMENT"),
    ]
    assert record.passages[1].text == (
        "Farrow syndrome is an invented disorder characterised by recurrent flares."
    )
    assert record.flags == Flags(retracted=False, expression_of_concern=False, preprint=False)


def test_erratum_inline_markup_ids_status_and_retraction_without_pmid() -> None:
    article, erratum, retracted = pubmed.parse(fixture("pubmed", "erratum.xml")).records
    # <sub>3A4</sub> has no all-subscript spelling ("A"): notation; <sup>th</sup> has one
    assert article.title == (
        "Zentravir clearance and CYP_(3A4) in children: the 10\u1d57\u02b0 invented report."
    )
    assert article.passages[1] == Passage(
        path="abstract.1",
        section="Abstract",
        text="Clearance of zentravir was 1.2\u00a0L/h in an invented cohort of 40 children; "
        "exposure rose \u00b2-fold with CYP_(3A4) inhibitors.",
    )
    assert (article.doi, article.pmcid) == ("10.5555/fixture.0002", "PMC99100002")
    assert article.status == "In-Process"
    assert article.year == 2022  # from MedlineDate "2022 Jan-Feb"
    assert article.authors == ["Invented Kinetics Group"]
    assert article.relations == [
        Relation(
            kind="erratum_in",
            target="pmid:99100003",
            source="pubmed",
            detail="Demo J Invent Med. 2022;1:e9.",
        ),
        Relation(  # every RefType is kept as a relation, CommentIn included
            kind="comment_in",
            target="pmid:99100099",
            source="pubmed",
            detail="Demo J Invent Med. 2022;1:e10.",
        ),
    ]
    assert article.flags.retracted is False
    assert erratum.content_type == "erratum"
    assert erratum.doi == "10.5555/fixture.0003"  # from ELocationID
    assert erratum.status == "PubMed-not-MEDLINE"
    assert [(r.kind, r.target) for r in erratum.relations] == [("erratum_for", "pmid:99100002")]
    assert retracted.flags.retracted is True  # RetractionIn even without a notice PMID
    assert [(r.kind, r.target) for r in retracted.relations] == [
        ("retraction_in", "doi:10.5555/fixture.notice")
    ]


def test_expression_of_concern_article_and_notice() -> None:
    article, notice = pubmed.parse(fixture("pubmed", "expression-of-concern.xml")).records
    assert article.flags == Flags(retracted=False, expression_of_concern=True, preprint=True)
    assert [(p.path, p.section, p.text) for p in article.passages[1:]] == [
        ("abstract.1", "OBJECTIVE", "To test zentravir."),
        ("abstract.2", "RESULTS", "Invented results."),
    ]
    assert notice.content_type == "expression_of_concern"
    assert notice.flags == Flags(retracted=False, expression_of_concern=False, preprint=False)
    assert [(r.kind, r.target) for r in notice.relations] == [
        ("expression_of_concern_for", "pmid:99100005")
    ]


def test_esearch_xml_and_json() -> None:
    result = pubmed.parse(fixture("pubmed", "esearch.xml"))
    assert (result.ids, result.count, result.next) == (["99100001", "99100002"], 3, "2")
    assert result.meta == {"webenv": "MCID_synthetic_webenv", "querykey": "1"}
    body = {"esearchresult": {"count": "2", "retstart": "0", "idlist": ["1", "2"]}}
    done = pubmed.parse(json.dumps(body))
    assert (done.ids, done.count, done.next) == (["1", "2"], 2, None)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "truncated.xml",
            "expected PubMed XML (efetch PubmedArticleSet or esearch) but the XML is not "
            "well-formed: Premature end of data in tag PubmedArticle line 5",
        ),
        (
            "bomb.xml",
            "expected PubMed XML (efetch PubmedArticleSet or esearch) but the XML declares "
            "entities (refused: entity expansion and external entities are not allowed)",
        ),
        (
            "external-entity.xml",
            "expected PubMed XML (efetch PubmedArticleSet or esearch) but the XML declares "
            "entities (refused: entity expansion and external entities are not allowed)",
        ),
        (
            "error-page.html",
            "expected PubMed XML (efetch PubmedArticleSet or esearch) but got an HTML page "
            "('503 Service Temporarily Unavailable'); the service may have answered with an "
            "error page",
        ),
        ("rate-limit.json", "NCBI answered with an error: API rate limit exceeded"),
    ],
)
def test_bad_bodies_are_one_line_parse_errors(name: str, message: str) -> None:
    with pytest.raises(ParseError) as caught:
        pubmed.parse(fixture("pubmed", name))
    assert caught.value.message == message


def test_other_xml_is_refused() -> None:
    with pytest.raises(ParseError) as caught:
        pubmed.parse("<article/>")
    assert caught.value.message == (
        "expected PubMed XML (PubmedArticleSet or eSearchResult) but got <article>"
    )


def _esearch(request: httpx.Request) -> httpx.Response:
    params = request.url.params
    start, size = int(params["retstart"]), int(params["retmax"])
    ids = [str(99000000 + i) for i in range(start, min(start + size, 1300))]
    body = {"esearchresult": {"count": "1300", "retstart": str(start), "idlist": ids}}
    return httpx.Response(200, json=body)


def test_search_ids_pages_to_the_limit() -> None:
    seen: list[dict[str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(dict(request.url.params))
        return _esearch(request)

    with mock_client(handler) as http:
        ids = pubmed.search_ids(http, "zentravir", limit=1200, mindate="2020", maxdate="2024/12/31")
    assert len(ids) == 1200 and ids[0] == "99000000" and ids[-1] == "99001199"
    assert [(p["retstart"], p["retmax"]) for p in seen] == [
        ("0", "500"),
        ("500", "500"),
        ("1000", "200"),
    ]
    assert seen[0]["datetype"] == "pdat" and seen[0]["mindate"] == "2020"
    with mock_client(handler) as http:
        assert len(pubmed.search_ids(http, "zentravir", limit=5000)) == 1300


def test_fetch_records_batches_and_posts_large_batches() -> None:
    calls: list[tuple[str, list[str]]] = []
    body = fixture("pubmed", "erratum.xml")

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            ids = parse_qs(request.content.decode())["id"][0].split(",")
        else:
            ids = request.url.params["id"].split(",")
        calls.append((request.method, ids))
        return httpx.Response(200, content=body)

    with mock_client(handler) as http:
        few = pubmed.fetch_records(http, ["99100003", "99100002", "99100002"])
        pubmed.fetch_records(http, [str(99000000 + i) for i in range(700)])
    assert calls[0] == ("GET", ["99100002", "99100003"])  # deduplicated, numeric order
    assert [(m, len(ids)) for m, ids in calls[1:]] == [("POST", 500), ("GET", 200)]
    assert [r.record_id for r in few] == ["pmid:99100002", "pmid:99100003", "pmid:99100004"]


@requires_reference
@pytest.mark.parametrize("path", reference_files("pubmed"), ids=lambda p: p.name)
def test_reference_responses_conform(path: Path) -> None:
    body, url = wrapper_body(path)
    result = pubmed.parse(body, url=url)
    assert_conformant(result)
    assert result.records or result.ids


@requires_reference
def test_wakefield_is_retracted_with_its_notice() -> None:
    found = {}
    for path in reference_files("pubmed"):
        body, url = wrapper_body(path)
        found.update({r.record_id: r for r in pubmed.parse(body, url=url).records})
    record = found["pmid:9500320"]
    assert record.flags.retracted is True
    assert ("retraction_in", "pmid:15016483") in [(r.kind, r.target) for r in record.relations]
    assert found["pmid:30831578"].flags.retracted is False


@pytest.mark.live
def test_live_pubmed_smoke() -> None:
    with HttpClient(Settings.from_env()) as http:
        ids = pubmed.search_ids(http, '"Retracted Publication"[PT] AND autism', limit=2)
        records = pubmed.fetch_records(http, ids)
    assert records and all(r.flags.retracted for r in records)


# -- fuzzing and refusals ----------------------------------------------------------------------
PUBMED_SEEDS = seeds("pubmed")


@FUZZ_SETTINGS
@given(mutated(PUBMED_SEEDS))
def test_fuzzed_pubmed_bodies_give_records_or_a_parse_error(body: bytes) -> None:
    check_fails_closed(pubmed.parse, body)


@requires_reference
@REFERENCE_SETTINGS
@given(mutated(seeds("pubmed", extra=reference_files("pubmed"))))
def test_fuzzed_reference_pubmed_bodies_give_records_or_a_parse_error(body: bytes) -> None:
    check_fails_closed(pubmed.parse, body)


def test_esearch_idlist_of_the_wrong_type_is_a_parse_error_naming_the_field() -> None:
    body = b'{"esearchresult": {"count": "1", "idlist": 1.5}}'
    with pytest.raises(ParseError) as caught:
        pubmed.parse(body)
    assert caught.value.message == "pubmed: esearchresult.idlist must be a list, got a number"


def test_esearch_ids_that_break_the_pmid_grammar_are_refused_and_counted() -> None:
    body = b'{"esearchresult": {"count": "3", "idlist": ["99000001", "Health Literacy", "0"]}}'
    result = pubmed.parse(body)
    assert result.ids == ["99000001"]
    assert [(r.reason, r.value) for r in result.refused] == [
        ("pmid must be 1 to 10 digits without a leading zero", "Health Literacy"),
        ("pmid must be 1 to 10 digits without a leading zero", "0"),
    ]


def test_an_article_with_an_invalid_pmid_is_refused_and_the_others_are_kept() -> None:
    good = fixture("pubmed", "erratum.xml").decode()
    kept = [r.record_id for r in pubmed.parse(good).records]
    bad = good.replace('<PMID Version="1">', '<PMID Version="1">x', 1)
    assert bad != good
    result = pubmed.parse(bad)
    assert [r.record_id for r in result.records] == kept[1:]
    assert [(r.reason, r.value) for r in result.refused] == [
        ("pmid must be 1 to 10 digits without a leading zero", "x" + kept[0].removeprefix("pmid:"))
    ]


@pytest.mark.parametrize(
    "pmcid",
    ["PMC99\n100002", "PMC" + "9" * 65536, "PMC1/../../x?y=", "PMC0"],
    ids=["newline", "64k", "path", "zero"],
)
def test_an_article_pmcid_that_breaks_the_grammar_is_dropped_and_the_article_kept(
    pmcid: str,
) -> None:
    good = fixture("pubmed", "erratum.xml").decode()
    assert pubmed.parse(good).records[0].pmcid == "PMC99100002"
    bad = good.replace(">PMC99100002<", f">{pmcid}<", 1)
    assert bad != good
    [first, *_] = pubmed.parse(bad).records
    assert (first.record_id, first.pmcid) == ("pmid:99100002", None)


def test_every_comments_corrections_ref_type_is_kept_as_a_relation() -> None:
    linked, _ = pubmed.parse(fixture("pubmed", "comments-corrections.xml")).records
    got = [(r.kind, r.target) for r in linked.relations]
    expected = [(kind, f"pmid:{99100101 + n}") for n, kind in enumerate(REF_TYPE_KINDS.values())]
    expected.append(("new_kind_in", f"pmid:{99100101 + len(REF_TYPE_KINDS)}"))  # a later DTD
    assert got == expected
    assert ("update_of", "pmid:99100112") in got  # UpdateOf, once dropped
    assert set(REF_TYPE_KINDS.values()) <= set(RELATION_KINDS)
    # links other than RetractionIn / ExpressionOfConcernIn change no flag of this record
    assert linked.flags.expression_of_concern is True
    assert linked.flags.retracted is True  # RetractionIn and RetractedandRepublishedIn


def test_a_retraction_found_through_pubmed_and_crossref_is_counted_once() -> None:
    _, retracted = pubmed.parse(fixture("pubmed", "comments-corrections.xml")).records
    body, url = wrapper_body(FIXTURES / "crossref" / "updates-retraction.json")
    notices = crossref.parse(body, url=url).notices
    merged = crossref.apply_relations(retracted, notices)
    retractions = [r for r in merged.relations if r.kind == "retraction_in"]
    assert [(r.target, r.source) for r in retractions] == [("pmid:99100131", "pubmed")]
    assert retractions[0].date is not None  # Crossref's date joins PubMed's relation
    assert [(r.kind, r.target) for r in merged.relations] == [
        ("retraction_in", "pmid:99100131"),
        ("expression_of_concern_in", "doi:10.5555/xref.0005"),
    ]
    assert merged.flags.retracted is True
    assert crossref.apply_relations(merged, notices) == merged  # idempotent


@requires_reference
def test_reference_wakefield_retraction_counts_once_across_pubmed_and_crossref() -> None:
    """PMID 9500320: PubMed's RetractionIn 20137807 names doi 10.1016/S0140-6736(10)60175-4,
    the notice Crossref's ``updates:`` filter returns for the article's DOI."""
    paths = {p.name: p for p in reference_files("pubmed") + reference_files("crossref")}
    body, _ = wrapper_body(paths["efetch-30831578_9500320.json"])
    [record] = [r for r in pubmed.parse(body).records if r.pmid == "9500320"]
    body, url = wrapper_body(paths["works-updates-10_1016_s0140_6736_97_11096_0.json"])
    merged = crossref.apply_relations(record, crossref.parse(body, url=url).notices)
    retractions = [r.target for r in merged.relations if r.kind == "retraction_in"]
    assert len(retractions) == len(set(retractions))
    assert "doi:10.1016/s0140-6736(10)60175-4" not in retractions
    assert "pmid:20137807" in retractions


# -- NCBI's history server (large searches) ----------------------------------------------------
def _history_api(
    efetch: bytes, *, webenv: bool = True
) -> Callable[[httpx.Request], httpx.Response]:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("esearch.fcgi"):
            result: dict[str, object] = {"count": "1200", "idlist": [], "retstart": "0"}
            if webenv:
                result |= {"webenv": "MCID_synthetic", "querykey": "1"}
            return httpx.Response(200, json={"esearchresult": result})
        return httpx.Response(200, content=efetch, headers={"content-type": "text/xml"})

    return handler


def test_a_large_search_without_a_webenv_is_paged_by_id() -> None:
    asked: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.path.rsplit("/", 1)[1])
        start = int(request.url.params["retstart"])
        ids = [str(99000001 + i) for i in range(start, min(start + 500, 1200))]
        result = {"count": "1200", "idlist": ids, "retstart": str(start)}
        return httpx.Response(200, json={"esearchresult": result})

    with mock_client(handler) as http:
        found = pubmed.search(http, "zentravir", limit=1200)
    assert found == [str(99000001 + i) for i in range(1200)]
    assert asked == ["esearch.fcgi"] * 3


def test_a_history_page_without_records_fails_closed_never_short() -> None:
    empty = b'<?xml version="1.0" ?>\n<PubmedArticleSet></PubmedArticleSet>'
    with mock_client(_history_api(empty)) as http, pytest.raises(ParseError) as info:
        pubmed.search(http, "zentravir", limit=1200)
    assert str(info.value) == (
        "PubMed's history server answered no record at retstart 0 of 1200 for 'zentravir'"
    )


def test_an_expired_history_fails_with_ncbis_own_error() -> None:
    gone = b"<eFetchResult><ERROR>Unable to obtain query #1</ERROR></eFetchResult>"
    with mock_client(_history_api(gone)) as http, pytest.raises(ParseError) as info:
        pubmed.search(http, "zentravir", limit=1200)
    assert str(info.value) == "NCBI answered with an error: Unable to obtain query #1"
