"""Planted records for the issue-21 filters (study design, open access, trial phase, results,
conditions, interventions, start and completion dates, drug names) and the drug listing.

Synthetic ids (PMIDs above 99000000, DOI prefix 10.5555, NCT99xxxxxx); every passage holds
``zorblax`` (:data:`tests.pipeline.snapshot.planted_search.QUERY`), so what a filter keeps is
exactly a set of record ids. Written by :func:`tests.pipeline.snapshot.planted_search.
write_planted` (the real schema, rows and index).
"""

from __future__ import annotations

from typing import Any

from pipeline.records import Flags, Passage, Record

CLEAN = Flags(retracted=False, expression_of_concern=False, preprint=False)


def _paper(
    record_id: str,
    source: str,
    types: list[str],
    *,
    metadata: dict[str, Any] | None = None,
    licence: str = "unknown",
    **ids: str,
) -> Record:
    return Record(
        record_id=record_id,
        source=source,  # type: ignore[arg-type]
        version="1",
        title=f"Zorblax paper {record_id}",
        year=2022,
        publication_types=types,
        flags=CLEAN,
        metadata=metadata or {},
        licence=licence,
        passages=[Passage(path="abstract.1", section="abstract", text="Zorblax helps.")],
        **ids,  # type: ignore[arg-type]
    )


def _trial(nct: str, metadata: dict[str, Any], **fields: str) -> Record:
    passages = [Passage(path="trial.brief_summary.1", section="Brief summary", text="Zorblax.")]
    for name, text in fields.items():
        passages.append(Passage(path=f"trial.{name}.1", section=name.title(), text=text))
    return Record(
        record_id=f"nct:{nct}",
        source="clinicaltrials",
        version="2025-01-15",
        version_date="2025-01-15",
        title=f"Zorblax trial {nct}",
        content_type="trial",
        status="COMPLETED",
        flags=CLEAN,
        metadata=metadata,
        licence="public-domain",
        passages=passages,
    )


def _label(n: int, version: str, date: str | None, **names: list[str]) -> Record:
    return Record(
        record_id=f"setid:5eed0003-0000-4000-8000-00000000000{n}",
        source="openfda",
        version=version,
        version_date=date,
        title=f"Zorblax label {n}",
        content_type="drug_label",
        flags=CLEAN,
        metadata=dict(names),
        licence="public-domain",
        passages=[
            Passage(path="label.indications_and_usage.1", section="Indications", text="Zorblax."),
            Passage(path="label.warnings.1", section="Warnings", text="Zorblax warnings."),
        ],
    )


PAPERS = [
    _paper(
        "pmid:99300001",
        "pubmed",
        ["Journal Article", "Randomized Controlled Trial"],
        pmid="99300001",
    ),
    # the Europe PMC copy of pmid:99300001 (one work), a lite result without types
    _paper("pmcid:PMC99300010", "europepmc", [], pmid="99300001", pmcid="PMC99300010"),
    _paper("pmid:99300002", "pubmed", ["Journal Article", "Observational Study"]),
    _paper("pmid:99300003", "pubmed", ["Journal Article"]),
    _paper("pmid:99300004", "pubmed", []),
    _paper("pmcid:PMC99300005", "europepmc", ["review-article"], metadata={"open_access": True}),
    _paper(
        "pmcid:PMC99300006",
        "europepmc",
        ["Meta-Analysis", "Journal Article"],
        metadata={"open_access": False},
        licence="CC-BY-4.0",
    ),
    _paper("pmcid:PMC99300007", "europepmc", ["Editorial"], metadata={"open_access": False}),
    _paper("doi:10.5555/zorblax.8", "crossref", ["journal-article"], licence="CC-BY-NC-4.0"),
    _paper(
        "doi:10.5555/zorblax.9",
        "crossref",
        ["journal-article"],
        licence="other:https://publisher.example/licence",
    ),
]
TRIALS = [
    _trial(
        "NCT99300001",
        {
            "phases": ["PHASE2", "PHASE3"],
            "has_results": True,
            "study_type": "INTERVENTIONAL",
            "start_date": "2021-03",
            "completion_date": "2023-06-30",
        },
        conditions="Farrow Syndrome; Sjögren Disease",
        interventions="Drug: Zorblax (other names: ZBX-1). 200 mg orally once daily.",
    ),
    _trial(
        "NCT99300002",
        {
            "phases": ["NA"],
            "has_results": False,
            "study_type": "INTERVENTIONAL",
            "start_date": "2019",
            "completion_date": "2020-01-15",
        },
        conditions="Chronic Farrow-Like Pain",
        interventions="Device: Zorblax pump.",
    ),
    # observational, and the registry gave nothing else
    _trial("NCT99300003", {"study_type": "OBSERVATIONAL"}),
    # interventional without phases: its phase is unknown
    _trial("NCT99300004", {"study_type": "INTERVENTIONAL"}, conditions="Asthma; COPD"),
]
LABELS = [
    _label(
        1,
        "3",
        "2025-02-01",
        brand_name=["ZORBLAXIN"],
        generic_name=["zorblax hydrochloride"],
        substance_name=["ZORBLAX HYDROCHLORIDE"],
    ),
    _label(2, "1", "2024-06-10", brand_name=["Zörblax"], generic_name=["ZORBLAX"]),
    _label(3, "2", None, generic_name=["zorblax"]),
    _label(4, "1", "2025-05-05"),  # openFDA harmonised no name
    _label(5, "1", "2023-01-01", brand_name=["Quorvex"], generic_name=["zorblax"]),
]
FACET_RECORDS = [*PAPERS, *TRIALS, *LABELS]

PAPER_IDS = {r.record_id for r in PAPERS}
TRIAL_IDS = {r.record_id for r in TRIALS}
LABEL_IDS = {r.record_id for r in LABELS}


def label_id(n: int) -> str:
    return f"setid:5eed0003-0000-4000-8000-00000000000{n}"
