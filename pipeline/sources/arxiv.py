"""arXiv's export API (``/api/query?id_list=…`` and ``search_query=…``), Atom 1.0 feeds.

Each entry becomes an ``arxiv:<id>`` record, ``<id>`` without its version (new style
``YYMM.NNNNN``, old style ``archive[.XX]/NNNNNNN``), with ``version`` the entry's ``vN`` and
``version_date`` its ``<updated>`` day: ``title`` and ``abstract.1`` (``<summary>``),
authors (``<author><name>``), the year of ``<published>`` (the first version's), journal
``arXiv``, and ``doi`` the DataCite DOI arXiv registers for every e-print,
``10.48550/arxiv.<id>`` (lower case, as every DOI here). Flags: ``preprint`` True; retraction
and expression of concern unknown. The published version, when the authors gave it
(``<arxiv:doi>``), is a ``preprint_of doi:…`` relation, its ``<arxiv:journal_ref>`` in the
detail.

The feed is parsed with :func:`pipeline.xmlsafe.parse_xml` (no DTD, no entities, no network).
An error entry (its ``<id>`` under ``arxiv.org/api/errors``; arXiv answers a bad query so,
with HTTP 400 or 200) is a :class:`~pipeline.errors.ParseError`; an id arXiv does not know is
simply absent from the feed. Rate: one request every 3 s (arXiv's terms of use for its
APIs), one at a time (the harvest sends one request at a time to a host).
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field

from pipeline.errors import ParseError, TerminalHarvestError
from pipeline.http import HttpClient
from pipeline.records import Flags, ParseResult, Passage, Record, Relation
from pipeline.sources.base import ById, Plugin, Rate, Request, Search, Shapes
from pipeline.sources.paging import send
from pipeline.sources.spec_types import Strict, id_list
from pipeline.xmlsafe import local, parse_xml, text_of

SOURCE = "arxiv"
BASE = "https://export.arxiv.org/api"
QUERY_URL = f"{BASE}/query"
ID_BATCH = 50  # ids in one id_list request (arXiv pages up to 2,000 results)
QUERY_LIMIT = 100
ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV_NS = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
DATACITE_PREFIX = "10.48550/arxiv."
# new style YYMM.NNNN[N], old style archive[.XX]/YYMMNNN; a version vN apart
ARXIV_ID = re.compile(r"^(?:[0-9]{4}\.[0-9]{4,5}|[a-z][a-z-]*(?:\.[A-Z]{2})?/[0-9]{7})$")
_ENTRY_ID = re.compile(
    r"^https?://(?:www\.|export\.)?arxiv\.org/abs/"
    r"(?P<id>[0-9]{4}\.[0-9]{4,5}|[a-z][a-z-]*(?:\.[A-Z]{2})?/[0-9]{7})(?P<version>v[1-9][0-9]*)?$"
)
_YEAR = re.compile(r"^([0-9]{4})-")


def _clean(text: str) -> str:
    return " ".join(text.split())


def _child_text(entry: object, tag: str) -> str:
    found = entry.find(tag)  # type: ignore[attr-defined]
    return _clean(text_of(found)) if found is not None else ""


def _record(n: int, entry: object) -> Record:
    raw_id = _child_text(entry, f"{ATOM}id")
    if "arxiv.org/api/errors" in raw_id:
        said = _child_text(entry, f"{ATOM}summary") or raw_id
        raise ParseError(f"arXiv answered with an error: {said[:200]}")
    match = _ENTRY_ID.match(raw_id)
    if match is None:
        raise ParseError(
            f"arXiv entry {n + 1}: expected an id arxiv.org/abs/<arXiv id>, got {raw_id[:120]!r}"
        )
    ident, version = match.group("id"), match.group("version")
    title = _child_text(entry, f"{ATOM}title")
    summary = _child_text(entry, f"{ATOM}summary")
    authors = [
        _clean(text_of(a.find(f"{ATOM}name")))
        for a in entry.findall(f"{ATOM}author")  # type: ignore[attr-defined]
        if a.find(f"{ATOM}name") is not None
    ]
    published = _YEAR.match(_child_text(entry, f"{ATOM}published"))
    updated = _child_text(entry, f"{ATOM}updated")[:10] or None
    passages = [Passage(path="title", section="Title", text=title)] if title else []
    if summary:
        passages.append(Passage(path="abstract.1", section="Abstract", text=summary))
    published_doi = _child_text(entry, f"{ARXIV_NS}doi").lower()
    journal_ref = _child_text(entry, f"{ARXIV_NS}journal_ref")
    relations = (
        [
            Relation(
                kind="preprint_of",
                target=f"doi:{published_doi}",
                source=SOURCE,
                detail=f"journal-ref: {journal_ref}" if journal_ref else None,
            )
        ]
        if published_doi.startswith("10.")
        else []
    )
    category = entry.find(f"{ARXIV_NS}primary_category")  # type: ignore[attr-defined]
    term = category.get("term") if category is not None else None
    return Record(
        record_id=f"arxiv:{ident}",
        source=SOURCE,
        version=version,
        version_date=updated,
        title=title,
        doi=f"{DATACITE_PREFIX}{ident.lower()}",
        year=int(published.group(1)) if published else None,
        journal="arXiv",
        authors=[a for a in authors if a],
        publication_types=["preprint", *([term] if term else [])],
        content_type="preprint",
        flags=Flags(preprint=True),
        relations=relations,
        passages=passages,
    )


def parse(body: str | bytes, *, url: str | None = None) -> ParseResult:
    """Parse an arXiv API Atom feed (module docstring)."""
    del url
    root = parse_xml(body, what="an arXiv API Atom feed")
    if root.tag != f"{ATOM}feed":
        raise ParseError(f"expected an arXiv API Atom feed, got root element <{local(root.tag)}>")
    total = _child_text(root, f"{OPENSEARCH}totalResults")
    count = int(total) if total.isdigit() else None
    records = [_record(n, entry) for n, entry in enumerate(root.findall(f"{ATOM}entry"))]
    return ParseResult(
        source=SOURCE, records=records, ids=[r.record_id for r in records], count=count
    )


# -- harvest ---------------------------------------------------------------------------------
def fetch_ids(client: HttpClient, ids: list[str]) -> list[Record]:
    """The e-prints of ``ids`` (at most :data:`ID_BATCH`, without versions: the latest) in
    one ``id_list`` request; an id arXiv does not know is absent."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return []
    if len(wanted) > ID_BATCH or not all(ARXIV_ID.match(i) for i in wanted):
        raise TerminalHarvestError(
            f"cannot ask arXiv for {len(wanted)} ids in one id_list: at most {ID_BATCH}, each "
            "an arXiv id without its version"
        )
    params: dict[str, str | int] = {"id_list": ",".join(wanted), "max_results": len(wanted)}
    response = send(client, SOURCE, Request(QUERY_URL, params))
    return parse(response.content).records


