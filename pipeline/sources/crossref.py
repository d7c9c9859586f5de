"""Crossref REST works (single ``/works/{doi}`` and lists, e.g. the ``updates:{doi}`` filter).

Each work becomes a ``doi:`` record (``title``, and ``abstract.N`` when Crossref has a JATS
abstract, split at its ``<jats:title>`` headings). Signals:

* ``update-to`` (on a *notice*): the notice gets ``retraction_of`` /
  ``expression_of_concern_for`` / ``erratum_for`` relations to the DOIs it updates, and the
  parse result lists, in ``notices``, the relation each updated work gains
  (``retraction_in`` / ``expression_of_concern_in`` / ``correction_in`` / ``update_in``
  → the notice), with the Crossref update label, its source (``publisher`` or
  ``retraction-watch``) and Retraction Watch record id in ``detail``.
* ``updated-by`` (on the *updated* work): the same relations from its side; a retraction
  makes ``retracted`` True.
* ``relation``: ``is-preprint-of`` → ``preprint_of``, ``has-preprint`` → ``has_preprint``,
  ``is-version-of`` / ``has-version`` → ``version_of``.
* ``type: posted-content`` with ``subtype: preprint`` → ``preprint`` True (other types False).

Crossref's silence is not a clean bill: without a retraction among the updates,
``retracted`` stays ``None``. :func:`apply_relations` merges relations found here into a
record from another source (True wins; unknown stays unknown).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from pipeline.errors import ParseError
from pipeline.http import HttpClient
from pipeline.records import Flags, ParseResult, Passage, Record, Relation
from pipeline.sources.markup import sections, strip_markup
from pipeline.xmlsafe import load_json

SOURCE = "crossref"
WORKS_URL = "https://api.crossref.org/works"
ROWS = 100

# Crossref update type → (relation on the updated work, relation on the notice)
UPDATE_KINDS: dict[str, tuple[str, str]] = {
    "retraction": ("retraction_in", "retraction_of"),
    "withdrawal": ("retraction_in", "retraction_of"),
    "removal": ("retraction_in", "retraction_of"),
    "expression_of_concern": ("expression_of_concern_in", "expression_of_concern_for"),
    "correction": ("correction_in", "erratum_for"),
    "erratum": ("erratum_in", "erratum_for"),
    "corrigendum": ("correction_in", "erratum_for"),
}
RELATION_TYPES = {
    "is-preprint-of": "preprint_of",
    "has-preprint": "has_preprint",
    "is-version-of": "version_of",
    "has-version": "version_of",
}


def _doi(value: object) -> str:
    return str(value or "").strip().lower()


def _date(value: Any) -> str | None:
    parts = (value or {}).get("date-parts") if isinstance(value, dict) else None
    if not parts or not parts[0] or parts[0][0] is None:
        return None
    numbers = [int(p) for p in parts[0][:3]]
    return "-".join(f"{n:04d}" if i == 0 else f"{n:02d}" for i, n in enumerate(numbers))


def _detail(entry: dict[str, Any]) -> str:
    bits = [str(entry.get("label") or entry.get("type") or "update")]
    if entry.get("source"):
        bits.append(f"source: {entry['source']}")
    if entry.get("record-id"):
        bits.append(f"record {entry['record-id']}")
    return "; ".join(bits)


def _update_kind(entry: dict[str, Any]) -> tuple[str, str]:
    kind = str(entry.get("type") or "").strip().lower().replace("-", "_").replace(" ", "_")
    return UPDATE_KINDS.get(kind, ("update_in", "update_in"))


def _notice_relations(items: Iterable[dict[str, Any]], only: str | None) -> list[Relation]:
    """Relations each work updated by these notices gains (target: the notice's DOI).

    ``only`` keeps the entries updating that DOI (the ``updates:`` filter of the request);
    entries reporting the same update (publisher and Retraction Watch) are merged.
    """
    merged: dict[tuple[str, str, str], Relation] = {}
    for item in items:
        notice = _doi(item.get("DOI"))
        for entry in item.get("update-to") or []:
            updated = _doi(entry.get("DOI"))
            if not updated or not notice or (only is not None and updated != only):
                continue
            kind = _update_kind(entry)[0]
            key = (updated, kind, notice)
            relation = Relation(
                kind=kind,
                target=f"doi:{notice}",
                source=SOURCE,
                detail=f"{_detail(entry)}; updates doi:{updated}",
                date=_date(entry.get("updated")),
            )
            first = merged.get(key)
            if first is None:
                merged[key] = relation
            elif first.detail and relation.detail:
                extra = _detail(entry)
                head, _, tail = first.detail.rpartition("; updates ")
                merged[key] = first.model_copy(
                    update={"detail": f"{head} | {extra}; updates {tail}"}
                )
    return list(merged.values())


def _record(item: dict[str, Any]) -> Record | None:
    doi = _doi(item.get("DOI"))
    if not doi:
        return None
    title = strip_markup(" ".join(str(t) for t in item.get("title") or []))
    passages = [Passage(path="title", section="Title", text=title)] if title else []
    for n, (label, text) in enumerate(sections(item.get("abstract")), start=1):
        passages.append(Passage(path=f"abstract.{n}", section=label, text=text))
    relations: list[Relation] = []
    for entry in item.get("update-to") or []:
        target = _doi(entry.get("DOI"))
        if target:
            relations.append(
                Relation(
                    kind=_update_kind(entry)[1],
                    target=f"doi:{target}",
                    source=SOURCE,
                    detail=_detail(entry),
                    date=_date(entry.get("updated")),
                )
            )
    for entry in item.get("updated-by") or []:
        target = _doi(entry.get("DOI"))
        if target:
            relations.append(
                Relation(
                    kind=_update_kind(entry)[0],
                    target=f"doi:{target}",
                    source=SOURCE,
                    detail=_detail(entry),
                    date=_date(entry.get("updated")),
                )
            )
    for name, entries in (item.get("relation") or {}).items():
        kind = RELATION_TYPES.get(name)
        if kind is None:
            continue
        for entry in entries:
            target = str(entry.get("id") or "").strip()
            if target and str(entry.get("id-type", "doi")).lower() == "doi":
                relations.append(Relation(kind=kind, target=f"doi:{target.lower()}", source=SOURCE))
    work_type = str(item.get("type") or "")
    subtype = str(item.get("subtype") or "")
    preprint = work_type == "posted-content" and subtype in {"preprint", ""} if work_type else None
    kinds = {r.kind for r in relations if r.kind.endswith("_in")}
    year = None
    for key in ("published", "issued", "published-print", "published-online", "created"):
        date = _date(item.get(key))
        if date:
            year = int(date[:4])
            break
    content_type = "preprint" if preprint else (work_type or "article")
    if any(r.kind == "retraction_of" for r in relations):
        content_type = "retraction_notice"
    elif any(r.kind == "expression_of_concern_for" for r in relations):
        content_type = "expression_of_concern"
    relations = _merge_same(relations)
    return Record(
        record_id=f"doi:{doi}",
        source=SOURCE,
        title=title,
        doi=doi,
        year=year,
        journal=" ".join(str(t) for t in item.get("container-title") or []) or None,
        authors=[
            f"{a.get('family', '')} {a.get('given', '')}".strip() or str(a.get("name", ""))
            for a in item.get("author") or []
            if a.get("family") or a.get("name")
        ],
        publication_types=[t for t in (work_type, subtype) if t],
        content_type=content_type,
        flags=Flags(
            retracted=True if kinds & {"retraction_in"} else None,
            expression_of_concern=True if "expression_of_concern_in" in kinds else None,
            preprint=preprint,
        ),
        relations=relations,
        passages=passages,
    )


def _updates_filter(url: str | None) -> str | None:
    if not url:
        return None
    for key, value in parse_qsl(urlsplit(url).query):
        if key == "filter":
            found = re.search(r"(?:^|,)updates:([^,]+)", value)
            if found:
                return _doi(found.group(1))
    return None


def parse(body: str | bytes, *, url: str | None = None) -> ParseResult:
    """Parse a Crossref ``work`` or ``work-list`` message."""
    data = load_json(body, what="Crossref works JSON")
    if not isinstance(data, dict) or "message" not in data:
        raise ParseError("expected Crossref works JSON (an object with 'message')")
    if data.get("status") not in (None, "ok"):
        raise ParseError(f"Crossref answered with an error: {str(data.get('message'))[:200]}")
    message = data["message"]
    kind = data.get("message-type")
    if kind == "work-list" or (isinstance(message, dict) and "items" in message):
        items = [i for i in message.get("items") or [] if isinstance(i, dict)]
        count = message.get("total-results")
        cursor = message.get("next-cursor")
    elif kind == "work" or (isinstance(message, dict) and "DOI" in message):
        items, count, cursor = [message], 1, None
    else:
        raise ParseError(f"expected a Crossref work or work-list, got message-type {kind!r}")
    records = [r for r in (_record(i) for i in items) if r]
    only = _updates_filter(url)
    notices = _notice_relations(items, only)
    return ParseResult(
        source=SOURCE,
        records=records,
        ids=[r.record_id for r in records],
        count=int(count) if isinstance(count, int) else None,
        next=cursor if cursor and items and len(items) >= ROWS else None,
        notices=notices,
    )


# -- harvest ---------------------------------------------------------------------------------
def fetch_update_relations(client: HttpClient, doi: str) -> list[Relation]:
    """Notices (retraction, expression of concern, correction…) that update ``doi``, as
    relations of the updated record (target: the notice's DOI)."""
    wanted = _doi(doi)
    response = client.get(
        WORKS_URL, params={"filter": f"updates:{wanted}", "rows": ROWS}, source=SOURCE
    )
    return parse(response.content, url=str(response.request.url)).notices


def _merge_same(relations: Iterable[Relation]) -> list[Relation]:
    """One relation per (kind, target); details of duplicates (publisher and Retraction Watch
    reporting the same notice) are joined."""
    merged: dict[tuple[str, str], Relation] = {}
    for relation in relations:
        key = (relation.kind, relation.target)
        first = merged.get(key)
        if first is None:
            merged[key] = relation
        elif relation.detail and relation.detail != first.detail:
            detail = f"{first.detail} | {relation.detail}" if first.detail else relation.detail
            merged[key] = first.model_copy(update={"detail": detail})
    return list(merged.values())


def _dedupe(relations: Iterable[Relation]) -> list[Relation]:
    seen: set[tuple[str, str, str]] = set()
    unique = []
    for relation in relations:
        key = (relation.kind, relation.target, relation.source)
        if key not in seen:
            seen.add(key)
            unique.append(relation)
    return unique


def apply_relations(record: Record, relations: Sequence[Relation]) -> Record:
    """``record`` with ``relations`` merged in and its flags updated (True wins).

    A retraction (``retraction_in``, ``retracted_and_republished_in``) makes ``retracted``
    True, an ``expression_of_concern_in`` makes ``expression_of_concern`` True, a
    ``preprint_of`` makes ``preprint`` True; otherwise flags are left as they were, so an
    unknown (None) flag stays unknown.
    """
    merged = _dedupe([*record.relations, *relations])
    kinds = {r.kind for r in merged}
    flags = record.flags

    def wins(current: bool | None, hit: bool) -> bool | None:
        return True if hit else current

    new_flags = Flags(
        retracted=wins(
            flags.retracted, bool(kinds & {"retraction_in", "retracted_and_republished_in"})
        ),
        expression_of_concern=wins(
            flags.expression_of_concern, "expression_of_concern_in" in kinds
        ),
        preprint=wins(flags.preprint, "preprint_of" in kinds),
    )
    return record.model_copy(update={"relations": merged, "flags": new_flags})
