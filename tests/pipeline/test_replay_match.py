"""The by-id request grammar of replay by meaning, and the merged answers' formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree  # pyright: ignore[reportAttributeAccessIssue]  (no stubs)

from pipeline.replay_match import (
    CLINICALTRIALS_IDS,
    CROSSREF_UPDATES,
    EUROPEPMC_PPR,
    OPENFDA_SETIDS,
    PUBMED_EFETCH,
    PUBTATOR3_EXPORT,
    Asked,
    Part,
    answer,
    asked_of,
    serves,
)
from pipeline.replay_units import place
from pipeline.sources import clinicaltrials, crossref, openfda, pubmed
from tests.pipeline.snapshot.conftest import DEMO_REPLAY

EUTILS = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi"
EPMC = "https://www.ebi.ac.uk/europepmc/webservices/rest/search"
CTGOV = "https://clinicaltrials.gov/api/v2/studies"
FDA = "https://api.fda.gov/drug/label.json"
SET_A = "5eed0001-0000-4000-8000-000000000001"
SET_B = "5eed0001-0000-4000-8000-000000000002"

ASKED = [
    (
        "GET",
        f"{EUTILS}?db=pubmed&id=99000002,99000001&retmode=xml&tool=citeseal",
        None,
        Asked(PUBMED_EFETCH, ("99000002", "99000001")),
    ),
    (
        "POST",
        EUTILS,
        "db=pubmed&id=99000001%2C99000001&retmode=xml&api_key=K",
        Asked(PUBMED_EFETCH, ("99000001",)),
    ),
    (
        "GET",
        "https://www.ncbi.nlm.nih.gov/research/pubtator3-api/publications/export/biocjson"
        "?pmids=99000001",
        None,
        Asked(PUBTATOR3_EXPORT, ("99000001",)),
    ),
    (
        "GET",
        f"{EPMC}?query=(EXT_ID:ppr9 OR EXT_ID:PPR8) AND SRC:PPR&resultType=core"
        "&format=json&pageSize=2&cursorMark=*",
        None,
        Asked(EUROPEPMC_PPR, ("PPR9", "PPR8"), size=2),
    ),
    (
        "GET",
        "https://api.crossref.org/v1/works?filter=updates:10.5555/DEMO.1&rows=20",
        None,
        Asked(CROSSREF_UPDATES, ("10.5555/demo.1",), size=20),
    ),
    (
        "GET",
        f"{CTGOV}?filter.ids=nct99000001&fields=b,a&pageSize=1&format=json",
        None,
        Asked(CLINICALTRIALS_IDS, ("NCT99000001",), fields=("a", "b"), size=1),
    ),
    (
        "GET",
        f'{FDA}?search=set_id:"{SET_A}" OR set_id:"{SET_B}"&limit=2&skip=0',
        None,
        Asked(OPENFDA_SETIDS, (SET_A, SET_B), size=2),
    ),
]


@pytest.mark.parametrize(("method", "url", "form", "expected"), ASKED)
def test_each_by_id_request_is_read_for_the_ids_it_asks(
    method: str, url: str, form: str | None, expected: Asked
) -> None:
    assert asked_of(method, url, form) == expected


@pytest.mark.parametrize(
    "url",
    [
        f"{EUTILS}?db=pubmed&id=99000001&retmode=xml&rettype=abstract",  # another format
        f"{EUTILS}?db=pmc&id=99000001&retmode=xml",
        f"{EUTILS}?db=pubmed&id=99000001,abc&retmode=xml",  # not a PMID
        f"{EUTILS}?db=pubmed&id=1&id=2&retmode=xml",  # a parameter twice
        f"{EPMC}?query=(EXT_ID:PPR9) AND SRC:PPR&resultType=lite&format=json&pageSize=1"
        "&cursorMark=*",
        f"{EPMC}?query=(EXT_ID:PPR9) AND SRC:PPR&resultType=core&format=json&pageSize=1"
        "&cursorMark=AoE",  # a second page
        f"{EPMC}?query=(EXT_ID:PPR9 OR EXT_ID:PPR8) AND SRC:PPR&resultType=core&format=json"
        "&pageSize=1&cursorMark=*",  # a page smaller than the ids asked
        "https://api.crossref.org/works?filter=updates:10.5555/x,type:journal-article",
        f"{CTGOV}?filter.ids=NCT99000001&pageToken=abc",
        f"{CTGOV}?filter.ids=NCT99000001&query.term=x",
        f'{FDA}?search=set_id:"{SET_A}"&limit=1&skip=1',
        f"{FDA}?search=openfda.brand_name:zentravir&limit=1",
        "https://example.org/efetch.fcgi?db=pubmed&id=1&retmode=xml",
    ],
)
def test_a_request_off_its_grammar_is_no_by_id_request(url: str) -> None:
    assert asked_of("GET", url) is None


def demo(source: str, endpoint: str) -> str:
    path = sorted((DEMO_REPLAY / source).glob(f"{endpoint}-*.json"))[0]
    return json.loads(path.read_text(encoding="utf-8"))["body"]


def parts_of(body: str) -> dict[str, Part]:
    return {p.ident: p for p in place(body).parts}


ARTICLES = parts_of(demo("pubmed", "efetch"))
STUDIES = parts_of(demo("clinicaltrials", "studies"))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(sorted(ARTICLES)), min_size=1, unique=True), st.data())
def test_a_merged_efetch_answer_holds_exactly_the_held_ids_asked(
    asked: list[str], data: st.DataObject
) -> None:
    gone = data.draw(st.sets(st.sampled_from(asked)))
    parts = [ARTICLES[i] if i not in gone else Part(PUBMED_EFETCH, i, held=False) for i in asked]
    status, _, body = answer(Asked(PUBMED_EFETCH, tuple(asked)), parts)
    assert status == 200
    assert [r.pmid for r in pubmed.parse(body).records] == [i for i in asked if i not in gone]
    alone = {
        i: pubmed.parse(f"<PubmedArticleSet>{ARTICLES[i].fragment}</PubmedArticleSet>")
        for i in asked
    }
    assert pubmed.parse(body).records == [alone[i].records[0] for i in asked if i not in gone]


def test_the_merged_answers_are_in_each_apis_format() -> None:
    trial = STUDIES["NCT99000001"]
    _, _, body = answer(Asked(CLINICALTRIALS_IDS, ("NCT99000001",)), [trial])
    assert [r.record_id for r in clinicaltrials.parse(body).records] == ["nct:NCT99000001"]
    [label] = place(demo("openfda", "label")).parts
    status, _, body = answer(Asked(OPENFDA_SETIDS, (SET_A,), size=1), [label])
    assert status == 200 and openfda.parse(body).count == 1
    status, _, body = answer(
        Asked(OPENFDA_SETIDS, (SET_B,), size=1), [Part(OPENFDA_SETIDS, SET_B, held=False)]
    )
    assert (status, json.loads(body)) == (
        404,
        {"error": {"code": "NOT_FOUND", "message": "No matches found!"}},
    )
    notices = json.loads(demo("crossref", "works"))["message"]["items"]
    part = Part(CROSSREF_UPDATES, "10.5555/demo.1", held=True, fragment=json.dumps(notices))
    _, _, body = answer(Asked(CROSSREF_UPDATES, ("10.5555/demo.1",), size=100), [part, part])
    assert json.loads(body)["message"]["items"] == notices  # one notice listed once
    assert crossref.parse(body).records == crossref.parse(demo("crossref", "works")).records


def test_a_study_serves_only_the_fields_it_covers() -> None:
    whole = Part(CLINICALTRIALS_IDS, "NCT99000001", held=True, fragment="{}")
    narrow = Part(CLINICALTRIALS_IDS, "NCT99000001", held=True, fragment="{}", fields=("NCTId",))
    module = ("protocolSection.statusModule",)
    assert serves(whole, module) and serves(whole, None)
    assert serves(narrow, ("NCTId",)) and not serves(narrow, None)
    assert not serves(narrow, module) and not serves(whole, ("NCTId",))
    held = Part(CLINICALTRIALS_IDS, "NCT99000001", held=True, fragment="{}", fields=module)
    assert serves(held, ("protocolSection.statusModule.overallStatus",))
    assert not serves(held, ("protocolSection.statusModule", "hasResults"))


def test_raw_bodies_of_unknown_shape_say_what_they_are(tmp_path: Path) -> None:
    del tmp_path
    assert place('{"hello": 1}').reason == "a JSON body of no known source (keys: hello)"
    assert place("<html-ish/>").reason == "an XML body of no known source (<html-ish>)"
    cut = etree.tostring(etree.fromstring(demo("pubmed", "efetch").encode())[0])
    assert place(cut.decode()).reason == "an XML body of no known source (<PubmedArticle>)"


def test_a_raw_full_text_becomes_the_exchange_of_its_pmcid_and_a_search_does_not() -> None:
    placed = place(demo("europepmc", "fullTextXML"))
    assert placed.exchange is not None and not placed.parts
    assert placed.exchange.url == (
        "https://www.ebi.ac.uk/europepmc/webservices/rest/PMC99000001/fullTextXML"
    )
    search = {"resultList": {"result": [{"id": "99", "source": "PMC", "pmcid": "PMC99"}]}}
    assert place(json.dumps(search)).reason == (
        "a raw europepmc body whose records (pmcid) answer no request citeseal makes by id"
    )
    legacy = place("<clinical_study><id_info/></clinical_study>").reason
    assert legacy == (
        "its body does not parse: this is a classic ClinicalTrials.gov XML record "
        "(<clinical_study>), retired in 2024; citeseal reads API v2 JSON"
    )
