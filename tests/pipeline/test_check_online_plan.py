"""The pure half of ``citeseal check --online``: what is asked of which registry (the plan,
the lookup spec) and how a lookup snapshot's spec and failures are read back (``asked``)."""

from __future__ import annotations

from audit.references import extract_bytes
from audit.references.check import check_document
from audit.references.resolve import Asked
from pipeline.check_online.plan import (
    Plan,
    arxiv_of_doi,
    asked,
    lookup_spec,
    plan,
    pubmed_title_term,
)
from tests.audit.references.test_resolve_online import EmptyResolver

DOC = b"""# References

1. Roe R. A title nobody holds anywhere. 2098. doi:10.5555/X.1 PMID: 99200001 PMC99200001
2. Roe R. Strings on a synthetic lattice. arXiv:hep-th/9912901v2 doi:10.48550/arXiv.9912.90002
3. A trial. NCT99000009
4. Roe R. An entry without any identifier at all. 2098.
"""


def test_every_unplaced_identifier_goes_to_its_registry_and_every_unsettled_title_too() -> None:
    document = extract_bytes(DOC, "refs.md")
    checks = check_document(document, EmptyResolver()).references
    wanted = plan([(document, checks)], placed=set())
    assert list(wanted.dois) == ["10.5555/x.1"]
    assert list(wanted.pmids) == ["99200001"] and list(wanted.pmcids) == ["PMC99200001"]
    assert list(wanted.arxiv) == ["hep-th/9912901", "9912.90002"]  # the DataCite DOI too
    assert list(wanted.ncts) == ["NCT99000009"]
    assert list(wanted.titles) == [
        "A title nobody holds anywhere",
        "Strings on a synthetic lattice",
        "A trial",
        "An entry without any identifier at all",
    ]


def test_what_the_snapshot_placed_is_not_asked_again() -> None:
    document = extract_bytes(DOC, "refs.md")
    checks = check_document(document, EmptyResolver()).references
    placed = {("doi", "10.5555/x.1"), ("pmid", "99200001"), ("pmcid", "PMC99200001")}
    wanted = plan([(document, checks)], placed)
    assert (wanted.dois, wanted.pmids, wanted.pmcids) == ({}, {}, {})


def test_the_lookup_spec_puts_each_ask_in_its_table_and_reads_back_as_asked() -> None:
    wanted = Plan(
        dois={"10.5555/x.1": None},
        pmids={"99200001": None},
        pmcids={"PMC99200001": None},
        arxiv={"9912.90002": None},
        ncts={"NCT99000009": None},
        titles={"A title nobody holds": None},
    )
    spec = lookup_spec("works-lookup", wanted)
    assert spec.sources() == [
        "pubmed",
        "europepmc",
        "crossref",
        "clinicaltrials",
        "arxiv",
        "openalex",
    ]
    term = "A[ti] AND title[ti] AND nobody[ti] AND holds[ti]"
    assert pubmed_title_term("A title nobody holds") == term
    assert spec.pubmed is not None and [q.term for q in spec.pubmed.queries] == [term]
    failures = [("crossref", "works 10.5555/x.1", "HTTP 500")]
    assert asked(spec, failures) == Asked(
        keys={
            ("doi", "10.5555/x.1"): ("crossref", "openalex"),
            ("pmid", "99200001"): ("pubmed",),
            ("pmcid", "PMC99200001"): ("europepmc",),
            ("arxiv", "9912.90002"): ("arxiv",),
            ("doi", "10.48550/arxiv.9912.90002"): ("arxiv",),
            ("nct", "NCT99000009"): ("clinicaltrials",),
        },
        titles={"A title nobody holds": ("crossref", "openalex", "pubmed")},
        failed={"crossref": "crossref: works 10.5555/x.1: HTTP 500"},
    )


def test_nothing_to_ask_is_an_empty_plan() -> None:
    assert not Plan()


def test_an_arxiv_datacite_doi_gives_back_its_arxiv_id_with_the_subject_class_in_capitals() -> None:
    assert arxiv_of_doi("10.48550/arxiv.9912.90001") == "9912.90001"
    assert arxiv_of_doi("10.48550/arxiv.math.ag/9912901") == "math.AG/9912901"
    assert arxiv_of_doi("10.48550/arxiv.hep-th/9912901") == "hep-th/9912901"
    assert arxiv_of_doi("10.48550/arxiv.nonsense") is None
