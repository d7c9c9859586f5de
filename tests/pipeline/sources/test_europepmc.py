"""Europe PMC search JSON (core/lite), preprints, JATS full text, cursor paging."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given

from pipeline.errors import ParseError, TerminalHarvestError
from pipeline.http import HttpClient
from pipeline.records import Flags, Refusal, Relation
from pipeline.settings import Settings
from pipeline.sources import europepmc
from pipeline.sources.jats import slugify
from pipeline.sources.markup import sections, strip_markup
from tests.conftest import reference_files, requires_reference
from tests.pipeline.sources.fuzzing import (
    FUZZ_SETTINGS,
    REFERENCE_SETTINGS,
    check_fails_closed,
    mutated,
    seeds,
)
from tests.pipeline.sources.helpers import assert_conformant, fixture, mock_client, wrapper_body


def test_lite_results_leave_retraction_unknown_and_skip_other_sources() -> None:
    result = europepmc.parse(fixture("europepmc", "search-lite.json"))
    assert result.ids == ["pmid:99200001", "pmcid:PMC99200002", "ppr:PPR99202"]
    assert (result.count, result.next) == (4, "AoJsyntheticCursor==")
    med, pmc, ppr = result.records
    assert med.title == "Zentravir in Farrow syndrome: an invented lite record."
    assert med.journal == "Demo J Invent Med"
    assert med.authors == ["Quillfeather A", "Marrowby T"]
    assert med.flags == Flags(retracted=None, expression_of_concern=None, preprint=False)
    assert pmc.metadata == {"open_access": True, "in_epmc": True}
    assert (ppr.version, ppr.content_type, ppr.flags.preprint) == ("2", "preprint", True)


def test_core_result_flags_relations_and_html_abstract() -> None:
    [record] = europepmc.parse(fixture("europepmc", "search-core-retracted.json")).records
    assert record.flags == Flags(retracted=True, expression_of_concern=False, preprint=False)
    assert record.relations == [
        Relation(
            kind="retraction_in",
            target="pmid:99200004",
            source="europepmc",
            detail="Demo J Invent Med. 2023;2:e1",
        ),
        Relation(
            kind="erratum_in",
            target="pmid:99200005",
            source="europepmc",
            detail="Demo J Invent Med. 2022;1:e7",
        ),
        Relation(
            kind="has_preprint",
            target="ppr:PPR99203",
            source="europepmc",
            detail="Demo preprint server",
        ),
        Relation(  # "Comment in" is kept too: every commentCorrection type is a relation
            kind="comment_in",
            target="pmid:99200006",
            source="europepmc",
            detail="Demo J Invent Med. 2022;1:e8",
        ),
    ]
    assert [(p.path, p.section, p.text) for p in record.passages[1:]] == [
        (
            "abstract.1",
            "Background",
            "Liver events were reported (p<0.05 & q<0.1) in an invented series.",
        ),
        ("abstract.2", "Conclusions", "Zentravir is hepatotoxic in 10\u00b2 of cases."),
    ]
    assert record.authors == ["Lindqvist P", "Invented Liver Group"]
    assert result_next_is_none()


def result_next_is_none() -> bool:
    return europepmc.parse(fixture("europepmc", "search-core-retracted.json")).next is None


def test_jats_full_text_paths() -> None:
    [record] = europepmc.parse(fixture("europepmc", "fulltext-nested.xml")).records
    assert record.record_id == "pmcid:PMC99200007"
    assert (record.pmid, record.year, record.content_type) == ("99200007", 2024, "full_text")
    assert record.authors == ["Quillfeather AJ", "Invented Consortium"]
    assert record.flags == Flags()
    assert [(p.path, p.section, p.text) for p in record.passages] == [
        ("title", "Title", "Nested sections in an invented article"),
        ("abstract.1", "Abstract", "An unstructured invented abstract. Second abstract paragraph."),
        ("body.main.p1", "Main", "A paragraph directly under body."),
        ("body.methodes_analyses.p1", "Méthodes & Analyses", "Outer methods paragraph."),
        (
            "body.methodes_analyses_statistics.p1",
            "Méthodes & Analyses / Statistics",
            "Inner one [1].",
        ),
        (
            "body.methodes_analyses_statistics.p2",
            "Méthodes & Analyses / Statistics",
            "Inner two ends here.",
        ),
        ("body.results.p1", "Results", "First results."),
        ("body.results.p2", "Results", "Item one. Item two."),
        ("body.results_2.p1", "Results", "A second section with the same title."),
        ("body.section.p1", "Untitled section", "Untitled section paragraph."),
    ]


def test_jats_without_pmcid_is_refused() -> None:
    with pytest.raises(ParseError) as caught:
        europepmc.parse(fixture("europepmc", "fulltext-no-pmcid.xml"))
    assert caught.value.message == "JATS article without a PMCID (article-id pub-id-type='pmcid')"


def test_not_search_json_is_refused() -> None:
    with pytest.raises(ParseError) as caught:
        europepmc.parse('{"message-type": "work-list"}')
    assert caught.value.message == "expected Europe PMC search JSON (an object with 'resultList')"


def test_markup_helpers() -> None:
    assert strip_markup("a<sup>2</sup> <jats:p>b &amp; c</jats:p> if x<y and y>z") == (
        "a\u00b2 b & c if x<y and y>z"
    )
    assert sections("<title>Abstract</title> <p>Only text.</p>") == [("Abstract", "Only text.")]
    assert sections("Lead.<h4>Results</h4>R.<h4>Empty</h4>") == [
        ("Abstract", "Lead."),
        ("Results", "R."),
    ]
    assert slugify("Méthodes & Analyses") == "methodes_analyses"
    assert slugify("") == "section"
    assert len(slugify("word " * 30)) <= 40


def _page(cursor: str, ids: list[str], following: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "hitCount": 5,
        "request": {"cursorMark": cursor},
        "resultList": {
            "result": [{"id": i, "source": "MED", "pmid": i, "title": f"T{i}"} for i in ids]
        },
    }
    if following is not None:
        body["nextCursorMark"] = following
    return body


@pytest.mark.parametrize(
    ("pages", "limit", "expected", "requests"),
    [
        ({"*": (["1", "2"], "c2"), "c2": (["3", "4"], "c3"), "c3": (["5"], None)}, 10, 5, 3),
        ({"*": (["1", "2"], "c2"), "c2": (["3", "4"], "c2")}, 10, 4, 2),  # cursor repeats
        ({"*": (["1", "2"], "c2"), "c2": (["3", "4"], "c3")}, 3, 3, 2),  # limit reached
    ],
)
def test_search_records_follows_cursor_marks(
    pages: dict[str, tuple[list[str], str | None]], limit: int, expected: int, requests: int
) -> None:
    seen: list[dict[str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        seen.append(params)
        ids, following = pages[params["cursorMark"]]
        return httpx.Response(200, json=_page(params["cursorMark"], ids, following))

    with mock_client(handler) as http:
        records = europepmc.search_records(http, "zentravir", limit=limit)
    assert len(records) == expected
    assert len(seen) == requests
    assert seen[0] == {
        "query": "zentravir",
        "resultType": "core",
        "format": "json",
        "pageSize": str(limit),
        "cursorMark": "*",
    }


def test_fetch_full_text_none_when_not_open_access() -> None:
    body = fixture("europepmc", "fulltext-nested.xml")

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/PMC99200007/fullTextXML"):
            return httpx.Response(200, content=body)
        return httpx.Response(404, content=b"")

    with mock_client(handler) as http:
        record = europepmc.fetch_full_text(http, "99200007")
        assert record is not None and record.record_id == "pmcid:PMC99200007"
        assert europepmc.fetch_full_text(http, "PMC1") is None


@requires_reference
@pytest.mark.parametrize("path", reference_files("europepmc"), ids=lambda p: p.name)
def test_reference_responses_conform(path: Path) -> None:
    body, url = wrapper_body(path)
    result = europepmc.parse(body, url=url)
    assert_conformant(result)
    assert result.records


@requires_reference
def test_reference_preprints_link_to_their_published_version() -> None:
    for path in reference_files("europepmc"):
        body, url = wrapper_body(path)
        if json.loads(path.read_text())["url"].find("SRC%3APPR") < 0:
            continue
        for record in europepmc.parse(body, url=url).records:
            if record.record_id.startswith("ppr:"):
                assert record.flags.preprint is True


@pytest.mark.live
def test_live_europepmc_smoke() -> None:
    with HttpClient(Settings.from_env()) as http:
        records = europepmc.search_records(http, "SRC:PPR AND HAS_PUBLISHED_VERSION:Y", limit=3)
    assert len(records) == 3 and all(r.record_id.startswith("ppr:") for r in records)


# -- fuzzing and refusals ----------------------------------------------------------------------
EPMC_SEEDS = seeds("europepmc")


@FUZZ_SETTINGS
@given(mutated(EPMC_SEEDS))
def test_fuzzed_europepmc_bodies_give_records_or_a_parse_error(body: bytes) -> None:
    check_fails_closed(europepmc.parse, body)


@requires_reference
@REFERENCE_SETTINGS
@given(mutated(seeds("europepmc", extra=reference_files("europepmc"))))
def test_fuzzed_reference_europepmc_bodies_give_records_or_a_parse_error(body: bytes) -> None:
    check_fails_closed(europepmc.parse, body)


def _epmc_result(**fields: Any) -> bytes:
    item = {"id": "99200001", "source": "MED", "pmid": "99200001", "title": "A title."}
    item.update(fields)
    return json.dumps({"hitCount": 1, "resultList": {"result": [item]}}).encode()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"authorList": {"author": "Lindqvist P"}},
            "europepmc: resultList.result[0].authorList.author must be a list, got a string",
        ),
        (
            {"pubTypeList": 3},
            "europepmc: resultList.result[0].pubTypeList must be an object, got a number",
        ),
        (
            {"pmid": ["99200001", "99200001"]},
            "europepmc: resultList.result[0].pmid must be a string or an integer, got a list",
        ),
        (
            {"commentCorrectionList": {"commentCorrection": [[]]}},
            "europepmc: resultList.result[0].commentCorrectionList.commentCorrection[0] "
            "must be an object, got a list",
        ),
        (
            {"abstractText": ["x"]},
            "europepmc: resultList.result[0].abstractText must be a string, got a list",
        ),
    ],
)
def test_a_europepmc_field_of_the_wrong_type_is_a_parse_error_naming_its_path(
    fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(ParseError) as caught:
        europepmc.parse(_epmc_result(**fields))
    assert caught.value.message == message


def test_a_europepmc_result_whose_pmid_is_not_a_pmid_is_refused_with_a_counted_reason() -> None:
    result = europepmc.parse(_epmc_result(pmid="Health Literacy"))
    assert result.records == []
    assert result.refused == [
        Refusal(
            reason="pmid must be 1 to 10 digits without a leading zero", value="Health Literacy"
        )
    ]


def test_a_preprint_whose_version_breaks_the_handle_grammar_is_refused_with_its_id() -> None:
    body = _epmc_result(id="PPR99001", source="PPR", pmid=None, versionNumber="2 (draft)")
    result = europepmc.parse(body)
    assert result.records == []
    assert [(r.value, r.record_id) for r in result.refused] == [("2 (draft)", "ppr:PPR99001")]


def test_upstream_text_in_a_europepmc_error_is_quoted_on_one_line() -> None:
    with pytest.raises(ParseError) as caught:
        europepmc.parse(b'{"errCode": 400, "errMsg": "bad\\nquery"}')
    assert caught.value.message == "Europe PMC answered with an error: bad query"


# the reproducers: a control character (httpx refuses the URL), 64 K characters (URL
# too long), a path that climbs out of the full-text endpoint; and forms the grammar refuses
BAD_PMCIDS = ["PMC99\n000001", "PMC" + "9" * 65536, "PMC1/../../x?y=", "pmc99200002", "PMC0123"]


@pytest.mark.parametrize("pmcid", BAD_PMCIDS, ids=["newline", "64k", "path", "lower", "zero"])
def test_a_pmcid_that_breaks_the_grammar_is_dropped_and_the_record_kept(pmcid: str) -> None:
    [record] = europepmc.parse(_epmc_result(pmcid=pmcid)).records
    assert (record.record_id, record.pmcid) == ("pmid:99200001", None)
    [kept] = europepmc.parse(_epmc_result(pmcid="PMC99200002")).records
    assert kept.pmcid == "PMC99200002"


def test_a_search_with_a_bad_pmcid_asks_for_no_full_text_and_a_bad_id_is_never_requested() -> None:
    asked: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        return httpx.Response(200, content=_epmc_result(pmcid="PMC1/../../x?y="))

    with mock_client(handler) as http:
        [record] = europepmc.search_records(http, "zentravir", limit=1)
        assert record.pmcid is None  # so the harvest fetches no full text for it
        for pmcid in BAD_PMCIDS:
            with pytest.raises(TerminalHarvestError) as caught:
                europepmc.fetch_full_text(http, pmcid)
            assert caught.value.message == (
                f"no full text asked for {' '.join(pmcid.split())[:80]!r}: "
                "pmcid must be PMC followed by 1 to 10 digits without a leading zero"
            )
    assert len(asked) == 1  # the search; no full-text request was made


def test_notices_are_kept_as_notices_and_become_relations_and_flags_of_what_they_concern() -> None:
    records = europepmc.parse(fixture("europepmc", "search-core-notices.json")).records
    by_id = {r.record_id: r for r in records}
    retracted = by_id["pmid:99200030"]  # its own entry does not say so yet
    assert retracted.content_type == "article"
    assert retracted.flags == Flags(retracted=True, expression_of_concern=False, preprint=False)
    assert [(r.kind, r.target, r.detail) for r in retracted.relations] == [
        ("retraction_in", "pmid:99200031", "Retraction: an invented finding."),
        ("erratum_in", "pmcid:PMC99200032", "Correction: an invented finding."),
    ]
    notice = by_id["pmid:99200031"]
    assert notice.content_type == "retraction_notice"  # PubMed's PT spelling
    assert notice.flags.retracted is False  # a notice is not retracted
    assert [(r.kind, r.target) for r in notice.relations] == [("retraction_of", "pmid:99200030")]
    assert by_id["pmcid:PMC99200032"].content_type == "erratum"  # JATS's "correction"
    concern = by_id["pmid:99200033"]  # about a record outside this batch: nothing to apply
    assert concern.content_type == "expression_of_concern"
    assert [(r.kind, r.target) for r in concern.relations] == [
        ("expression_of_concern_for", "pmid:99200034")
    ]
    update = by_id["pmid:99200035"]  # "Update of" is a relation, not a notice
    assert (update.content_type, [(r.kind, r.target) for r in update.relations]) == (
        "article",
        [("update_of", "pmid:99200030")],
    )


def test_notices_apply_across_the_pages_of_one_search() -> None:
    data = json.loads(fixture("europepmc", "search-core-notices.json"))
    results = data["resultList"]["result"]
    pages = []
    for n, result in enumerate(results):
        page = json.loads(json.dumps(data))
        page["resultList"]["result"] = [result]
        page["nextCursorMark"] = f"c{n + 1}" if n + 1 < len(results) else f"c{n}"
        page["request"]["cursorMark"] = "*" if n == 0 else f"c{n}"
        pages.append(json.dumps(page))
    calls = iter(pages)
    client = mock_client(lambda request: httpx.Response(200, text=next(calls)))
    records = europepmc.search_records(client, "EXT_ID:99200030", limit=10)
    [retracted] = [r for r in records if r.record_id == "pmid:99200030"]
    assert retracted.flags.retracted is True
    assert [(r.kind, r.target) for r in retracted.relations] == [
        ("retraction_in", "pmid:99200031"),
        ("erratum_in", "pmcid:PMC99200032"),
    ]


def test_jats_notice_gets_its_content_type_and_related_article_relation() -> None:
    [notice] = europepmc.parse(fixture("europepmc", "fulltext-retraction.xml")).records
    assert notice.content_type == "retraction_notice"
    assert notice.flags == Flags()  # full text: unknown
    assert notice.relations == [  # the bad pubmed id and the commentary link are left out
        Relation(
            kind="retraction_of",
            target="doi:10.5555/epmc.0030",
            source="europepmc",
            detail="Demo J Invent Med. 2024;3:1",
        )
    ]
