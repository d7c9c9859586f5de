"""Each source's licence: read from our synthetic fixtures (in the APIs' exact formats) and,
when ../shared is beside the project, checked against the real recorded responses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.records import Record
from pipeline.sources import clinicaltrials, crossref, europepmc, openfda, parser_for
from tests.conftest import REFERENCE, requires_reference

FIXTURES = Path(__file__).parents[2] / "fixtures"


def _licences(source: str, path: Path) -> dict[str, tuple[str, str | None]]:
    body = path.read_bytes()
    if path.suffix == ".json":
        wrapper = json.loads(body)
        if isinstance(wrapper, dict) and {"url", "body"} <= set(wrapper):  # a recorded exchange
            body = wrapper["body"].encode("utf-8")
    records: list[Record] = parser_for(source)(body).records
    return {r.record_id: (r.licence, r.licence_raw) for r in records}


@pytest.mark.parametrize(
    ("source", "fixture", "expected"),
    [
        (
            "europepmc",
            "europepmc/search-core-retracted.json",
            {"pmid:99200003": ("CC-BY", "cc by")},
        ),
        (
            "europepmc",
            "europepmc/search-lite.json",
            {
                "pmid:99200001": ("unknown", None),  # no license field
                "pmcid:PMC99200002": ("CC-BY-NC-ND", "cc by-nc-nd"),
                "ppr:PPR99202": ("unknown", None),
            },
        ),
        (
            "europepmc",
            "europepmc/fulltext-nested.xml",
            {
                "pmcid:PMC99200007": (
                    "CC-BY-4.0",
                    "https://creativecommons.org/licenses/by/4.0/",
                )
            },
        ),
        (
            "europepmc",
            "europepmc/fulltext-retraction.xml",  # no <permissions>
            {"pmcid:PMC99200036": ("unknown", None)},
        ),
        (
            "crossref",
            "crossref/work-retracted.json",
            {
                "doi:10.5555/xref.0001": (
                    "CC-BY-4.0",
                    "https://creativecommons.org/licenses/by/4.0/ (vor, 2021-04-01); "
                    "https://publisher.example.org/tdm-licence/1.0/ (tdm, 2021-04-01)",
                )
            },
        ),
        (
            "clinicaltrials",
            "clinicaltrials/trial-v2025-01-15.json",
            {"nct:NCT99000001": ("public-domain", clinicaltrials.TERMS_URL)},
        ),
        (
            "openfda",
            "openfda/label-v4.json",
            {"setid:5eed0001-0000-4000-8000-000000000001": ("public-domain", openfda.LICENSE_URL)},
        ),
    ],
)
def test_each_source_records_the_licence_it_gives(
    source: str, fixture: str, expected: dict[str, tuple[str, str | None]]
) -> None:
    assert _licences(source, FIXTURES / fixture) == expected


def test_pubmed_records_name_no_licence() -> None:
    found = _licences("pubmed", FIXTURES / "pubmed" / "erratum.xml")
    assert found and set(found.values()) == {("unknown", None)}


def test_a_crossref_licence_is_unknown_when_version_of_record_licences_disagree() -> None:
    item = {
        "DOI": "10.5555/xref.0099",
        "type": "journal-article",
        "license": [
            {"URL": "https://creativecommons.org/licenses/by/4.0/", "content-version": "vor"},
            {"URL": "https://publisher.example.org/licence/", "content-version": "vor"},
            {
                "URL": "https://creativecommons.org/licenses/by/4.0/",
                "content-version": "am",
                "delay-in-days": 0,
            },
        ],
    }
    body = json.dumps({"status": "ok", "message-type": "work", "message": item})
    (record,) = crossref.parse(body).records
    assert record.licence == "unknown"


def test_an_embargoed_crossref_licence_is_not_the_records() -> None:
    item = {
        "DOI": "10.5555/xref.0098",
        "type": "journal-article",
        "license": [
            {
                "URL": "https://creativecommons.org/licenses/by/4.0/",
                "content-version": "vor",
                "delay-in-days": 365,
            }
        ],
    }
    body = json.dumps({"status": "ok", "message-type": "work", "message": item})
    (record,) = crossref.parse(body).records
    assert (record.licence, record.licence_raw) == (
        "unknown",
        "https://creativecommons.org/licenses/by/4.0/ (vor, ?)",
    )


def test_a_jats_licence_paragraph_without_a_licence_url_is_unknown_with_its_text_kept() -> None:
    xml = (
        '<article><front><article-meta><article-id pub-id-type="pmcid">PMC99000099</article-id>'
        "<permissions><license><license-p>Synthetic text, free to reuse.</license-p></license>"
        "</permissions></article-meta></front></article>"
    )
    (record,) = europepmc.parse(xml).records
    assert (record.licence, record.licence_raw) == ("unknown", "Synthetic text, free to reuse.")


def test_a_jats_ali_license_ref_names_the_licence() -> None:
    xml = (
        '<article xmlns:ali="http://www.niso.org/schemas/ali/1.0/"><front><article-meta>'
        '<article-id pub-id-type="pmcid">PMC99000098</article-id><permissions><license>'
        "<ali:license_ref>https://creativecommons.org/publicdomain/zero/1.0/</ali:license_ref>"
        "</license></permissions></article-meta></front></article>"
    )
    (record,) = europepmc.parse(xml).records
    assert record.licence == "CC0-1.0"


# -- the real responses (skipped without ../shared) ------------------------------------------


def _reference(source: str, name: str) -> Path:
    return REFERENCE / source / name


@requires_reference
def test_real_europepmc_results_and_full_text_carry_their_cc_by_licence() -> None:
    search = _licences("europepmc", _reference("europepmc", "search-PMCID_PMC12585062.json"))
    assert search == {"pmid:41187138": ("CC-BY", "cc by")}
    full = _licences("europepmc", _reference("europepmc", "fulltext-PMC12585062.json"))
    assert full == {
        "pmcid:PMC12585062": ("CC-BY-4.0", "https://creativecommons.org/licenses/by/4.0/")
    }


@requires_reference
def test_a_real_pubmed_record_keeps_its_copyright_text_and_stays_unknown() -> None:
    ((licence, raw),) = _licences("pubmed", _reference("pubmed", "efetch-41187138.json")).values()
    assert licence == "unknown"
    assert raw is not None and raw.startswith("Copyright: © 2025 Jiao et al.")


@requires_reference
def test_real_crossref_tdm_licences_grant_nothing_for_the_published_text() -> None:
    found = _licences(
        "crossref", _reference("crossref", "works-updates-10_1016_s0140_6736_97_11096_0.json")
    )
    assert found and {licence for licence, _ in found.values()} == {"unknown"}
    assert all("(tdm, " in (raw or "") for _, raw in found.values())


@requires_reference
def test_every_real_openfda_response_names_the_licence_url_we_record() -> None:
    for path in sorted((REFERENCE / "openfda").glob("label-*.json")):
        body = json.loads(json.loads(path.read_text(encoding="utf-8"))["body"])
        if "results" in body:
            assert body["meta"]["license"] == openfda.LICENSE_URL, path.name


@requires_reference
def test_real_clinicaltrials_studies_are_public_domain() -> None:
    found = _licences("clinicaltrials", _reference("clinicaltrials", "studies-NCT04363697.json"))
    assert set(found.values()) == {("public-domain", clinicaltrials.TERMS_URL)}
