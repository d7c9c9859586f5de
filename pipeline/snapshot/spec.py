"""Corpus specs: the model moved to :mod:`pipeline.harvest_spec` (the harvest owns what it
harvests); this module re-exports it for the callers that import it from here."""

from __future__ import annotations

from pipeline.harvest_spec import (
    DOI,
    MAX_LIMIT,
    NCT,
    PMCID,
    PMID,
    PPR,
    SET_ID,
    ClinicalTrialsQuery,
    ClinicalTrialsSpec,
    CorpusSpec,
    CrossrefSpec,
    EuropePmcQuery,
    EuropePmcSpec,
    OpenFdaQuery,
    OpenFdaSpec,
    PubMedQuery,
    PubMedSpec,
    format_loc,
    load_spec,
    locate_key,
    parse_spec,
    spec_model,
)

__all__ = [
    "DOI",
    "MAX_LIMIT",
    "NCT",
    "PMCID",
    "PMID",
    "PPR",
    "SET_ID",
    "ClinicalTrialsQuery",
    "ClinicalTrialsSpec",
    "CorpusSpec",
    "CrossrefSpec",
    "EuropePmcQuery",
    "EuropePmcSpec",
    "OpenFdaQuery",
    "OpenFdaSpec",
    "PubMedQuery",
    "PubMedSpec",
    "format_loc",
    "load_spec",
    "locate_key",
    "parse_spec",
    "spec_model",
]
