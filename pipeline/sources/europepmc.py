"""Europe PMC REST: search JSON (``resultType=core`` or ``lite``) and ``fullTextXML``.

Records: ``source`` MED → ``pmid:N``, PMC → ``pmcid:PMCN``, PPR → ``ppr:PPRN`` (a preprint:
``flags.preprint`` True, ``version`` = its ``versionNumber`` when present); results from other
Europe PMC sources (patents, Agricola…) are skipped. Passage paths are those of PubMed:
``title`` and ``abstract.N``, the abstract split at its ``<h4>`` headings (the heading is the
passage section). ``fullTextXML`` gives a ``pmcid:`` record (see :mod:`pipeline.sources.jats`).

Licence: a result's ``license`` field (``cc by``…; :mod:`audit.licences` normalises it,
``CC-BY``), ``unknown`` without one; a ``fullTextXML`` record takes the JATS ``<license>``'s.

Flags: a core result carries ``pubTypeList`` and ``commentCorrectionList``, so ``retracted``
and ``expression_of_concern`` are True/False; a lite result leaves them unknown (``None``).
Every ``commentCorrectionList`` entry becomes a relation: its type is PubMed's RefType in
words ("Retraction in" → ``retraction_in``, "Update of" → ``update_of``, "Comment in" →
``comment_in``: :func:`pipeline.records.relation_kind`), and "Preprint of" → ``preprint_of``,
"Preprint in" → ``has_preprint``.

Notices (pubType "Retraction of Publication" / "retraction", "Published Erratum" /
"correction", "Expression of Concern" / "expression-of-concern") are kept as records whose
``content_type`` names the notice; the records of the same parse, and of all the pages of one
:func:`search_records`, that a notice concerns get the inverse relation and flag
(:mod:`pipeline.sources.notices`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import parse_qsl, urlsplit

from pydantic import Field, StrictBool

from audit import licences
from pipeline.errors import ParseError, TerminalHarvestError
from pipeline.http import HttpClient
from pipeline.records import (
    NOTICE_CONTENT_TYPES,
    Flags,
    ParseResult,
    Passage,
    Record,
    Relation,
    relation_kind,
)
from pipeline.sources import citable, jats
from pipeline.sources import jsonshape as shape
from pipeline.sources.base import (
    Asked,
    ById,
    Part,
    Plugin,
    Rate,
    ReplayKind,
    ReplayShape,
    Request,
    Search,
    Shapes,
    Single,
    Split,
    Step,
    Unit,
    page_size,
    replay_ids,
)
from pipeline.sources.markup import sections, strip_markup
from pipeline.sources.notices import apply_notices
from pipeline.sources.paging import send, walk
from pipeline.sources.spec_types import PMCID, PPR, Limit, Strict, Window, full_date, id_list
from pipeline.xmlsafe import load_json, parse_xml

if TYPE_CHECKING:
    import httpx

    from pipeline.sources.base import EnrichContext

SOURCE = "europepmc"
BASE = "https://www.ebi.ac.uk/europepmc/webservices/rest/"
SEARCH_URL = BASE + "search"
PAGE_MAX = 1000

SCHEMES = {"MED": "pmid", "PMC": "pmcid", "PPR": "ppr"}
PREPRINT_TYPES: dict[str, str] = {"preprint of": "preprint_of", "preprint in": "has_preprint"}


# -- parsing -------------------------------------------------------------------------------
def parse(body: str | bytes, *, url: str | None = None) -> ParseResult:
    """Parse a Europe PMC search JSON body or a ``fullTextXML`` JATS body.

    Every field read is type-checked (:mod:`pipeline.sources.jsonshape`); a result whose id
    cannot be cited is refused (:mod:`pipeline.sources.citable`).
    """
    del url
    head = (body[:200] if isinstance(body, bytes) else body[:200].encode()).lstrip()
    if head.startswith(b"<"):
        root = parse_xml(body, what="Europe PMC fullTextXML (JATS)")
        article = [jats.parse_article(root, source=SOURCE)]
        records, refused = citable.partition(article, citable.of_record)
        return ParseResult(source=SOURCE, records=records, refused=refused)
    data = load_json(body, what="Europe PMC search JSON")
    if not isinstance(data, dict) or not isinstance(data.get("resultList"), dict):
        if isinstance(data, dict) and "errCode" in data:
            message = shape.text(SOURCE, "errMsg", data.get("errMsg"))
            raise ParseError(f"Europe PMC answered with an error: {shape.snippet(message)}")
        raise ParseError("expected Europe PMC search JSON (an object with 'resultList')")
    results = shape.opt_arr(SOURCE, "resultList.result", data["resultList"].get("result"))
    found = (
        _record(where, item) for where, item in shape.objs(SOURCE, "resultList.result", results)
    )
    records, refused = citable.partition((r for r in found if r is not None), citable.of_record)
    records = apply_notices(records)
    request = shape.opt_obj(SOURCE, "request", data.get("request"))
    cursor = shape.opt_str(SOURCE, "request.cursorMark", request.get("cursorMark"))
    following = shape.opt_str(SOURCE, "nextCursorMark", data.get("nextCursorMark"))
    next_cursor = following if following and following != cursor and results else None
    return ParseResult(
        source=SOURCE,
        records=records,
        ids=[r.record_id for r in records],
        count=shape.opt_int(SOURCE, "hitCount", data.get("hitCount")),
        next=next_cursor,
        refused=refused,
    )


def _target(source: str | None, ident: str | None) -> str | None:
    if not ident:
        return None
    scheme = SCHEMES.get((source or "").upper())
    if scheme == "pmcid" and not ident.upper().startswith("PMC"):
        ident = f"PMC{ident}"
    return f"{scheme}:{ident}" if scheme else None


def _relations(where: str, item: dict[str, Any]) -> list[Relation]:
    relations = []
    path = shape.key(where, "commentCorrectionList")
    entries = shape.opt_obj(SOURCE, path, item.get("commentCorrectionList"))
    path = shape.key(path, "commentCorrection")
    for at, entry in shape.objs(SOURCE, path, entries.get("commentCorrection")):
        written = " ".join(shape.text(SOURCE, f"{at}.type", entry.get("type")).split())
        kind = PREPRINT_TYPES.get(written.lower()) or relation_kind(written)
        target = _target(
            shape.opt_str(SOURCE, f"{at}.source", entry.get("source")),
            shape.opt_id(SOURCE, f"{at}.id", entry.get("id")),
        )
        if kind and target:
            reference = shape.opt_str(SOURCE, f"{at}.reference", entry.get("reference"))
            detail = strip_markup(reference) or None
            relations.append(Relation(kind=kind, target=target, source=SOURCE, detail=detail))
    return relations


def _content_type(source: str, pub_types: set[str]) -> str:
    """``preprint`` for a PPR result; a notice's type (PubMed or JATS spelling, see
    :data:`pipeline.records.NOTICE_CONTENT_TYPES`); ``preprint`` by pubType; else ``article``."""
    if source == "PPR":
        return "preprint"
    for pub_type, kind in NOTICE_CONTENT_TYPES.items():
        if pub_type in pub_types:
            return kind
    return "preprint" if "preprint" in pub_types else "article"


def _authors(where: str, item: dict[str, Any]) -> list[str]:
    path = shape.key(where, "authorList")
    listed = shape.opt_obj(SOURCE, path, item.get("authorList"))
    authors = []
    for at, author in shape.objs(SOURCE, f"{path}.author", listed.get("author")):
        name = shape.opt_str(SOURCE, f"{at}.fullName", author.get("fullName")) or shape.opt_str(
            SOURCE, f"{at}.collectiveName", author.get("collectiveName")
        )
        if name:
            authors.append(name)
    written = shape.text(SOURCE, f"{where}.authorString", item.get("authorString"))
    if not authors and written:
        authors = [a.strip(" .") for a in written.split(",") if a.strip(" .")]
    return authors


def _journal(where: str, item: dict[str, Any], source: str) -> str | None:
    info = shape.opt_obj(SOURCE, f"{where}.journalInfo", item.get("journalInfo"))
    journal_obj = shape.opt_obj(SOURCE, f"{where}.journalInfo.journal", info.get("journal"))
    journal = shape.opt_str(
        SOURCE, f"{where}.journalInfo.journal.title", journal_obj.get("title")
    ) or shape.opt_str(SOURCE, f"{where}.journalTitle", item.get("journalTitle"))
    if not journal and source == "PPR":
        details = shape.opt_obj(
            SOURCE, f"{where}.bookOrReportDetails", item.get("bookOrReportDetails")
        )
        journal = shape.opt_str(
            SOURCE, f"{where}.bookOrReportDetails.publisher", details.get("publisher")
        )
    return journal


def _metadata(where: str, item: dict[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    for field, name in (("isOpenAccess", "open_access"), ("inEPMC", "in_epmc")):
        if field in item:
            metadata[name] = shape.opt_str(SOURCE, f"{where}.{field}", item[field]) == "Y"
    first = shape.opt_str(SOURCE, f"{where}.firstPublicationDate", item.get("firstPublicationDate"))
    if first:
        metadata["first_publication_date"] = first
    return metadata


def _record(where: str, item: dict[str, Any]) -> Record | None:
    source = shape.text(SOURCE, f"{where}.source", item.get("source")).upper()
    scheme = SCHEMES.get(source)
    pmid = shape.opt_id(SOURCE, f"{where}.pmid", item.get("pmid"))
    ident = shape.opt_id(SOURCE, f"{where}.id", item.get("id")) or ""
    if scheme == "pmid":
        ident = pmid or ident
    if scheme is None or not ident:
        return None
    record_id = _target(source, ident)
    title = strip_markup(shape.opt_str(SOURCE, f"{where}.title", item.get("title")))
    passages = [Passage(path="title", section="Title", text=title)] if title else []
    abstract = shape.opt_str(SOURCE, f"{where}.abstractText", item.get("abstractText"))
    for n, (label, text) in enumerate(sections(abstract), start=1):
        passages.append(Passage(path=f"abstract.{n}", section=label, text=text))
    pub_type_list = item.get("pubTypeList")
    types_path = f"{where}.pubTypeList"
    pub_types = shape.strs(
        SOURCE,
        f"{types_path}.pubType",
        shape.opt_obj(SOURCE, types_path, pub_type_list).get("pubType"),
    )
    lowered = {p.lower() for p in pub_types}
    relations = _relations(where, item)
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
    content_type = _content_type(source, lowered)
    version = (
        shape.opt_id(SOURCE, f"{where}.versionNumber", item.get("versionNumber"))
        if source == "PPR"
        else None
    )
    year = shape.opt_id(SOURCE, f"{where}.pubYear", item.get("pubYear"))
    return Record(
        record_id=record_id or "",
        source=SOURCE,
        version=version,
        title=title,
        doi=shape.opt_str(SOURCE, f"{where}.doi", item.get("doi")),
        pmid=pmid,
        pmcid=citable.pmcid(shape.opt_str(SOURCE, f"{where}.pmcid", item.get("pmcid"))),
        year=int(year) if year and year.isascii() and year.isdigit() else None,
        journal=_journal(where, item, source),
        authors=_authors(where, item),
        publication_types=pub_types,
        content_type=content_type,
        status=shape.opt_str(SOURCE, f"{where}.publicationStatus", item.get("publicationStatus")),
        flags=Flags(retracted=retracted, expression_of_concern=eoc, preprint=preprint),
        relations=relations,
        passages=passages,
        metadata=_metadata(where, item),
        **_licence(where, item),
    )


def _licence(where: str, item: dict[str, Any]) -> dict[str, Any]:
    """A result's ``license`` (``cc by``, ``cc by-nc-nd``, ``cc0``: no version) as the
    vocabulary names it; ``unknown`` without one (``isOpenAccess`` alone names no licence)."""
    raw = licences.cut(shape.opt_str(SOURCE, f"{where}.license", item.get("license")))
    return {"licence": licences.normalise(raw), "licence_raw": raw}


# -- harvest ---------------------------------------------------------------------------------
class SearchPages:
    """The pages of one search (a :class:`~pipeline.sources.base.Pager`): records matching
    ``query`` (core JSON), paged with cursorMark up to ``limit``. Paging ends when
    ``nextCursorMark`` is absent, repeats, or a page comes back empty."""

    def __init__(self, query: str, *, limit: int) -> None:
        self.query, self.limit = query, limit
        self.records: list[Record] = []
        self.cursor = "*"
        self.seen = {self.cursor}

    def _request(self) -> Request | None:
        if len(self.records) >= self.limit:
            return None
        params: dict[str, str | int] = {
            "query": self.query,
            "resultType": "core",
            "format": "json",
            "pageSize": min(PAGE_MAX, self.limit - len(self.records)),
            "cursorMark": self.cursor,
        }
        return Request(SEARCH_URL, params)

    def first(self) -> Request | None:
        return self._request()

    def step(self, response: httpx.Response) -> Step:
        result = parse(response.content)
        self.records.extend(result.records)
        if result.next is None or result.next in self.seen:
            return Step(None, result.refused)
        self.cursor = result.next
        self.seen.add(self.cursor)
        return Step(self._request(), result.refused)

    def result(self) -> list[Record]:
        return apply_notices(self.records[: self.limit])


def search_records(client: HttpClient, query: str, *, limit: int) -> list[Record]:
    """Records matching ``query`` (core JSON), paged with cursorMark up to ``limit``
    (:class:`SearchPages`)."""
    return walk(client, SOURCE, SearchPages(query, limit=limit))


def fetch_full_text(client: HttpClient, pmcid: str) -> Record | None:
    """The open-access full text of ``pmcid`` (``PMC`` and digits, or the digits alone) as a
    ``pmcid:`` record; None when there is none. Anything else is a TerminalHarvestError
    before a request is made: the PMCID is part of the URL."""
    ident = pmcid if pmcid.startswith("PMC") else f"PMC{pmcid}"
    bad = citable.refusal(f"pmcid:{ident}")
    if bad is not None:
        raise TerminalHarvestError(
            f"no full text asked for {shape.snippet(pmcid, 80)!r}: {bad.reason}"
        )
    response = send(client, SOURCE, Request(f"{BASE}{ident}/fullTextXML", expect=(200, 404)))
    if response.status_code == 404 or not response.content.strip():
        return None
    result = parse(response.content)
    client.report_refused(SOURCE, result.refused)
    return result.records[0] if result.records else None


# -- the plug-in -------------------------------------------------------------------------------
ID_CHUNK = 25  # preprint ids or PMCIDs OR-ed into one query


class EuropePmcQuery(Window):
    query: str = Field(min_length=1)
    limit: Limit

    def effective_query(self) -> str:
        """The query with the date window as Europe PMC syntax (``FIRST_PDATE:[a TO b]``)."""
        if not (self.mindate or self.maxdate):
            return self.query
        low = full_date(self.mindate, "01", "01") if self.mindate else "1800-01-01"
        high = full_date(self.maxdate, "12", "31") if self.maxdate else "3000-12-31"
        return f"({self.query}) AND FIRST_PDATE:[{low} TO {high}]"


class EuropePmcSpec(Strict):
    """The ``[europepmc]`` table of a corpus spec."""

    queries: list[EuropePmcQuery] = Field(default_factory=list)
    ids: Annotated[list[str], id_list(PPR, "a Europe PMC preprint id (PPR…)")] = Field(
        default_factory=list
    )
    pmcids: Annotated[list[str], id_list(PMCID, "a PMCID (PMC + 1 to 10 digits)")] = Field(
        default_factory=list
    )
    full_text: StrictBool = False  # fullTextXML for every open-access PMCID met in the corpus


def fetch_preprints(client: HttpClient, ids: list[str]) -> list[Record]:
    """Preprints by id (``EXT_ID:… AND SRC:PPR``)."""
    query = "(" + " OR ".join(f"EXT_ID:{i}" for i in ids) + ") AND SRC:PPR"
    return search_records(client, query, limit=len(ids))


def fetch_pmcids(client: HttpClient, ids: list[str]) -> list[Record]:
    """The records carrying PMCIDs (``PMCID:… OR …``)."""
    query = " OR ".join(f"PMCID:{i}" for i in ids)
    return search_records(client, query, limit=len(ids))


def _pmcid_of(record: Record) -> str:
    return f"pmcid:{record.pmcid}" if record.pmcid else record.record_id


class FullText:
    """Enrichment: the open-access full text of every PMCID met, as ``pmcid:`` records
    (``[europepmc] full_text = true``)."""

    adds_records = True

    def enabled(self, spec: Any) -> bool:
        options = spec.options(SOURCE)
        return isinstance(options, EuropePmcSpec) and options.full_text

    def enrich(self, ctx: EnrichContext, records: list[Record]) -> tuple[list[Record], set[str]]:
        held = {r.record_id for r in records}
        wanted = dict.fromkeys(r.pmcid for r in records if r.pmcid)
        ctx.fetch_each(SOURCE, "pmcid", [p for p in wanted if f"pmcid:{p}" not in held])
        return records, set()


# -- replay by meaning (pipeline.replay_match, docs/sources.md) ------------------------------
# A by-id request: .../europepmc/webservices/rest/search with query=(EXT_ID:A OR EXT_ID:B)
# AND SRC:PPR, resultType=core, format=json, cursorMark=*, pageSize >= the ids asked.
# Its parts: one per preprint result of a resultType=core answer (a lite result lacks what a
# by-id answer holds). A raw fullTextXML body is the exchange of its PMCID's full text.
_PPR = re.compile(r"PPR\d{1,12}")
_EPMC_QUERY = re.compile(r"\((EXT_ID:\S+(?: OR EXT_ID:\S+)*)\) AND SRC:PPR")
_SEARCH_PATH = "/europepmc/webservices/rest/search"


def _normal_ppr(raw: str) -> str | None:
    value = raw.strip().upper()
    return value if _PPR.fullmatch(value) else None


def _preprints_answer(asked: Asked, held: Sequence[Part]) -> tuple[int, str, str]:
    query = "(" + " OR ".join(f"EXT_ID:{i}" for i in asked.ids) + ") AND SRC:PPR"
    values = [json.loads(p.fragment) for p in held]
    data = {
        "version": "6.9",
        "hitCount": len(values),
        "nextCursorMark": "*",
        "request": {
            "queryString": query,
            "resultType": "CORE",
            "cursorMark": "*",
            "pageSize": asked.size,
            "sort": "",
            "synonym": False,
        },
        "resultList": {"result": values},
    }
    return 200, "application/json", json.dumps(data, ensure_ascii=False)


PREPRINTS = ReplayKind("europepmc-ppr", "preprint", "ppr", _normal_ppr, _preprints_answer)


def _asked(path: str, params: dict[str, str]) -> Asked | None:
    if path != _SEARCH_PATH:
        return None
    if params.keys() != {"query", "resultType", "format", "pageSize", "cursorMark"}:
        return None
    query = _EPMC_QUERY.fullmatch(params["query"].strip())
    if not query or params["resultType"].lower() != "core" or params["format"] != "json":
        return None
    ids = replay_ids(PREPRINTS, [t.removeprefix("EXT_ID:") for t in query.group(1).split(" OR ")])
    size = page_size(params["pageSize"])
    if not ids or params["cursorMark"] != "*" or size is None or size < len(ids):
        return None
    return Asked(PREPRINTS.name, ids, size=size)


def _results(value: Any) -> list[Any]:
    listed = value.get("resultList") if isinstance(value, dict) else None
    items = listed.get("result") if isinstance(listed, dict) else None
    return items if isinstance(items, list) else []


def _split(value: Any, url: str | None, asked: Asked | None) -> Split:
    del asked
    split = Split()
    if not isinstance(value, dict):
        return split  # a full text (XML)
    query = dict(parse_qsl(urlsplit(url).query)) if url else {}
    echoed = value.get("request")
    kind = query.get("resultType") if url else None
    if kind is None and isinstance(echoed, dict) and isinstance(echoed.get("resultType"), str):
        kind = echoed["resultType"]
    preprints = [i for i in _results(value) if isinstance(i, dict) and i.get("source") == "PPR"]
    if preprints and (kind or "lite").lower() != "core":
        split.notes.append(
            f"{len(preprints)} preprint result(s) not placed: not resultType=core (a lite "
            "result lacks what a by-id answer holds)"
        )
        return split
    for item in preprints:
        text = json.dumps(item, ensure_ascii=False)
        split.units.append(Unit(PREPRINTS.name, text, f'{{"resultList": {{"result": [{text}]}}}}'))
    return split


def _full_text_url(record_id: str) -> str | None:
    scheme, _, pmcid = record_id.partition(":")
    return f"{BASE}{pmcid}/fullTextXML" if scheme == "pmcid" else None


REPLAY = ReplayShape(
    kinds=(PREPRINTS,),
    asked=_asked,
    split=_split,
    xml_roots=("article",),
    json_keys=("resultList", "errCode"),
    items=_results,
    kept=frozenset({404}),  # no full text for a PMCID: replayed as recorded
    raw_url=_full_text_url,
)


PLUGIN = Plugin(
    name=SOURCE,
    schemes=("pmid", "pmcid", "ppr"),
    base_url=BASE.rstrip("/"),
    parse_body=parse,
    rate=Rate("www.ebi.ac.uk", 5.0),  # no published figure: stay conservative
    options=EuropePmcSpec,
    rank=20,
    shapes=Shapes(
        hosts=(("www.ebi.ac.uk", "/europepmc/"),),
        xml=(b"<article",),
        json=(("resultList",), ("hitCount", "request")),
    ),
    by_id={
        "ppr": ById(
            "preprints",
            ID_CHUNK,
            lambda client, ids: fetch_preprints(client, ids),
            chunk=ID_CHUNK,
        ),
        "pmcid": ById(
            "pmcids",
            ID_CHUNK,
            lambda client, ids: fetch_pmcids(client, ids),
            chunk=ID_CHUNK,
            answers=_pmcid_of,
            carried=True,
            refresh=False,  # the lineage's pmcid: records are full texts: asked again below
        ),
    },
    singles={"pmcid": Single("full text", lambda client, p: fetch_full_text(client, p))},
    enrichment=FullText(),
    replay=REPLAY,
    table_searches=lambda options: [
        Search(
            f"search {q.query!r}",
            q.query,
            lambda client, q=q: search_records(client, q.effective_query(), limit=q.limit),
        )
        for q in options.queries
    ],
    table_ids=lambda options: {"ppr": options.ids, "pmcid": options.pmcids},
)
