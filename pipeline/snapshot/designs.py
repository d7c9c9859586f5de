"""Study designs from publication types: one mapping table, one three-valued rule.

A record's ``publication_types`` are its source's own words: PubMed/MEDLINE publication types
(``Randomized Controlled Trial``), Europe PMC's ``pubType`` list (MEDLINE's words for MEDLINE
records, JATS ``article-type`` values such as ``review-article`` for PMC ones), the JATS
``article-type`` of a full text, Crossref's ``type``/``subtype`` (``journal-article``,
``posted-content``), OpenAlex's work type, arXiv's ``preprint``. :data:`TERMS` maps each term
(compared case-insensitively) that names a design onto one of :data:`DESIGNS`; every other
term (``Journal Article``, ``research-article``, ``journal-article``, ``Comparative Study``,
``Multicenter Study``, ``Research Support, …``) names a kind of publication, not a design, and
decides nothing.

Designs form a small tree (:data:`BROADER`: each design's broader one)::

    clinical-study ── clinical-trial ── rct
                   └─ observational ── cohort
                                    └─ case-control
    review ── systematic-review
    meta-analysis, case-report, guideline, protocol, editorial, letter, comment, news, notice

A filter asking for designs ``D`` decides a record from the designs its terms name:

=======================================  ===================================================
admitted (1)                             a term names a design in ``D`` or narrower than one
                                         (``Randomized Controlled Trial`` for clinical-trial)
undecided (NULL: left out, counted)      else a term names a design broader than one of
                                         ``D`` (``Observational Study`` for cohort), or one
                                         that overlaps it (:data:`OVERLAPS`: a meta-analysis
                                         may or may not be a systematic review); else no term
                                         names a design (no types at all, a Europe PMC "lite"
                                         result, or only ``Journal Article``)
rejected (0)                             else: its terms name only other designs (an
                                         editorial, a case report when RCTs are asked)
=======================================  ===================================================

Records of ClinicalTrials.gov and openFDA (:data:`NOT_PUBLICATIONS`) are registrations and
labels, not publications: a design filter rejects them (a trial's own design is its phase,
see :mod:`pipeline.snapshot.facets`).

No harvested vocabulary names cohort or case-control designs as a publication type (MEDLINE
indexes them as MeSH headings, which snapshots do not keep), so ``cohort`` and
``case-control`` admit no record today: observational studies are undecided and counted, and
the filter says so rather than guess.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from audit.errors import InputError

DESIGNS: tuple[str, ...] = (
    "rct",
    "clinical-trial",
    "clinical-study",
    "observational",
    "cohort",
    "case-control",
    "meta-analysis",
    "systematic-review",
    "review",
    "case-report",
    "guideline",
    "protocol",
    "editorial",
    "letter",
    "comment",
    "news",
    "notice",
)
"""Every design a filter can ask for."""

MAX_DESIGNS = len(DESIGNS)
NOT_PUBLICATIONS = ("clinicaltrials", "openfda")
"""Sources whose records have no publication design (module docstring)."""

BROADER: dict[str, str] = {
    "rct": "clinical-trial",
    "clinical-trial": "clinical-study",
    "observational": "clinical-study",
    "cohort": "observational",
    "case-control": "observational",
    "systematic-review": "review",
}
"""Each design's broader design (the tree of the module docstring)."""

OVERLAPS: frozenset[frozenset[str]] = frozenset(
    {
        frozenset({"meta-analysis", "systematic-review"}),
        frozenset({"meta-analysis", "review"}),
    }
)
"""Pairs of designs one record may or may not be both: neither decides the other."""

