"""Europe PMC REST: search JSON (``resultType=core`` or ``lite``) and ``fullTextXML``.

Records: ``source`` MED → ``pmid:N``, PMC → ``pmcid:PMCN``, PPR → ``ppr:PPRN`` (a preprint:
``flags.preprint`` True, ``version`` = its ``versionNumber`` when present); results from other
Europe PMC sources (patents, Agricola…) are skipped. Passage paths are those of PubMed:
``title`` and ``abstract.N``, the abstract split at its ``<h4>`` headings (the heading is the
passage section). ``fullTextXML`` gives a ``pmcid:`` record (see :mod:`pipeline.sources.jats`).

Flags: a core result carries ``pubTypeList`` and ``commentCorrectionList``, so ``retracted``
and ``expression_of_concern`` are True/False; a lite result leaves them unknown (``None``).
``commentCorrectionList`` entries become relations ("Retraction in" → ``retraction_in``,
"Preprint of" → ``preprint_of``, "Preprint in" → ``has_preprint``…).
"""

from __future__ import annotations

from typing import Any

from pipeline.errors import ParseError
from pipeline.http import HttpClient
from pipeline.records import Flags, ParseResult, Passage, Record, Relation
from pipeline.sources import jats
from pipeline.sources.markup import sections, strip_markup
from pipeline.xmlsafe import load_json, parse_xml

SOURCE = "europepmc"
BASE = "https://www.ebi.ac.uk/europepmc/webservices/rest/"
SEARCH_URL = BASE + "search"
PAGE_MAX = 1000

SCHEMES = {"MED": "pmid", "PMC": "pmcid", "PPR": "ppr"}
COMMENT_TYPES: dict[str, str] = {
    "retraction in": "retraction_in",
    "retraction of": "retraction_of",
    "expression of concern in": "expression_of_concern_in",
    "expression of concern for": "expression_of_concern_for",
    "erratum in": "erratum_in",
    "erratum for": "erratum_for",
    "retracted and republished in": "retracted_and_republished_in",
    "corrected and republished in": "correction_in",
    "update in": "update_in",
    "preprint of": "preprint_of",
    "preprint in": "has_preprint",
}
CONTENT_TYPES: tuple[tuple[str, str], ...] = (
    ("retraction of publication", "retraction_notice"),
    ("expression of concern", "expression_of_concern"),
    ("published erratum", "erratum"),
    ("preprint", "preprint"),
)


# -- parsing -------------------------------------------------------------------------------
def parse(body: str | bytes, *, url: str | None = None) -> ParseResult:
    """Parse a Europe PMC search JSON body or a ``fullTextXML`` JATS body."""
    del url
    head = (body[:200] if isinstance(body, bytes) else body[:200].encode()).lstrip()
    if head.startswith(b"<"):
        root = parse_xml(body, what="Europe PMC fullTextXML (JATS)")
        return ParseResult(source=SOURCE, records=[jats.parse_article(root, source=SOURCE)])
    data = load_json(body, what="Europe PMC search JSON")
    if not isinstance(data, dict) or not isinstance(data.get("resultList"), dict):
        if isinstance(data, dict) and "errCode" in data:
            raise ParseError(f"Europe PMC answered with an error: {data.get('errMsg', '')}"[:240])
        raise ParseError("expected Europe PMC search JSON (an object with 'resultList')")
    results = data["resultList"].get("result") or []
    records = [r for r in (_record(item) for item in results if isinstance(item, dict)) if r]
    cursor = (data.get("request") or {}).get("cursorMark")
    following = data.get("nextCursorMark")
    next_cursor = following if following and following != cursor and results else None
    return ParseResult(
        source=SOURCE,
        records=records,
        ids=[r.record_id for r in records],
        count=_int(data.get("hitCount")),
        next=next_cursor,
    )


