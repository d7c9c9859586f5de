"""What every source parser returns: pydantic records, passages, annotations and relations.

A :class:`Record` is one version of one upstream record, identified by ``record_id``
(``scheme:id``, the same scheme names as handles: ``pmid``, ``pmcid``, ``ppr``, ``nct``,
``setid``; enrichment-only sources use ``doi:``). Parsers are pure: body in, records out.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from audit.licences import UNKNOWN, in_vocabulary
from pipeline.sources import BUILTIN_NAMES, names


def _registered(name: str) -> str:
    if name not in names():
        raise ValueError(f"expected a registered source ({', '.join(names())}), got {name!r}")
    return name


def _licence(name: str) -> str:
    if not in_vocabulary(name):
        raise ValueError(f"expected a licence of audit.licences' vocabulary, got {name!r}")
    return name


# a licence, as audit.licences names it (CC-BY-4.0, public-domain, other:<url>, unknown)
LicenceName = Annotated[str, AfterValidator(_licence)]
HASH_EXCLUDED = frozenset({"annotations", "licence", "licence_raw"})
"""Fields that are not part of a version's content hash: annotations are harvest-time
enrichment; the licence is a statement about the right to republish, not the text, so adding
it (or a source starting to report it) never makes a new version of an unchanged record."""


# a source's name, as the registry has it (pipeline.sources: the six built-in ones and any
# source registered with pipeline.sources.register)
SourceName = Annotated[str, AfterValidator(_registered)]
SOURCES: tuple[str, ...] = BUILTIN_NAMES  # the built-in sources; names() has them all


class Flags(BaseModel):
    """Tri-state flags: ``True``, ``False`` or ``None`` (unknown — never shown as clean)."""

    model_config = ConfigDict(frozen=True)

    retracted: bool | None = None
    expression_of_concern: bool | None = None
    preprint: bool | None = None


class Relation(BaseModel):
    """A link from this record to another: a retraction notice, an erratum, a preprint's
    published version… ``kind`` is one of :data:`RELATION_KINDS`; ``target`` is an id
    (``pmid:…``, ``doi:…``, ``ppr:…``)."""

    model_config = ConfigDict(frozen=True)

    kind: str
    target: str
    source: str
    detail: str | None = None
    date: str | None = None


RELATION_KINDS = (
    "retraction_in",  # this record is retracted by target
    "retraction_of",  # this record is the retraction notice of target
    "expression_of_concern_in",
    "expression_of_concern_for",
    "erratum_in",
    "erratum_for",
    "correction_in",  # Crossref 'correction' update
    "retracted_and_republished_in",
    "update_in",
    "preprint_of",  # this preprint was published as target
    "has_preprint",  # target is a preprint of this record
    "version_of",  # another version of the same preprint
    # every other PubMed CommentsCorrections RefType (Europe PMC mirrors them), kept as is
    "update_of",  # this record is an update of target
    "comment_in",  # target comments on this record
    "comment_on",  # this record comments on target
    "corrected_and_republished_from",
    "retracted_and_republished_from",
    "republished_in",
    "republished_from",
    "reprint_in",
    "reprint_of",
    "summary_for_patients_in",
    "original_report_in",
    "associated_dataset",
    "associated_publication",
    "cites",
)

REF_TYPE_KINDS: dict[str, str] = {
    "RetractionIn": "retraction_in",
    "RetractionOf": "retraction_of",
    "ExpressionOfConcernIn": "expression_of_concern_in",
    "ExpressionOfConcernFor": "expression_of_concern_for",
    "ErratumIn": "erratum_in",
    "ErratumFor": "erratum_for",
    "RetractedandRepublishedIn": "retracted_and_republished_in",
    "RetractedandRepublishedFrom": "retracted_and_republished_from",
    "CorrectedandRepublishedIn": "correction_in",
    "CorrectedandRepublishedFrom": "corrected_and_republished_from",
    "UpdateIn": "update_in",
    "UpdateOf": "update_of",
    "CommentIn": "comment_in",
    "CommentOn": "comment_on",
    "RepublishedIn": "republished_in",
    "RepublishedFrom": "republished_from",
    "ReprintIn": "reprint_in",
    "ReprintOf": "reprint_of",
    "SummaryForPatientsIn": "summary_for_patients_in",
    "OriginalReportIn": "original_report_in",
    "AssociatedDataset": "associated_dataset",
    "AssociatedPublication": "associated_publication",
    "Cites": "cites",
}
"""PubMed's ``CommentsCorrections@RefType`` values (the whole DTD enumeration) → relation
kind. Europe PMC's ``commentCorrection.type`` spells the same names in words ("Retraction
in", "Corrected and republished in"): :func:`relation_kind` reads both."""

NOTICE_CONTENT_TYPES: dict[str, str] = {
    "retraction of publication": "retraction_notice",  # PubMed PT (Europe PMC MED results)
    "retraction": "retraction_notice",  # JATS article-type (Europe PMC PMC results, full text)
    "expression of concern": "expression_of_concern",
    "expression-of-concern": "expression_of_concern",
    "published erratum": "erratum",
    "correction": "erratum",
    "erratum": "erratum",
}
"""Publication types (case-insensitive) that make a record a *notice* about another record:
its ``content_type`` says which notice it is (it is kept as a record, never flagged as
retracted itself)."""

