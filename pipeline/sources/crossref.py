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

Licence: ``license[]`` entries (``URL``, ``start``, ``content-version``, ``delay-in-days``)
that cover the version of record (``content-version`` ``vor`` or ``unspecified``; ``am`` and
``tdm`` licences grant nothing for the published text) from publication (no
``delay-in-days``, or 0): when they all name one licence (:mod:`audit.licences`), that is the
record's; none, or several that disagree, is ``unknown``. ``licence_raw`` lists every entry
as ``URL (content-version, start date)``.

Crossref's silence is not a clean bill: without a retraction among the updates,
``retracted`` stays ``None``. :func:`apply_relations` merges relations found here into a
record from another source (True wins; unknown stays unknown).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import parse_qsl, urlsplit

from pydantic import BeforeValidator, Field, StrictBool

from audit import licences
from pipeline.errors import ParseError, TerminalHarvestError
from pipeline.http import HttpClient
from pipeline.records import Flags, ParseResult, Passage, Record, Relation
from pipeline.sources import jsonshape as shape
from pipeline.sources.base import ById, Plugin, Rate, Request, Search, Shapes, Step
from pipeline.sources.crossref_replay import REPLAY
from pipeline.sources.markup import sections, strip_markup
from pipeline.sources.paging import send, walk
from pipeline.sources.spec_types import DOI, Strict, id_list, lower
from pipeline.xmlsafe import load_json

if TYPE_CHECKING:
    import httpx

    from pipeline.sources.base import EnrichContext

SOURCE = "crossref"
WORKS_URL = "https://api.crossref.org/works"
ROWS = 100
# DOIs OR-ed into one ``filter=doi:…,doi:…`` request: the repeated filter is ORed (API-FACTS
# §4), ``rows`` may be 1000, but the URL grows ~40 bytes a DOI; 50 keeps it near 2 kB
DOI_BATCH = 50
# DOIs OR-ed into one ``filter=updates:…,updates:…`` request: the same URL budget (the
# ``updates:`` term is 8 bytes a DOI, ~2.5 kB for 50 DOIs of ~40 bytes, well inside the
# 4-8 kB servers accept); a notice list is paged by ``cursor`` in pages of ``ROWS``
UPDATES_BATCH = 50

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


# -- harvest ---------------------------------------------------------------------------------
def _page_of(body: str | bytes) -> tuple[list[dict[str, Any]], int | None, str | None]:
    """One checked page of an ``updates:`` list: its items, ``total-results``, next cursor."""
    result = parse(body)
    data = load_json(body, what="Crossref works JSON")
    items = [item for _, item in shape.objs(SOURCE, "message.items", data["message"].get("items"))]
    return items, result.count, result.next


def fetch_update_notices(client: HttpClient, dois: Sequence[str]) -> dict[str, list[Relation]]:
    """Notices (retraction, expression of concern, correction…) that update each of ``dois``
    (at most :data:`UPDATES_BATCH`, none holding a ``,``), as relations of the updated record
    (target: the notice's DOI), keyed by the DOI in lower case; a DOI no notice updates maps
    to ``[]``.

    One ``filter=updates:A,updates:B,…`` request (a repeated filter is ORed), paged by
    ``cursor`` until every notice is read: the answer must end (a page shorter than ``rows``
    or without ``next-cursor``) having listed ``total-results`` notices, without a cursor
    repeating, or it is a :class:`~pipeline.errors.ParseError` for the whole batch (the
    harvest lists it as a failure of every DOI in it)."""
    wanted = list(dict.fromkeys(_doi(d) for d in dois))
    if not wanted:
        return {}
    if len(wanted) > UPDATES_BATCH or any("," in d or not d for d in wanted):
        raise TerminalHarvestError(
            f"cannot ask Crossref for the notices of {len(wanted)} DOIs in one filter: at most "
            f"{UPDATES_BATCH}, none empty or holding a ','"
        )
    return walk(client, SOURCE, UpdatesPages(wanted))


