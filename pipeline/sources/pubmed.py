"""PubMed E-utilities as a source: esearch (JSON or XML) and efetch XML → records.

This module holds the requests, the paging (by id, or through NCBI's history server for a
large search) and the plug-in; the pure parser, with its passage paths, flags and relations,
is :mod:`pipeline.sources.pubmed_xml` (``parse`` is re-exported here).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from lxml import etree  # pyright: ignore[reportAttributeAccessIssue]  (no stubs)
from pydantic import (
    Field,
    PrivateAttr,
    StrictBool,
    ValidationInfo,
    field_validator,
    model_validator,
)

from pipeline.errors import ParseError
from pipeline.http import HttpClient
from pipeline.records import ParseResult, Record
from pipeline.retry_policy import is_rate_limit_body
from pipeline.sources import pubmed_files
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
    Split,
    Step,
    Unit,
    replay_ids,
)
from pipeline.sources.local import SPEC_DIR
from pipeline.sources.paging import send, walk
from pipeline.sources.pubmed_xml import CONTENT_TYPES, ESEARCH_CAP, SOURCE, parse
from pipeline.sources.spec_types import PMID, Limit, Strict, Window, id_list, relative_folder

if TYPE_CHECKING:
    import httpx

    from pipeline.settings import Settings

__all__ = ["CONTENT_TYPES", "ESEARCH_CAP", "SOURCE", "parse"]  # the parser's, re-exported

log = logging.getLogger("citeseal.sources.pubmed")

BASE = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/"
ESEARCH_URL = BASE + "esearch.fcgi"
EFETCH_URL = BASE + "efetch.fcgi"
ESEARCH_PAGE = 500  # ids per esearch page
EFETCH_BATCH = 500  # ids per efetch request
EFETCH_GET_MAX = 200  # above this many ids efetch is sent as a POST
# a query asking for more records than this is read from NCBI's history server (one esearch
# with usehistory=y, then efetch pages by WebEnv and query_key) instead of id pages + efetch
HISTORY_ABOVE = 1000


# -- harvest ---------------------------------------------------------------------------------
class ESearch:
    """The pages of one esearch (a :class:`~pipeline.sources.base.Pager`): PMIDs matching
    ``term``, at most ``limit`` and at most 10,000, 500 per page."""

    def __init__(
        self, term: str, *, limit: int, mindate: str | None = None, maxdate: str | None = None
    ) -> None:
        self.term, self.mindate, self.maxdate = term, mindate, maxdate
        self.limit = min(limit, ESEARCH_CAP)
        self.ids: list[str] = []
        self.known: set[str] = set()  # beside the list: membership in O(1), order kept by it
        self.start = 0

    usehistory = False  # ask esearch to keep the result on NCBI's history server

    def _request(self) -> Request | None:
        if len(self.ids) >= self.limit:
            return None
        retmax = min(ESEARCH_PAGE, self.limit - len(self.ids))
        params = _esearch(self.term, self.start, retmax, self.mindate, self.maxdate)
        return Request(ESEARCH_URL, {**params, "usehistory": "y"} if self.usehistory else params)

    def first(self) -> Request | None:
        return self._request()

    def step(self, response: httpx.Response) -> Step:
        return self._ids(parse(response.content))

    def _ids(self, result: ParseResult) -> Step:
        for pmid in result.ids:
            if pmid not in self.known:
                self.known.add(pmid)
                self.ids.append(pmid)
        if result.next is None:
            return Step(None, result.refused)
        self.start = int(result.next)
        return Step(self._request(), result.refused)

    def result(self) -> list[str]:
        return self.ids[: self.limit]


def _esearch(
    term: str, retstart: int, retmax: int, mindate: str | None, maxdate: str | None
) -> dict[str, str | int]:
    params: dict[str, str | int] = {
        "db": "pubmed",
        "term": term,
        "retstart": retstart,
        "retmax": retmax,
        "retmode": "json",
    }
    if mindate or maxdate:
        params["datetype"] = "pdat"
        params["mindate"] = mindate or "1800"
        params["maxdate"] = maxdate or "3000"
    return params


class LargeSearch(ESearch):
    """A search that may be large (a :class:`~pipeline.sources.base.Pager`): esearch pages as
    :class:`ESearch`, asked with ``usehistory=y``. When the first answer counts more than
    :data:`HISTORY_ABOVE` records (and the limit allows more), the records are read from NCBI's
    history server instead: efetch pages by ``WebEnv``/``query_key`` with ``retstart``/
    ``retmax`` (:data:`EFETCH_BATCH` a page), up to the limit, the count and 10,000; its result
    is then those records, else the PMIDs (also when the answer names no ``WebEnv`` and
    ``QueryKey``: a server without a history is paged by id, as a small search is).

    Fails closed: an efetch page with no record before the count is reached (a truncated
    answer; an expired history is NCBI's own error) is a :class:`~pipeline.errors.ParseError`,
    so the search is a listed failure, never short."""

    usehistory = True

    def __init__(
        self, term: str, *, limit: int, mindate: str | None = None, maxdate: str | None = None
    ) -> None:
        super().__init__(term, limit=limit, mindate=mindate, maxdate=maxdate)
        self.history: tuple[str, str] | None = None  # (WebEnv, query_key)
        self.total = 0
        self.fetched = 0  # records asked from the history so far
        self.records: list[Record] = []

    def _page(self) -> Request | None:
        if self.history is None or self.fetched >= self.total:
            return None
        webenv, key = self.history
        params: dict[str, str | int] = {
            "db": "pubmed",
            "query_key": key,
            "WebEnv": webenv,
            "retstart": self.fetched,
            "retmax": min(EFETCH_BATCH, self.total - self.fetched),
            "retmode": "xml",
        }
        return Request(EFETCH_URL, params)

    def step(self, response: httpx.Response) -> Step:
        result = parse(response.content)
        if self.history is not None:
            if not (result.records or result.refused):
                raise ParseError(
                    f"PubMed's history server answered no record at retstart {self.fetched} of "
                    f"{self.total} for {self.term!r}"
                )
            self.records.extend(result.records)
            self.fetched += min(EFETCH_BATCH, self.total - self.fetched)
            return Step(self._page(), result.refused)
        large = min(self.limit, result.count or 0) > HISTORY_ABOVE
        if self.ids or not large:
            return self._ids(result)
        webenv, key = result.meta.get("webenv"), result.meta.get("querykey")
        if not webenv or not key:  # a server without a history: its ids, paged as any
            return self._ids(result)
        self.history, self.total = (str(webenv), str(key)), min(self.limit, result.count or 0)
        return Step(self._page())  # its ids are not used: the records come from the history

    def result(self) -> list[str] | list[Record]:  # type: ignore[override]
        return self.records[: self.limit] if self.history is not None else super().result()


def search_pages(
    client: HttpClient,
    term: str,
    *,
    limit: int,
    mindate: str | None = None,
    maxdate: str | None = None,
) -> Iterator[list[str] | list[Record]]:
    """:class:`LargeSearch` walked page by page: each history page's records as it arrives
    (memory holds one page, not the whole search), else, at the end, the PMIDs."""
    pager = LargeSearch(term, limit=limit, mindate=mindate, maxdate=maxdate)
    request: Request | None = pager.first()
    while request is not None:
        step = pager.step(send(client, SOURCE, request))
        client.report_refused(SOURCE, list(step.refused))
        request = step.next
        if pager.records:
            yield pager.records
            pager.records = []
    if pager.history is None:
        yield pager.result()


def search(
    client: HttpClient,
    term: str,
    *,
    limit: int,
    mindate: str | None = None,
    maxdate: str | None = None,
) -> list[str] | list[Record]:
    """PMIDs matching ``term``, or its records when it is large (:class:`LargeSearch`)."""
    pages = search_pages(client, term, limit=limit, mindate=mindate, maxdate=maxdate)
    return [item for page in pages for item in page]  # type: ignore[return-value]


def search_ids(
    client: HttpClient,
    term: str,
    *,
    limit: int,
    mindate: str | None = None,
    maxdate: str | None = None,
) -> list[str]:
    """PMIDs matching ``term`` (esearch, paged), at most ``limit`` and at most 10,000."""
    return walk(client, SOURCE, ESearch(term, limit=limit, mindate=mindate, maxdate=maxdate))


def efetch_request(batch: Sequence[str]) -> Request:
    """The efetch of one batch of PMIDs: a GET, or a POST above :data:`EFETCH_GET_MAX` ids."""
    form = {"db": "pubmed", "id": ",".join(batch), "retmode": "xml"}
    if len(batch) > EFETCH_GET_MAX:
        return Request(EFETCH_URL, form=form)
    return Request(EFETCH_URL, form)


def fetch_records(client: HttpClient, pmids: Sequence[str]) -> list[Record]:
    """Records for ``pmids`` (ids deduplicated and sorted; efetch XML in batches of 500, sent
    as a POST when a batch holds more than 200 ids).

    PMIDs that PubMed does not return (deleted, merged) are logged and left out.
    """
    unique = sorted({str(p) for p in pmids}, key=lambda p: (len(p), p))  # numeric order
    records: list[Record] = []
    for start in range(0, len(unique), EFETCH_BATCH):
        response = send(client, SOURCE, efetch_request(unique[start : start + EFETCH_BATCH]))
        result = parse(response.content)
        client.report_refused(SOURCE, result.refused)
        records.extend(result.records)
    missing = set(unique) - {r.pmid for r in records}
    if missing:
        log.warning("PubMed returned no record for %d PMID(s): %s", len(missing), sorted(missing))
    return records


# -- the plug-in -------------------------------------------------------------------------------
class PubMedQuery(Window):
    term: str = Field(min_length=1)
    limit: Limit


class PubMedSpec(Strict):
    """The ``[pubmed]`` table of a corpus spec: queries and ids asked of E-utilities, or the
    folders of baseline and update files to read instead (:mod:`pipeline.sources.pubmed_files`,
    relative to the spec file)."""

    queries: list[PubMedQuery] = Field(default_factory=list)
    ids: Annotated[list[str], id_list(PMID, "a PMID (1 to 10 digits)")] = Field(
        default_factory=list
    )
    annotations: StrictBool = False  # PubTator3 annotations for every PubMed record
    baseline: str | None = Field(default=None, min_length=1)
    updates: str | None = Field(default=None, min_length=1)
    _spec_dir: Path | None = PrivateAttr(default=None)

    @field_validator("baseline", "updates")
    @classmethod
    def _relative(cls, value: str | None) -> str | None:
        return relative_folder(value) if value is not None else None

    @model_validator(mode="after")
    def _files(self, info: ValidationInfo) -> PubMedSpec:
        if self.updates is not None and self.baseline is None:
            raise ValueError("updates needs baseline: update files apply to a baseline")
        if self.baseline is not None and (self.queries or self.ids):
            raise ValueError(
                "baseline cannot be combined with queries or ids: the files are the whole "
                "of what the [pubmed] table holds (their listing withdraws the rest)"
            )
        spec_dir = (info.context or {}).get(SPEC_DIR)
        if isinstance(spec_dir, Path):
            self._spec_dir = spec_dir
        return self

    def folder(self, name: str | None) -> Path | None:
        """A folder of the table on disk; None when not named, or for a spec read back from a
        snapshot (nothing is read then)."""
        return self._spec_dir / name if name is not None and self._spec_dir else None


def ncbi_date(value: str | None) -> str | None:
    """``2020-01-15`` → ``2020/01/15`` (E-utilities date syntax)."""
    return value.replace("-", "/") if value else None


def _search(q: PubMedQuery) -> Search:
    """A query's PMIDs by esearch pages (then fetched by id), or, when it may count more than
    :data:`HISTORY_ABOVE` records, :func:`search` (its records from the history server when
    it does)."""
    dates = {"mindate": ncbi_date(q.mindate), "maxdate": ncbi_date(q.maxdate)}
    if q.limit > HISTORY_ABOVE:
        return Search(
            f"search {q.term!r}",
            q.term,
            lambda client: search_pages(client, q.term, limit=q.limit, **dates),
            gives="pmid",
        )
    return Search(
        f"search {q.term!r}",
        q.term,
        lambda client: search_ids(client, q.term, limit=q.limit, **dates),
        gives="pmid",
    )


def _searches(options: PubMedSpec) -> list[Search]:
    if options.baseline is not None:
        baseline, updates = options.folder(options.baseline), options.folder(options.updates)
        shown = f"files {options.baseline}" + (f" + {options.updates}" if options.updates else "")
        return pubmed_files.searches(baseline, updates, shown)
    return [_search(q) for q in options.queries]


def _polite(settings: Settings) -> dict[str, str]:
    polite = {"tool": settings.tool}
    if settings.email:
        polite["email"] = settings.email
    if settings.ncbi_api_key:
        polite["api_key"] = settings.ncbi_api_key
    return polite


# -- replay by meaning (pipeline.replay_match, docs/sources.md) ------------------------------
# A by-id request: .../efetch.fcgi, GET or POST, db=pubmed, id=A,B, retmode=xml (nothing else).
# Its parts: one per PubmedArticle / PubmedBookArticle of a PubmedArticleSet (its PMID).
_PMID = re.compile(r"[1-9]\d{0,9}")
_DOCTYPE = (
    '<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
    '"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">'
)


def _efetch_answer(asked: Asked, held: Sequence[Part]) -> tuple[int, str, str]:
    del asked
    body = "".join(
        ['<?xml version="1.0" ?>\n', _DOCTYPE, "\n<PubmedArticleSet>\n"]
        + [p.fragment + "\n" for p in held]
        + ["</PubmedArticleSet>\n"]
    )
    return 200, "text/xml; charset=UTF-8", body


EFETCH = ReplayKind(
    "pubmed-efetch",
    "PMID",
    "pmid",
    lambda raw: raw.strip() if _PMID.fullmatch(raw.strip()) else None,
    _efetch_answer,
)


def _asked(path: str, params: dict[str, str]) -> Asked | None:
    if not path.endswith("/efetch.fcgi") or params.keys() != {"db", "id", "retmode"}:
        return None
    if params["db"] != "pubmed" or params["retmode"] != "xml":
        return None
    ids = replay_ids(EFETCH, params["id"].split(","))
    return Asked(EFETCH.name, ids) if ids else None


def _split(root: Any, url: str | None, asked: Asked | None) -> Split:
    del url, asked
    split = Split()
    if isinstance(root, (dict, list)) or etree.QName(root).localname != "PubmedArticleSet":
        return split  # esearch JSON or XML: no record
    for node in root:
        if node.tag in ("PubmedArticle", "PubmedBookArticle"):
            text = etree.tostring(node, encoding="unicode", with_tail=False)
            body = f"<PubmedArticleSet>{text}</PubmedArticleSet>"
            split.units.append(Unit(EFETCH.name, text, body))
    return split


REPLAY = ReplayShape(
    kinds=(EFETCH,),
    asked=_asked,
    split=_split,
    posts=True,
    xml_roots=("PubmedArticleSet", "eSearchResult"),
    json_keys=("esearchresult",),
)


PLUGIN = Plugin(
    name=SOURCE,
    schemes=("pmid",),
    base_url=BASE.rstrip("/"),
    parse_body=parse,
    # NCBI E-utilities usage policy: 3 requests/s, 10 with an API key
    rate=Rate("eutils.ncbi.nlm.nih.gov", 3.0, with_key=10.0, busy=is_rate_limit_body),
    options=PubMedSpec,
    rank=10,
    counts_ids=True,
    shapes=Shapes(
        hosts=(("eutils.ncbi.nlm.nih.gov", ""),),
        xml=(b"<PubmedArticleSet", b"<eSearchResult"),
        json=(("esearchresult",),),
    ),
    by_id={"pmid": ById("efetch", EFETCH_BATCH, lambda client, ids: fetch_records(client, ids))},
    replay=REPLAY,
    polite_params=_polite,
    has_key=lambda settings: bool(settings.ncbi_api_key),
    table_searches=_searches,
    table_ids=lambda options: {"pmid": options.ids},
)
