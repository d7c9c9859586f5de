"""Superscripts and subscripts are kept in every source that reads inline markup
(pipeline/xmlsafe.py ``script``, pipeline/sources/markup.py), and quote matching treats them
as significant (docs/contract.md, "Superscripts and subscripts")."""

from __future__ import annotations

import json

import pytest

from audit.folding import fold
from audit.quotes import quote_in_passage
from pipeline.records import Record
from pipeline.sources import crossref, europepmc, pubmed, pubtator3
from pipeline.sources.markup import sections, strip_markup
from tests.conftest import reference_files, requires_reference
from tests.pipeline.sources.helpers import fixture, wrapper_body


def _texts(record: Record) -> dict[str, str]:
    return {p.path: p.text for p in record.passages}


@pytest.mark.parametrize(
    ("markup", "stored"),
    [
        ("10<sup>3</sup>-fold", "10\u00b3-fold"),
        ("IC<sub>50</sub>", "IC\u2085\u2080"),
        ("CYP<sub>3A4</sub>", "CYP_(3A4)"),
        ("Ca<SUP>2+</SUP>", "Ca\u00b2\u207a"),
        ("10<jats:sup>-3</jats:sup> M", "10\u207b\u00b3 M"),
        ("x<sub>a<sup>2</sup></sub>", "x_(a\u00b2)"),
        ("<sup>&lt;1</sup> &amp;amp; p<0.05", "^(<1) &amp; p<0.05"),
        ("<sup>a </sup>Major", "\u1d43 Major"),
        ("<sup></sup>x", "x"),
    ],
)
def test_strip_markup_keeps_superscripts_and_subscripts(markup: str, stored: str) -> None:
    assert strip_markup(markup) == stored


def test_sections_keep_scripts_inside_headed_sections() -> None:
    assert sections("<h4>Results</h4>I<sup>2</sup> = 4%") == [("Results", "I\u00b2 = 4%")]


def test_pubmed_efetch_keeps_scripts_in_title_and_abstract() -> None:
    [record] = pubmed.parse(fixture("pubmed", "scripts.xml")).records
    assert record.title == "H\u2082O\u2082 and Ca\u00b2\u207a in an invented assay."
    assert _texts(record)["abstract.1"] == (
        "Zentravir lowered the viral load 10\u00b3-fold (IC\u2085\u2080 12 nM) in CD4\u207a "
        "cells; CYP_(3A4) inhibitors raised exposure^(\u2020)."
    )


def test_europepmc_search_keeps_scripts_in_title_and_abstract() -> None:
    [record] = europepmc.parse(fixture("europepmc", "search-core-scripts.json")).records
    assert record.title == "H\u2082O\u2082 in an invented assay."
    assert record.passages[1].section == "Results"
    assert record.passages[1].text == (
        "The viral load fell 10\u00b3-fold (p<0.05); CYP_(3A4) & I\u00b2 = 4%."
    )


def test_europepmc_full_text_keeps_scripts_and_mathml_scripts() -> None:
    [record] = europepmc.parse(fixture("europepmc", "fulltext-scripts.xml")).records
    texts = _texts(record)
    assert record.title == "H\u2082O\u2082 in an invented assay"
    assert texts["abstract.1"] == "The viral load fell 10\u00b3-fold."
    assert texts["body.results.p1"] == (
        "Heterogeneity was low (I\u00b2 = 4%) and CYP_(3A4) mattered; the model was "
        "x\u00b2 with a\u207f terms."
    )


def test_crossref_jats_abstract_keeps_scripts() -> None:
    work = json.loads(fixture("crossref", "work-retracted.json"))
    work["message"]["abstract"] = (
        "<jats:title>Abstract</jats:title><jats:p>Exposure rose 10<jats:sup>3</jats:sup>-fold "
        "with CYP<jats:sub>3A4</jats:sub> inhibitors.</jats:p>"
    )
    [record] = crossref.parse(json.dumps(work)).records
    assert _texts(record)["abstract.1"] == (
        "Exposure rose 10\u00b3-fold with CYP_(3A4) inhibitors."
    )


def test_faithful_quote_matches_and_flattened_or_caret_quote_does_not() -> None:
    [record] = pubmed.parse(fixture("pubmed", "scripts.xml")).records
    passage = fold(_texts(record)["abstract.1"])
    assert quote_in_passage("viral load 10\u00b3-fold", passage)
    assert quote_in_passage("CYP_(3A4) inhibitors", passage)
    assert not quote_in_passage("viral load 103-fold", passage)  # the wrong number
    assert not quote_in_passage("viral load 10^3-fold", passage)
    assert not quote_in_passage("CYP3A4 inhibitors", passage)


def test_pubtator3_annotations_land_on_passages_that_keep_scripts() -> None:
    [record] = pubmed.parse(fixture("pubmed", "scripts.xml")).records
    found = pubtator3.align(fixture("pubtator3", "scripts.json"), {record.record_id: record})
    texts = _texts(record)
    got = [(a.path, a.text, a.type) for a in found[record.record_id]]
    assert got == [
        ("title", "H\u2082O\u2082", "Chemical"),
        ("abstract.1", "Zentravir", "Chemical"),
        ("abstract.1", "CYP_(3A4)", "Gene"),
    ]
    for annotation in found[record.record_id]:
        assert texts[annotation.path][annotation.start : annotation.end] == annotation.text


@requires_reference
def test_reference_responses_keep_superscripts_where_the_markup_has_them() -> None:
    """A real PubMed abstract and a real Europe PMC abstract with ``I<sup>2</sup>``."""
    kept = 0
    for path in reference_files("pubmed") + reference_files("europepmc"):
        body, url = wrapper_body(path)
        if "I<sup>2</sup>" not in body or "fullTextXML" in url:
            continue
        module = pubmed if "eutils" in url else europepmc
        texts = [p.text for r in module.parse(body).records for p in r.passages]
        assert any("I\u00b2" in t for t in texts), path.name
        assert not any("I2 statistic" in t for t in texts), path.name
        kept += 1
    assert kept >= 2
