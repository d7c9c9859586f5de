"""arXiv's export API: the Atom parser (ids, versions, DOIs, the published version), errors,
the id_list request and the safe XML reader."""

from __future__ import annotations

import httpx
import pytest
from hypothesis import given

from pipeline.errors import ParseError, TerminalHarvestError
from pipeline.records import Flags, Relation
from pipeline.sources import arxiv
from tests.pipeline.sources.fuzzing import FUZZ_SETTINGS, check_fails_closed, mutated, seeds
from tests.pipeline.sources.helpers import assert_conformant, fixture, mock_client


def test_a_new_style_entry_keeps_its_version_datacite_doi_and_published_version() -> None:
    result = arxiv.parse(fixture("arxiv", "id-list.xml"))
    assert result.count == 2 and result.ids == ["arxiv:9912.90001", "arxiv:hep-th/9912901"]
    record = result.records[0]
    assert (record.version, record.version_date, record.year) == ("v3", "2099-12-20", 2099)
    assert record.title == "Learning synthetic protein folds from invented data"
    assert record.passages[1].text == "We fold proteins that do not exist. Nothing here is real."
    assert record.doi == "10.48550/arxiv.9912.90001"
    assert record.authors == ["Jane Q. Doe", "Kees van der Berg"]
    assert record.flags == Flags(retracted=None, expression_of_concern=None, preprint=True)
    assert record.publication_types == ["preprint", "q-bio.BM"]
    assert record.relations == [
        Relation(
            kind="preprint_of",
            target="doi:10.5555/published.0001",
            source="arxiv",
            detail="journal-ref: J. Invented Biol. 1 (2100) 1-12",
        )
    ]
    assert_conformant(result)


def test_an_old_style_entry_is_its_archive_and_number() -> None:
    record = arxiv.parse(fixture("arxiv", "id-list.xml")).records[1]
    assert (record.record_id, record.version) == ("arxiv:hep-th/9912901", "v1")
    assert record.doi == "10.48550/arxiv.hep-th/9912901" and record.relations == []


def test_a_feed_without_entries_is_no_record_and_an_error_entry_a_parse_error() -> None:
    empty = arxiv.parse(fixture("arxiv", "empty.xml"))
    assert (empty.records, empty.count) == ([], 0)
    with pytest.raises(ParseError) as raised:
        arxiv.parse(fixture("arxiv", "error.xml"))
    assert raised.value.message == "arXiv answered with an error: incorrect id format for 9912.9x"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            b"<rss/>",
            "expected an arXiv API Atom feed, got root element <rss>",
        ),
        (
            b'<?xml version="1.0"?><!DOCTYPE feed [<!ENTITY a "aaaa">]>'
            b'<feed xmlns="http://www.w3.org/2005/Atom">&a;</feed>',
            "expected an arXiv API Atom feed but the XML declares entities (refused: entity "
            "expansion and external entities are not allowed)",
        ),
        (
            b'<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://example.org/x</id>'
            b"</entry></feed>",
            "arXiv entry 1: expected an id arxiv.org/abs/<arXiv id>, got 'http://example.org/x'",
        ),
    ],
)
def test_a_hostile_or_foreign_body_is_one_parse_error(body: bytes, message: str) -> None:
    with pytest.raises(ParseError) as raised:
        arxiv.parse(body)
    assert raised.value.message == message


def test_ids_are_asked_in_one_id_list_and_a_bad_id_is_refused_before_any_request() -> None:
    seen: list[httpx.URL] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        return httpx.Response(200, content=fixture("arxiv", "id-list.xml"))

    with mock_client(answer) as client:
        records = arxiv.fetch_ids(client, ["9912.90001", "hep-th/9912901"])
        with pytest.raises(TerminalHarvestError) as raised:
            arxiv.fetch_ids(client, ["9912.90001v2"])
    assert len(records) == 2 and len(seen) == 1
    assert seen[0].params["id_list"] == "9912.90001,hep-th/9912901"
    assert raised.value.message == (
        "cannot ask arXiv for 1 ids in one id_list: at most 50, each an arXiv id without its "
        "version"
    )


def test_arxiv_is_paced_at_one_request_every_three_seconds() -> None:
    assert arxiv.PLUGIN.rate is not None
    assert arxiv.PLUGIN.rate.per_second == pytest.approx(1 / 3)


@FUZZ_SETTINGS
@given(mutated(seeds("arxiv")))
def test_fuzzed_arxiv_bodies_give_records_or_a_parse_error(body: bytes) -> None:
    check_fails_closed(arxiv.parse, body)


def test_citeseal_parse_auto_tells_an_arxiv_feed_by_its_namespace_and_openalex_by_its_url() -> None:
    from pipeline.cli.parse_cmd import detect

    assert detect(fixture("arxiv", "id-list.xml"), None) == "arxiv"
    url = "https://api.openalex.org/works?filter=doi:10.5555/oa.0001"
    assert detect(fixture("openalex", "works-doi.json"), url) == "openalex"