TERMS: tuple[tuple[str, str, str], ...] = (
    # (term, design, vocabulary): terms lower-case, as compared
    ("randomized controlled trial", "rct", "MEDLINE"),
    ("randomized controlled trial, veterinary", "rct", "MEDLINE"),
    ("clinical trial", "clinical-trial", "MEDLINE"),
    ("clinical trial, phase i", "clinical-trial", "MEDLINE"),
    ("clinical trial, phase ii", "clinical-trial", "MEDLINE"),
    ("clinical trial, phase iii", "clinical-trial", "MEDLINE"),
    ("clinical trial, phase iv", "clinical-trial", "MEDLINE"),
    ("clinical trial, veterinary", "clinical-trial", "MEDLINE"),
    ("controlled clinical trial", "clinical-trial", "MEDLINE"),
    ("pragmatic clinical trial", "clinical-trial", "MEDLINE"),
    ("adaptive clinical trial", "clinical-trial", "MEDLINE"),
    ("equivalence trial", "clinical-trial", "MEDLINE"),
    ("clinical study", "clinical-study", "MEDLINE"),
    ("observational study", "observational", "MEDLINE"),
    ("observational study, veterinary", "observational", "MEDLINE"),
    ("twin study", "observational", "MEDLINE"),
    ("meta-analysis", "meta-analysis", "MEDLINE, JATS4R"),
    ("network meta-analysis", "meta-analysis", "MEDLINE"),
    ("systematic review", "systematic-review", "MEDLINE"),
    ("systematic-review", "systematic-review", "JATS4R"),
    ("review", "review", "MEDLINE, Europe PMC, OpenAlex"),
    ("scoping review", "review", "MEDLINE"),
    ("review-article", "review", "JATS"),
    ("case reports", "case-report", "MEDLINE"),
    ("case-report", "case-report", "JATS"),
    ("guideline", "guideline", "MEDLINE, JATS4R"),
    ("practice guideline", "guideline", "MEDLINE"),
    ("clinical trial protocol", "protocol", "MEDLINE"),
    ("editorial", "editorial", "MEDLINE, JATS, OpenAlex"),
    ("letter", "letter", "MEDLINE, JATS, OpenAlex"),
    ("comment", "comment", "MEDLINE"),
    ("article-commentary", "comment", "JATS"),
    ("news", "news", "MEDLINE"),
    ("newspaper article", "news", "MEDLINE"),
    ("published erratum", "notice", "MEDLINE"),
    ("retraction of publication", "notice", "MEDLINE"),
    ("expression of concern", "notice", "MEDLINE"),
    ("correction", "notice", "JATS"),
    ("retraction", "notice", "JATS"),
    ("expression-of-concern", "notice", "JATS"),
    ("erratum", "notice", "OpenAlex"),
)
"""Publication-type terms that name a design, from each vocabulary (module docstring)."""

DESIGN_OF: dict[str, str] = {term: design for term, design, _ in TERMS}


def _chain(design: str) -> list[str]:
    """``design`` and every broader design, narrowest first."""
    chain = [design]
    while chain[-1] in BROADER:
        chain.append(BROADER[chain[-1]])
    return chain


def relation(asked: str, named: str) -> int | None:
    """How a record naming design ``named`` stands with a filter asking for ``asked``:
    1 (it is one: the same or narrower), None (cannot tell: broader, or overlapping), 0 (it is
    another design)."""
    if asked in _chain(named):
        return 1
    if named in _chain(asked) or frozenset({asked, named}) in OVERLAPS:
        return None
    return 0


@dataclass(frozen=True)
class DesignTerms:
    """The terms that admit a record for the asked designs, those that leave it undecided,
    and every term that names a design (the rule of the module docstring)."""

    admit: tuple[str, ...]
    undecided: tuple[str, ...]
    decided: tuple[str, ...]


def design_terms(designs: Iterable[str]) -> DesignTerms:
    """The terms of :data:`TERMS` sorted by what they say about a record for ``designs``."""
    asked = tuple(designs)
    admit = [t for t, d, _ in TERMS if any(relation(a, d) == 1 for a in asked)]
    undecided = [
        t for t, d, _ in TERMS if t not in admit and any(relation(a, d) is None for a in asked)
    ]
    return DesignTerms(tuple(admit), tuple(undecided), tuple(DESIGN_OF))


def parse_designs(name: str, values: Iterable[str]) -> tuple[str, ...]:
    """Designs as given (case-insensitive, ``_`` or a space for ``-``: ``RCT``,
    ``systematic review``), each one of :data:`DESIGNS`; duplicates dropped."""
    chosen: list[str] = []
    for value in values:
        design = "-".join(value.strip().lower().replace("_", " ").replace("-", " ").split())
        if design not in DESIGNS:
            raise InputError(
                f"{name}: unknown study design {value!r}; expected one of {', '.join(DESIGNS)}"
            )
        chosen.append(design)
    if len(chosen) > MAX_DESIGNS:
        raise InputError(f"{name}: at most {MAX_DESIGNS} study designs, got {len(chosen)}")
    return tuple(dict.fromkeys(chosen))


def design_state(terms: DesignTerms, column: str, *, sep: str) -> tuple[str, dict[str, object]]:
    """The SQL (1, 0 or NULL) of a design filter over ``column`` (a JSON list of publication
    types) and ``source``, and its parameters; a term list that is empty is written as FALSE,
    never as a parameter that splits into one empty term."""
    types = f"json_extract_string(lower({column}), '$[*]')"
    params: dict[str, object] = {}
    tests: list[str] = []
    for key, listed in (
        ("admit", terms.admit),
        ("undecided", terms.undecided),
        ("decided", terms.decided),
    ):
        if listed:
            params[f"design_{key}"] = sep.join(listed)
            tests.append(f"list_has_any({types}, string_split($design_{key}, $sep))")
        else:
            tests.append("FALSE")
    admit, undecided, decided = tests
    # no types, or none naming a design: every test is FALSE or NULL and the CASE gives NULL
    registries = ", ".join(f"'{source}'" for source in NOT_PUBLICATIONS)
    sql = (
        f"CASE WHEN source IN ({registries}) THEN 0 WHEN {admit} THEN 1 "
        f"WHEN {undecided} THEN NULL WHEN {decided} THEN 0 END"
    )
    return sql, params