class UpdatesPages:
    """The pages of one ``filter=updates:A,updates:B,…`` list (a
    :class:`~pipeline.sources.base.Pager`), checked as :func:`fetch_update_notices` says."""

    def __init__(self, wanted: list[str]) -> None:
        self.wanted = wanted
        self.params: dict[str, str | int] = {
            "filter": ",".join(f"updates:{d}" for d in wanted),
            "rows": ROWS,
            "cursor": "*",
        }
        self.items: list[tuple[str, dict[str, Any]]] = []
        self.total: int | None = None
        self.cursors: set[str] = set()

    def first(self) -> Request:
        return Request(WORKS_URL, self.params)

    def step(self, response: httpx.Response) -> Step:
        page, count, cursor = _page_of(response.content)
        items = self.items
        items.extend((f"message.items[{len(items) + i}]", item) for i, item in enumerate(page))
        self.total = count if self.total is None else self.total
        if cursor is None or (self.total is not None and len(items) >= self.total):
            return Step(None)
        if cursor in self.cursors:
            raise ParseError(
                f"Crossref repeated the cursor of an updates: list after {len(items)} notices"
            )
        self.cursors.add(cursor)
        self.params = {**self.params, "cursor": cursor}
        return Step(Request(WORKS_URL, self.params))

    def result(self) -> dict[str, list[Relation]]:
        if self.total is not None and len(self.items) < self.total:
            raise ParseError(
                f"Crossref listed {len(self.items)} of the {self.total} notices of an updates: "
                "list before it ended"
            )
        return {doi: _notice_relations(self.items, doi) for doi in self.wanted}


def fetch_works(client: HttpClient, dois: Sequence[str]) -> list[Record]:
    """The works of ``dois`` (at most :data:`DOI_BATCH`, none holding a ``,``) in one
    ``/works?filter=doi:…,doi:…`` request; a DOI Crossref does not know is simply absent."""
    wanted = list(dict.fromkeys(_doi(d) for d in dois))
    if not wanted:
        return []
    if len(wanted) > DOI_BATCH or any("," in d for d in wanted):
        raise TerminalHarvestError(
            f"cannot ask Crossref for {len(wanted)} DOIs in one filter: at most {DOI_BATCH}, "
            "none holding a ','"
        )
    params: dict[str, str | int] = {
        "filter": ",".join(f"doi:{d}" for d in wanted),
        "rows": len(wanted),
    }
    response = send(client, SOURCE, Request(WORKS_URL, params))
    result = parse(response.content, url=str(response.request.url))
    client.report_refused(SOURCE, result.refused)
    return result.records


def search_title(client: HttpClient, title: str, limit: int) -> list[Record]:
    """The works nearest ``title`` by Crossref's ``query.bibliographic`` (one page of at most
    ``limit``, best first): the title search of ``citeseal check --online``."""
    params: dict[str, str | int] = {"query.bibliographic": title, "rows": limit}
    response = send(client, SOURCE, Request(WORKS_URL, params))
    result = parse(response.content, url=str(response.request.url))
    client.report_refused(SOURCE, result.refused)
    return result.records[:limit]


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


_DOI_IN_DETAIL = re.compile(r"\b(10\.\d{4,9}/\S+?)\.?(?:\s|$)")


def _notice_dois(relation: Relation) -> set[str]:
    """The DOIs (lower case) that name the notice of ``relation``: its ``doi:`` target, or a
    DOI written in its detail (PubMed's RefSource: "Lancet. 2010;375:445. doi: 10.1016/…")."""
    dois = {relation.target[4:].lower()} if relation.target.startswith("doi:") else set()
    dois.update(found.lower() for found in _DOI_IN_DETAIL.findall(f"{relation.detail or ''} "))
    return dois


def _dedupe(relations: Iterable[Relation]) -> list[Relation]:
    """One relation per notice: a relation is dropped when one kept before has the same kind
    and the same target, or the same kind and a notice DOI in common (PubMed's
    ``retraction_in pmid:N`` whose RefSource names the DOI that Crossref's ``retraction_in
    doi:…`` targets: one retraction, counted once). The first keeps its place, and takes the
    date of the later one when it has none."""
    unique: list[Relation] = []
    for relation in relations:
        dois = _notice_dois(relation)
        for n, kept in enumerate(unique):
            if kept.kind == relation.kind and (
                kept.target == relation.target or dois & _notice_dois(kept)
            ):
                if kept.date is None and relation.date is not None:
                    unique[n] = kept.model_copy(update={"date": relation.date})
                break
        else:
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


def with_notices(
    records: Sequence[Record], notices: Mapping[str, list[Relation] | None]
) -> tuple[list[Record], set[str]]:
    """``records`` with the Crossref notices of their DOIs (``notices``: lower-cased DOI →
    its notices, or None when they could not be fetched) merged in, and the ids of the records
    whose notices are unknown: their retraction flags are made unknown, never false."""
    out: list[Record] = []
    failed: set[str] = set()
    for record in records:
        relations = notices[record.doi.lower()] if record.doi else []
        if relations is None:
            failed.add(record.record_id)
            out.append(_notices_unknown(record))
        else:
            out.append(apply_relations(record, relations) if relations else record)
    return out, failed


