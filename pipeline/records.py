"""What every source parser returns: pydantic records, passages, annotations and relations.

A :class:`Record` is one version of one upstream record, identified by ``record_id``
(``scheme:id``, the same scheme names as handles: ``pmid``, ``pmcid``, ``ppr``, ``nct``,
``setid``; enrichment-only sources use ``doi:``). Parsers are pure: body in, records out.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SourceName = Literal["pubmed", "europepmc", "pubtator3", "crossref", "clinicaltrials", "openfda"]
SOURCES: tuple[SourceName, ...] = (
    "pubmed",
    "europepmc",
    "pubtator3",
    "crossref",
    "clinicaltrials",
    "openfda",
)


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
)


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

    def content_hash(self) -> str:
        """sha256 of the canonical JSON of everything that makes this version what it is.

        Upstream version labels are part of it; harvest-time details are not.
        """
        payload = self.model_dump(mode="json", exclude={"annotations"})
        canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ParseResult(BaseModel):
    """What ``citeseal parse`` prints: the records of one body plus paging hints."""

    source: str
    records: list[Record] = Field(default_factory=list)
    ids: list[str] = Field(default_factory=list)
    count: int | None = None
    next: str | None = None
    annotations: dict[str, list[Annotation]] = Field(default_factory=dict)
    notices: list[Relation] = Field(default_factory=list)
    meta: dict[str, Any] = Field(default_factory=dict)  # paging details (e.g. esearch WebEnv)