NOTICE_OF: dict[str, tuple[str, str | None]] = {
    "retraction_of": ("retraction_in", "retracted"),
    "retracted_and_republished_from": ("retracted_and_republished_in", "retracted"),
    "expression_of_concern_for": ("expression_of_concern_in", "expression_of_concern"),
    "erratum_for": ("erratum_in", None),
    "corrected_and_republished_from": ("correction_in", None),
}
"""A notice's relation to the record it concerns → the relation that record gets (target: the
notice) and the flag it sets there (None: no flag)."""

_BY_WORDS = {name.lower(): kind for name, kind in REF_TYPE_KINDS.items()}
_WORD_BREAK = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def relation_kind(ref_type: str) -> str:
    """The relation kind of a RefType (``UpdateOf``) or of its words (``Update of``): the
    table above, matched without case or spaces; a value outside it (a RefType added to the
    DTD later) is kept as its words in snake case (``NewKindIn`` → ``new_kind_in``), never
    dropped. Empty → empty (no relation)."""
    squeezed = "".join(ref_type.split())
    known = _BY_WORDS.get(squeezed.lower())
    if known is not None:
        return known
    words = _WORD_BREAK.sub(" ", ref_type).lower()
    return "_".join(re.findall(r"[a-z0-9]+", words))


class Passage(BaseModel):
    """One citable unit of text. ``path`` is derived only from the record's structure, so
    parsing the same version twice gives the same paths (see README, "Passage paths")."""

    model_config = ConfigDict(frozen=True)

    path: str
    section: str
    text: str


class Annotation(BaseModel):
    """A PubTator3 entity mention: character span relative to the passage text."""

    model_config = ConfigDict(frozen=True)

    path: str
    start: int
    end: int
    text: str
    type: str
    identifier: str | None = None


class Record(BaseModel):
    """One version of one upstream record, as a parser sees it."""

    record_id: str
    source: SourceName
    version: str | None = None
    version_date: str | None = None
    title: str = ""
    doi: str | None = None
    pmid: str | None = None
    pmcid: str | None = None
    year: int | None = None
    journal: str | None = None
    authors: list[str] = Field(default_factory=list)
    publication_types: list[str] = Field(default_factory=list)
    content_type: str = "article"
    status: str | None = None
    flags: Flags = Field(default_factory=Flags)
    relations: list[Relation] = Field(default_factory=list)
    passages: list[Passage] = Field(default_factory=list)
    annotations: list[Annotation] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    # what the source says about reuse: the vocabulary name, and the source's own value
    licence: LicenceName = UNKNOWN
    licence_raw: str | None = None

    def content_hash(self) -> str:
        """sha256 of the canonical JSON of everything that makes this version what it is:
        ``model_dump(mode="json")`` without :data:`HASH_EXCLUDED`, with sorted keys, no spaces
        and raw (UTF-8) non-ASCII.

        Upstream version labels are part of it; harvest-time details are not (annotations
        and the licence neither: :data:`HASH_EXCLUDED`). Pinned hashes and a property test in
        ``tests/pipeline/test_records.py`` hold the definition. (A hand-written serializer of
        the same bytes saved ~26 µs of CPU per record, within the noise of a build: removed.)
        """
        payload = self.model_dump(mode="json", exclude=set(HASH_EXCLUDED))
        canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class Refusal(BaseModel):
    """A record a parser dropped because it cannot be cited: its id or its version label
    breaks the handle grammar (see :mod:`pipeline.sources.citable`). ``reason`` is the
    grammar rule (the same text for every record refused for it, so refusals can be counted);
    ``value`` the offending id or version (cut to 80 characters); ``record_id`` is set when
    the id itself is valid (a bad version), so the harvest knows the record still exists."""

    model_config = ConfigDict(frozen=True)

    reason: str
    value: str
    record_id: str | None = None


class ParseResult(BaseModel):
    """What ``citeseal parse`` prints: the records of one body plus paging hints, and the
    records refused at parse time."""

    source: str
    records: list[Record] = Field(default_factory=list)
    ids: list[str] = Field(default_factory=list)
    count: int | None = None
    next: str | None = None
    annotations: dict[str, list[Annotation]] = Field(default_factory=dict)
    notices: list[Relation] = Field(default_factory=list)
    meta: dict[str, Any] = Field(default_factory=dict)  # paging details (e.g. esearch WebEnv)
    refused: list[Refusal] = Field(default_factory=list)


def refusal_counts(refusals: Iterable[Refusal]) -> dict[str, int]:
    """How many records were refused for each reason (reasons in first-seen order): the one
    count of refusals, for the build's manifest, the client's log and ``citeseal parse``."""
    counts: dict[str, int] = {}
    for refusal in refusals:
        counts[refusal.reason] = counts.get(refusal.reason, 0) + 1
    return counts