def _notices_unknown(record: Record) -> Record:
    """``record`` with the flags Crossref's notices decide made unknown: whether it was
    retracted or drew an expression of concern is not known without them (True stays True,
    e.g. from PubMed's own publication types)."""
    flags = record.flags
    unknown = Flags(
        retracted=True if flags.retracted else None,
        expression_of_concern=True if flags.expression_of_concern else None,
        preprint=flags.preprint,
    )
    return record if unknown == flags else record.model_copy(update={"flags": unknown})


# -- the plug-in -------------------------------------------------------------------------------
DOI_CACHE = 4096  # DOIs whose notices a harvest remembers (a pmid and its pmcid share one)


class CrossrefTitle(Strict):
    """A title to search (``query.bibliographic``), at most ``limit`` works."""

    title: str = Field(min_length=1, max_length=2000)
    limit: Annotated[int, Field(ge=1, le=ROWS, strict=True)] = 5


class CrossrefSpec(Strict):
    """The ``[crossref]`` table of a corpus spec."""

    updates: StrictBool = False  # update notices (retraction, EoC, correction) for every DOI
    # title searches (citeseal check --online); None, not [], so that a spec without them
    # keeps its canonical form and its hash
    titles: list[CrossrefTitle] | None = None
    dois: Annotated[
        list[str],
        id_list(DOI, "a DOI (10.NNNN/suffix, printable ASCII without blanks or ',')"),
        BeforeValidator(lower),
    ] = Field(default_factory=list)


class Updates:
    """Enrichment: Crossref's update notices on every record with a DOI (``[crossref]
    updates = true``), :data:`UPDATES_BATCH` DOIs a request; a batch that fails leaves the
    notices of each of its DOIs unknown (:func:`with_notices`)."""

    adds_records = False

    def enabled(self, spec: Any) -> bool:
        options = spec.options(SOURCE)
        return isinstance(options, CrossrefSpec) and options.updates

    def enrich(self, ctx: EnrichContext, records: list[Record]) -> tuple[list[Record], set[str]]:
        cache: dict[str, list[Relation] | None] = ctx.memo(SOURCE).setdefault("notices", {})
        if len(cache) > DOI_CACHE:
            cache.clear()
        dois = dict.fromkeys(r.doi.lower() for r in records if r.doi)
        asked = [d for d in dois if d not in cache]
        plain = [d for d in asked if "," not in d]
        odd = [[d] for d in asked if "," in d]  # no filter can name it: it fails on its own
        batches = [plain[i : i + UPDATES_BATCH] for i in range(0, len(plain), UPDATES_BATCH)]
        for batch in [*batches, *odd]:
            found = ctx.call(
                SOURCE,
                f"updates {', '.join(batch)}",
                lambda batch=batch: fetch_update_notices(ctx.client, batch),
            )
            for doi in batch:  # a failed batch: the notices of every DOI in it are unknown
                cache[doi] = None if found is None else found.get(doi, [])
            if found is not None:
                ctx.step(SOURCE, "updates", len(batch), f"{len(batch)} DOIs asked")
        return with_notices(records, cache)


def _in_spec(spec: Any) -> bool:
    options = spec.options(SOURCE)
    return isinstance(options, CrossrefSpec) and bool(
        options.updates or options.dois or options.titles
    )


def _title_searches(options: CrossrefSpec) -> list[Search]:
    return [
        Search(
            f"search {q.title!r}",
            q.title,
            lambda client, q=q: search_title(client, q.title, q.limit),
        )
        for q in options.titles or ()
    ]


PLUGIN = Plugin(
    name=SOURCE,
    schemes=("doi",),
    base_url="https://api.crossref.org",
    parse_body=parse,
    # list queries: 3/s in the polite pool (with a mailto), 1/s without (Dec 2025 limits)
    rate=Rate("api.crossref.org", 3.0, without_contact=1.0),
    options=CrossrefSpec,
    rank=90,  # after every other source: its works by DOI come last
    counts_ids=True,
    shapes=Shapes(hosts=(("api.crossref.org", ""),), json=(("message-type",),)),
    by_id={"doi": ById("works", DOI_BATCH, lambda client, ids: fetch_works(client, ids))},
    enrichment=Updates(),
    replay=REPLAY,
    polite_params=lambda settings: {"mailto": settings.email} if settings.email else {},
    table_searches=_title_searches,
    table_ids=lambda options: {"doi": options.dois},
    spec_test=_in_spec,
)