def _int(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def _target(source: str | None, ident: str | None) -> str | None:
    if not ident:
        return None
    scheme = SCHEMES.get((source or "").upper())
    if scheme == "pmcid" and not ident.upper().startswith("PMC"):
        ident = f"PMC{ident}"
    return f"{scheme}:{ident}" if scheme else None


def _relations(item: dict[str, Any]) -> list[Relation]:
    relations = []
    entries = (item.get("commentCorrectionList") or {}).get("commentCorrection") or []
    for entry in entries:
        kind = COMMENT_TYPES.get(str(entry.get("type", "")).strip().lower())
        target = _target(entry.get("source"), entry.get("id"))
        if kind and target:
            detail = strip_markup(entry.get("reference")) or None
            relations.append(Relation(kind=kind, target=target, source=SOURCE, detail=detail))
    return relations


def _record(item: dict[str, Any]) -> Record | None:
    source = str(item.get("source", "")).upper()
    scheme = SCHEMES.get(source)
    ident = str(item.get("id") or "")
    if scheme == "pmid":
        ident = str(item.get("pmid") or ident)
    if scheme is None or not ident:
        return None
    record_id = _target(source, ident)
    title = strip_markup(item.get("title"))
    passages = [Passage(path="title", section="Title", text=title)] if title else []
    for n, (label, text) in enumerate(sections(item.get("abstractText")), start=1):
        passages.append(Passage(path=f"abstract.{n}", section=label, text=text))
    pub_type_list = item.get("pubTypeList")
    pub_types = [str(p) for p in (pub_type_list or {}).get("pubType") or []]
    lowered = {p.lower() for p in pub_types}
    relations = _relations(item)
    kinds = {r.kind for r in relations}
    known = pub_type_list is not None  # core results; lite results lack these lists
    retracted = (
        "retracted publication" in lowered
        or bool(kinds & {"retraction_in", "retracted_and_republished_in"})
        if known
        else None
    )
    eoc = "expression_of_concern_in" in kinds if known else None
    preprint = source == "PPR" or "preprint" in lowered
    content_type = "preprint" if source == "PPR" else "article"
    for pt, kind in CONTENT_TYPES:
        if pt in lowered and source != "PPR":
            content_type = kind
            break
    journal_info = item.get("journalInfo") or {}
    journal = (journal_info.get("journal") or {}).get("title") or item.get("journalTitle")
    if not journal and source == "PPR":
        journal = (item.get("bookOrReportDetails") or {}).get("publisher")
    authors = [
        str(a.get("fullName") or a.get("collectiveName"))
        for a in (item.get("authorList") or {}).get("author") or []
        if a.get("fullName") or a.get("collectiveName")
    ]
    if not authors and item.get("authorString"):
        authors = [a.strip(" .") for a in str(item["authorString"]).split(",") if a.strip(" .")]
    version = item.get("versionNumber") if source == "PPR" else None
    metadata: dict[str, Any] = {}
    for key, name in (("isOpenAccess", "open_access"), ("inEPMC", "in_epmc")):
        if key in item:
            metadata[name] = item[key] == "Y"
    if item.get("firstPublicationDate"):
        metadata["first_publication_date"] = item["firstPublicationDate"]
    pmcid = item.get("pmcid")
    return Record(
        record_id=record_id or "",
        source=SOURCE,
        version=str(version) if version is not None else None,
        title=title,
        doi=item.get("doi"),
        pmid=item.get("pmid"),
        pmcid=pmcid,
        year=_int(item.get("pubYear")),
        journal=journal,
        authors=authors,
        publication_types=pub_types,
        content_type=content_type,
        status=item.get("publicationStatus"),
        flags=Flags(retracted=retracted, expression_of_concern=eoc, preprint=preprint),
        relations=relations,
        passages=passages,
        metadata=metadata,
    )


# -- harvest ---------------------------------------------------------------------------------
def search_records(client: HttpClient, query: str, *, limit: int) -> list[Record]:
    """Records matching ``query`` (core JSON), paged with cursorMark up to ``limit``.

    Paging ends when ``nextCursorMark`` is absent, repeats, or a page comes back empty.
    """
    records: list[Record] = []
    cursor = "*"
    seen = {cursor}
    while len(records) < limit:
        params: dict[str, str | int] = {
            "query": query,
            "resultType": "core",
            "format": "json",
            "pageSize": min(PAGE_MAX, limit - len(records)),
            "cursorMark": cursor,
        }
        result = parse(client.get(SEARCH_URL, params=params, source=SOURCE).content)
        records.extend(result.records)
        if result.next is None or result.next in seen:
            break
        cursor = result.next
        seen.add(cursor)
    return records[:limit]


def fetch_full_text(client: HttpClient, pmcid: str) -> Record | None:
    """The open-access full text of ``pmcid`` as a ``pmcid:`` record; None when there is none."""
    ident = pmcid if pmcid.upper().startswith("PMC") else f"PMC{pmcid}"
    response = client.get(f"{BASE}{ident}/fullTextXML", source=SOURCE, expect=(200, 404))
    if response.status_code == 404 or not response.content.strip():
        return None
    records = parse(response.content).records
    return records[0] if records else None