def search(client: HttpClient, query: str, limit: int) -> list[Record]:
    """The e-prints a ``search_query`` finds (one page, at most ``limit``, by relevance)."""
    params: dict[str, str | int] = {
        "search_query": query,
        "max_results": limit,
        "sortBy": "relevance",
    }
    response = send(client, SOURCE, Request(QUERY_URL, params))
    return parse(response.content).records[:limit]


def title_query(title: str) -> str:
    """A ``search_query`` for a title: every word of it in ``ti:`` (arXiv's title field)."""
    words = re.findall(r"[0-9A-Za-z]+", title)
    return " AND ".join(f"ti:{w}" for w in words[:30])


# -- the plug-in -------------------------------------------------------------------------------
class ArxivQuery(Strict):
    search_query: str = Field(min_length=1, max_length=2000)
    limit: Annotated[int, Field(ge=1, le=QUERY_LIMIT, strict=True)] = 5


class ArxivSpec(Strict):
    """The ``[arxiv]`` table of a corpus spec."""

    ids: Annotated[list[str], id_list(ARXIV_ID, "an arXiv id without its version")] = Field(
        default_factory=list
    )
    queries: list[ArxivQuery] = Field(default_factory=list)


PLUGIN = Plugin(
    name=SOURCE,
    schemes=("arxiv",),
    base_url=BASE,
    parse_body=parse,
    rate=Rate("export.arxiv.org", 1 / 3),  # one request every 3 s (arXiv API terms of use)
    options=ArxivSpec,
    rank=80,
    counts_ids=True,
    shapes=Shapes(hosts=(("export.arxiv.org", "/api/"),), xml=(b"http://arxiv.org/schemas/atom",)),
    by_id={"arxiv": ById("id_list", ID_BATCH, lambda client, ids: fetch_ids(client, ids))},
    table_searches=lambda options: [
        Search(
            f"search {q.search_query!r}",
            q.search_query,
            lambda client, q=q: search(client, q.search_query, q.limit),
        )
        for q in options.queries
    ],
    table_ids=lambda options: {"arxiv": options.ids},
)
