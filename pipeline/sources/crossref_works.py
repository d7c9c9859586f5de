"""Crossref works JSON, parsed (pure): a ``work`` or ``work-list`` message → ``doi:`` records.

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

Licence: ``license[]`` entries (``URL``, ``start``, ``content-version``, ``delay-in-days``)
that cover the version of record (``content-version`` ``vor`` or ``unspecified``; ``am`` and
``tdm`` licences grant nothing for the published text) from publication (no
``delay-in-days``, or 0): when they all name one licence (:mod:`audit.licences`), that is the
record's; none, or several that disagree, is ``unknown``. ``licence_raw`` lists every entry
as ``URL (content-version, start date)``.

Crossref's silence is not a clean bill: without a retraction among the updates,
``retracted`` stays ``None``. The requests and the plug-in are in
:mod:`pipeline.sources.crossref`, the notices merged into other records in
:mod:`pipeline.sources.crossref_notices`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from audit import licences
from pipeline.errors import ParseError
from pipeline.records import Flags, ParseResult, Passage, Record, Relation
from pipeline.sources import jsonshape as shape
from pipeline.sources.markup import sections, strip_markup
from pipeline.xmlsafe import load_json

SOURCE = "crossref"
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


def _doi(value: str | None) -> str:
    return (value or "").strip().lower()


def _date(where: str, value: object) -> str | None:
    """``YYYY[-MM[-DD]]`` from a Crossref date object (``{"date-parts": [[2023, 5, 1]]}``)."""
    date = shape.opt_obj(SOURCE, where, value)
    parts = shape.opt_arr(SOURCE, f"{where}.date-parts", date.get("date-parts"))
    if not parts:
        return None
    first = shape.opt_arr(SOURCE, f"{where}.date-parts[0]", parts[0])
    numbers: list[int] = []
    for n, part in enumerate(first[:3]):
        number = shape.opt_int(SOURCE, f"{where}.date-parts[0][{n}]", part)
        if number is None or not 0 <= number <= 9999:
            break
        numbers.append(number)
    if not numbers:
        return None
    return "-".join(f"{n:04d}" if i == 0 else f"{n:02d}" for i, n in enumerate(numbers))


def _detail(where: str, entry: dict[str, Any]) -> str:
    label = shape.opt_str(SOURCE, f"{where}.label", entry.get("label"))
    kind = shape.opt_str(SOURCE, f"{where}.type", entry.get("type"))
    bits = [label or kind or "update"]
    source = shape.opt_str(SOURCE, f"{where}.source", entry.get("source"))
    if source:
        bits.append(f"source: {source}")
    record = shape.opt_id(SOURCE, f"{where}.record-id", entry.get("record-id"))
    if record:
        bits.append(f"record {record}")
    return "; ".join(bits)


def _update_kind(where: str, entry: dict[str, Any]) -> tuple[str, str]:
    raw = shape.text(SOURCE, f"{where}.type", entry.get("type"))
    kind = raw.strip().lower().replace("-", "_").replace(" ", "_")
    return UPDATE_KINDS.get(kind, ("update_in", "update_in"))


def _updates(where: str, item: dict[str, Any], name: str) -> list[tuple[str, str, dict[str, Any]]]:
    """``(path, doi, entry)`` of each ``update-to`` / ``updated-by`` entry with a DOI."""
    out = []
    for at, entry in shape.objs(SOURCE, f"{where}.{name}", item.get(name)):
        doi = _doi(shape.opt_str(SOURCE, f"{at}.DOI", entry.get("DOI")))
        if doi:
            out.append((at, doi, entry))
    return out


def _notice_relations(
    items: Iterable[tuple[str, dict[str, Any]]], only: str | None
) -> list[Relation]:
    """Relations each work updated by these notices gains (target: the notice's DOI).

    ``only`` keeps the entries updating that DOI (the ``updates:`` filter of the request);
    entries reporting the same update (publisher and Retraction Watch) are merged.
    """
    merged: dict[tuple[str, str, str], Relation] = {}
    for where, item in items:
        notice = _doi(shape.opt_str(SOURCE, f"{where}.DOI", item.get("DOI")))
        for at, updated, entry in _updates(where, item, "update-to"):
            if not notice or (only is not None and updated != only):
                continue
            kind = _update_kind(at, entry)[0]
            key = (updated, kind, notice)
            relation = Relation(
                kind=kind,
                target=f"doi:{notice}",
                source=SOURCE,
                detail=f"{_detail(at, entry)}; updates doi:{updated}",
                date=_date(f"{at}.updated", entry.get("updated")),
            )
            first = merged.get(key)
            if first is None:
                merged[key] = relation
            elif first.detail and relation.detail:
                extra = _detail(at, entry)
                head, _, tail = first.detail.rpartition("; updates ")
                merged[key] = first.model_copy(
                    update={"detail": f"{head} | {extra}; updates {tail}"}
                )
    return list(merged.values())


def _relations(where: str, item: dict[str, Any]) -> list[Relation]:
    relations: list[Relation] = []
    for name, side in (("update-to", 1), ("updated-by", 0)):
        for at, target, entry in _updates(where, item, name):
            relations.append(
                Relation(
                    kind=_update_kind(at, entry)[side],
                    target=f"doi:{target}",
                    source=SOURCE,
                    detail=_detail(at, entry),
                    date=_date(f"{at}.updated", entry.get("updated")),
                )
            )
    links = shape.opt_obj(SOURCE, f"{where}.relation", item.get("relation"))
    for name, entries in links.items():
        kind = RELATION_TYPES.get(name)
        if kind is None:
            continue
        for at, entry in shape.objs(SOURCE, f"{where}.relation.{name}", entries):
            target = shape.text(SOURCE, f"{at}.id", entry.get("id")).strip()
            id_type = shape.opt_str(SOURCE, f"{at}.id-type", entry.get("id-type")) or "doi"
            if target and id_type.lower() == "doi":
                relations.append(Relation(kind=kind, target=f"doi:{target.lower()}", source=SOURCE))
    return relations


def _authors(where: str, item: dict[str, Any]) -> list[str]:
    authors = []
    for at, author in shape.objs(SOURCE, f"{where}.author", item.get("author")):
        family = shape.text(SOURCE, f"{at}.family", author.get("family"))
        given = shape.text(SOURCE, f"{at}.given", author.get("given"))
        name = shape.text(SOURCE, f"{at}.name", author.get("name"))
        if family or name:
            authors.append(f"{family} {given}".strip() or name)
    return authors


def _record(where: str, item: dict[str, Any]) -> Record | None:
    doi = _doi(shape.opt_str(SOURCE, f"{where}.DOI", item.get("DOI")))
    if not doi:
        return None
    title = strip_markup(" ".join(shape.strs(SOURCE, f"{where}.title", item.get("title"))))
    passages = [Passage(path="title", section="Title", text=title)] if title else []
    abstract = shape.opt_str(SOURCE, f"{where}.abstract", item.get("abstract"))
    for n, (label, text) in enumerate(sections(abstract), start=1):
        passages.append(Passage(path=f"abstract.{n}", section=label, text=text))
    relations = _relations(where, item)
    work_type = shape.text(SOURCE, f"{where}.type", item.get("type"))
    subtype = shape.text(SOURCE, f"{where}.subtype", item.get("subtype"))
    preprint = work_type == "posted-content" and subtype in {"preprint", ""} if work_type else None
    kinds = {r.kind for r in relations if r.kind.endswith("_in")}
    year = None
    for name in ("published", "issued", "published-print", "published-online", "created"):
        date = _date(f"{where}.{name}", item.get(name))
        if date:
            year = int(date[:4])
            break
    content_type = "preprint" if preprint else (work_type or "article")
    if any(r.kind == "retraction_of" for r in relations):
        content_type = "retraction_notice"
    elif any(r.kind == "expression_of_concern_for" for r in relations):
        content_type = "expression_of_concern"
    relations = _merge_same(relations)
    journal = " ".join(shape.strs(SOURCE, f"{where}.container-title", item.get("container-title")))
    return Record(
        record_id=f"doi:{doi}",
        source=SOURCE,
        title=title,
        doi=doi,
        year=year,
        journal=journal or None,
        authors=_authors(where, item),
        publication_types=[t for t in (work_type, subtype) if t],
        content_type=content_type,
        flags=Flags(
            retracted=True if kinds & {"retraction_in"} else None,
            expression_of_concern=True if "expression_of_concern_in" in kinds else None,
            preprint=preprint,
        ),
        relations=relations,
        passages=passages,
        **_licence(where, item),
    )


def _licence(where: str, item: dict[str, Any]) -> dict[str, Any]:
    """The ``licence`` and ``licence_raw`` of a work's ``license[]`` (module docstring)."""
    raw: list[str] = []
    names: set[str] = set()
    for at, fields in shape.objs(SOURCE, f"{where}.license", item.get("license")):
        url = shape.text(SOURCE, f"{at}.URL", fields.get("URL")).strip()
        version = shape.text(SOURCE, f"{at}.content-version", fields.get("content-version"))
        start = shape.opt_obj(SOURCE, f"{at}.start", fields.get("start"))
        when = shape.text(SOURCE, f"{at}.start.date-time", start.get("date-time"))[:10]
        delay = shape.opt_int(SOURCE, f"{at}.delay-in-days", fields.get("delay-in-days")) or 0
        raw.append(f"{url} ({version or '?'}, {when or '?'})")
        if url and version.lower() in ("vor", "unspecified") and delay == 0:
            names.add(licences.normalise(url))
    licence = names.pop() if len(names) == 1 else licences.UNKNOWN
    return {"licence": licence, "licence_raw": licences.cut("; ".join(raw)) if raw else None}


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
    """Parse a Crossref ``work`` or ``work-list`` message (every field read is type-checked,
    see :mod:`pipeline.sources.jsonshape`)."""
    data = load_json(body, what="Crossref works JSON")
    if not isinstance(data, dict) or "message" not in data:
        raise ParseError("expected Crossref works JSON (an object with 'message')")
    status = data.get("status")
    if status not in (None, "ok"):
        raise ParseError(f"Crossref answered with an error: {shape.snippet(data.get('message'))}")
    kind = shape.opt_str(SOURCE, "message-type", data.get("message-type"))
    message = shape.obj(SOURCE, "message", data["message"])
    if kind == "work-list" or "items" in message:
        items = list(shape.objs(SOURCE, "message.items", message.get("items")))
        count = shape.opt_int(SOURCE, "message.total-results", message.get("total-results"))
        cursor = shape.opt_str(SOURCE, "message.next-cursor", message.get("next-cursor"))
    elif kind == "work" or "DOI" in message:
        items, count, cursor = [("message", message)], 1, None
    else:
        raise ParseError(f"expected a Crossref work or work-list, got message-type {kind!r}")
    records = [r for r in (_record(where, item) for where, item in items) if r]
    only = _updates_filter(url)
    notices = _notice_relations(items, only)
    return ParseResult(
        source=SOURCE,
        records=records,
        ids=[r.record_id for r in records],
        count=count,
        next=cursor if cursor and items and len(items) >= ROWS else None,
        notices=notices,
    )


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
