"""Place one recorded body: what it answers, split into the parts a by-id answer is made of.

:func:`place` takes a body (and, from a wrapper file, its request and status) and says what
it answers, by parsing it with the source's own pure parser:

* **parts** (:class:`pipeline.replay_match.Part`) — one per record of a by-id kind
  (:mod:`pipeline.replay_match`): a PubMed ``PubmedArticle`` or ``PubmedBookArticle``, a
  PubTator3 document, a Europe PMC preprint result (``resultType=core`` only: a lite result
  lacks what a by-id answer holds), a ClinicalTrials.gov study (with the ``fields`` it was
  recorded under; a raw body is taken as the whole study), an openFDA label. Each part is
  parsed alone with the source's parser, and its id is the id of the record that parse
  gives; a record the parser refuses is noted, not placed. A Crossref part is the list of
  notices that update one DOI, and only a wrapper can give it: the request names the DOI
  (an ``updates:`` filter) and a list that holds fewer items than its ``total-results`` is
  not placed (it is not the whole answer).
* **absent ids** — a wrapper of a by-id request whose whole answer lacks some ids asked:
  the API answered without them, so an answer for them leaves them out too.
* **an exact exchange** — a wrapper of any other request of a known source (a search, a
  page, a full text, a redirect), kept to be matched by its exact key; a raw Europe PMC
  ``fullTextXML`` body becomes the exchange of ``…/PMCn/fullTextXML`` for the PMCID it
  holds.

Otherwise :attr:`Placement.reason` says, in one line, why nothing could be placed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from lxml import etree  # pyright: ignore[reportAttributeAccessIssue]  (no stubs)

from pipeline.errors import ParseError
from pipeline.replay_match import (
    CLINICALTRIALS_IDS,
    CROSSREF_UPDATES,
    EUROPEPMC_PPR,
    KINDS,
    OPENFDA_SETIDS,
    PUBMED_EFETCH,
    PUBTATOR3_EXPORT,
    Asked,
    Part,
    asked_of,
    field_set,
)
from pipeline.sources import parser_for, sources
from pipeline.xmlsafe import Element, load_json, parse_xml

FULL_TEXT_URL = "https://www.ebi.ac.uk/europepmc/webservices/rest/{pmcid}/fullTextXML"
FAILED = frozenset({408, 429, 500, 502, 503, 504})
_XML_ROOTS = {
    "PubmedArticleSet": "pubmed",
    "eSearchResult": "pubmed",
    "article": "europepmc",
    "clinical_study": "clinicaltrials",  # the retired classic API: its parser says so
    "search_results": "clinicaltrials",
}


@dataclass(frozen=True)
class Exchange:
    """A request and its answer, to be written as a wrapper file (credentials stripped)."""

    method: str
    url: str
    status: int
    content_type: str
    body: str
    request_body: str | None = None
    location: str | None = None


@dataclass
class Placement:
    """What one body answers (module docstring)."""

    source: str | None = None
    parts: list[Part] = field(default_factory=list)
    exchange: Exchange | None = None
    reason: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def placed(self) -> bool:
        return bool(self.parts or self.exchange)


def source_of_url(url: str) -> str | None:
    """The registered source whose API a URL belongs to (its ``shapes.hosts``: host and path
    prefix, :class:`pipeline.sources.base.Shapes`), or None."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    for plugin in sources():
        if any(host == h and parts.path.startswith(p) for h, p in plugin.shapes.hosts):
            return plugin.name
    return None


def _sniff(body: str) -> tuple[str | None, Any]:
    """The source a raw body's shape shows, and the parsed XML root or JSON value."""
    head = body.lstrip("\ufeff \t\r\n")
    if not head.startswith(("<", "{", "[")):
        raise ParseError("neither JSON nor XML (a response body starts with {, [ or <)")
    if head.startswith("<"):
        root = parse_xml(body, what="a response body (XML)")
        tag = etree.QName(root).localname if isinstance(root.tag, str) else ""
        return _XML_ROOTS.get(tag), root
    data = load_json(body, what="a response body (JSON or XML)")
    keys = set(data) if isinstance(data, dict) else set()
    if isinstance(data, list):
        first = data[0] if data else None
        return ("pubtator3" if isinstance(first, dict) and "passages" in first else None), data
    for wanted, source in (
        ({"esearchresult"}, "pubmed"),
        ({"PubTator3", "documents", "passages"}, "pubtator3"),
        ({"resultList", "errCode"}, "europepmc"),
        ({"message-type", "message"}, "crossref"),
        ({"studies", "protocolSection", "FullStudiesResponse", "FullStudy"}, "clinicaltrials"),
        ({"results", "meta", "error"}, "openfda"),
    ):
        if keys & wanted:
            return source, data
    return None, data


def place(
    body: str,
    *,
    url: str | None = None,
    method: str = "GET",
    form: str | None = None,
    status: int = 200,
    content_type: str = "",
    location: str | None = None,
) -> Placement:
    """What ``body`` answers (module docstring); ``url`` and the rest come from a wrapper."""
    source = source_of_url(url) if url else None
    if url and source is None:
        host = urlsplit(url).hostname or url[:60]
        return Placement(reason=f"recorded from {host}, which is no registered source's API")
    if status in FAILED:
        return Placement(source, reason=f"a failed answer (HTTP {status}), not a record")
    exchange = (
        Exchange(method.upper(), url, status, content_type, body, form, location) if url else None
    )
    if exchange is not None and (
        300 <= status < 400 or (status == 404 and source == "europepmc")
    ):  # a redirect (replayed hop by hop), Europe PMC's "no full text": kept as recorded
        return Placement(source, exchange=exchange)
    if status != 200 and not (status == 404 and source == "openfda"):
        return Placement(source, reason=f"answered HTTP {status}, which holds no record")
    asked = asked_of(method, url, form) if url else None
    try:
        found, value = _sniff(body)
        source = source or found
        if source is None:
            return Placement(reason=_unknown(value))
        result = parser_for(source)(body, url=url)
    except ParseError as error:
        return Placement(source, reason=f"its body does not parse: {error.message}")
    placement = Placement(source, exchange=exchange if asked is None else None)
    if status == 404 and (asked is None or asked.kind != OPENFDA_SETIDS):
        return placement  # openFDA's no-match to a search: as recorded
    split = _SPLITTERS.get(source)
    if split is not None:
        split(placement, value, url, asked)
    if asked is not None and asked.kind == KIND_OF.get(source) and _whole(source, value, result):
        held = {p.ident for p in placement.parts if p.kind == asked.kind}
        placement.parts += [Part(asked.kind, i, held=False) for i in asked.ids if i not in held]
    full_text = source == "europepmc" and not isinstance(value, (dict, list))
    if full_text and url is None and result.records:
        _full_text(placement, body, result.records[0].record_id, content_type)
    if not placement.placed and placement.reason is None:
        placement.reason = _nothing(source, url, result.records)
    return placement


KIND_OF = {source: kind for kind, (source, _) in KINDS.items()}


def _unknown(value: Any) -> str:
    if isinstance(value, dict):
        keys = ", ".join(sorted(str(k) for k in value)[:6]) or "none"
        return f"a JSON body of no known source (keys: {keys[:120]})"
    if isinstance(value, list):
        return "a JSON list of no known source"
    if value is not None and not isinstance(value, (str, int, float, bool)):
        tag = etree.QName(value).localname if isinstance(value.tag, str) else "?"
        return f"an XML body of no known source (<{tag[:40]}>)"
    return "a JSON value of no known source"


def _nothing(source: str, url: str | None, records: list[Any]) -> str:
    if url is None:
        if records:
            schemes = sorted({r.record_id.partition(":")[0] for r in records})
            return (
                f"a raw {source} body whose records ({', '.join(schemes)}) answer no request "
                "citeseal makes by id"
            )
        return f"a raw {source} body without its request URL: what it answers is unknown"
    return f"a {source} answer with no record to place"


def _whole(source: str, value: Any, result: Any) -> bool:
    """Whether a by-id answer is all the API had for the ids asked: its count of hits is no
    more than it lists, or it has no count and no further page."""
    if source not in ("europepmc", "openfda", "clinicaltrials"):
        return True  # efetch and the PubTator3 export answer every id in one body
    if result.count is not None:
        return result.count <= len(value_items(source, value))
    return result.next is None


def value_items(source: str, value: Any) -> list[Any]:
    """The list of results a JSON answer holds (its record objects)."""
    if not isinstance(value, dict):
        return []
    if source == "europepmc":
        listed = value.get("resultList")
        items = listed.get("result") if isinstance(listed, dict) else None
    elif source == "clinicaltrials":
        items = value.get("studies") if "studies" in value else [value]
    else:
        items = value.get("results")
    return items if isinstance(items, list) else []


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _add(
    placement: Placement,
    kind: str,
    fragment: str,
    parse: Callable[[str], Any],
    *,
    fields: tuple[str, ...] | None = None,
    scheme: str,
) -> None:
    """One part: ``fragment`` parsed alone; its id is that of the record it gives."""
    try:
        result = parse(fragment)
    except ParseError as error:
        placement.notes.append(f"a {KINDS[kind][1]} record not placed: {error.message}")
        return
    for refusal in result.refused:
        placement.notes.append(
            f"a {KINDS[kind][1]} record not placed, its parser refuses it: {refusal.reason} "
            f"({refusal.value!r})"
        )
    ids = [r.record_id for r in result.records] or list(result.ids)
    for record_id in ids[:1]:
        prefix, _, ident = record_id.partition(":")
        if prefix == scheme:
            placement.parts.append(Part(kind, ident, held=True, fragment=fragment, fields=fields))


def _pubmed(placement: Placement, root: Element, url: str | None, asked: Asked | None) -> None:
    del url, asked
    if isinstance(root, (dict, list)) or etree.QName(root).localname != "PubmedArticleSet":
        return  # esearch JSON or XML: no record
    parse = parser_for("pubmed")
    for node in root:
        if node.tag in ("PubmedArticle", "PubmedBookArticle"):
            text = etree.tostring(node, encoding="unicode", with_tail=False)
            _add(
                placement,
                PUBMED_EFETCH,
                text,
                lambda t: parse(f"<PubmedArticleSet>{t}</PubmedArticleSet>"),
                scheme="pmid",
            )


def _pubtator3(placement: Placement, value: Any, url: str | None, asked: Asked | None) -> None:
    del url, asked
    if isinstance(value, list):
        docs = value
    elif isinstance(value, dict) and "passages" in value:
        docs = [value]
    else:
        docs = next((value[k] for k in ("PubTator3", "documents") if k in value), [])
    parse = parser_for("pubtator3")
    for doc in docs:
        _add(placement, PUBTATOR3_EXPORT, _dump(doc), parse, scheme="pmid")


def _europepmc(placement: Placement, value: Any, url: str | None, asked: Asked | None) -> None:
    del asked
    if not isinstance(value, dict):
        return  # a full text (XML)
    query = dict(parse_qsl(urlsplit(url).query)) if url else {}
    echoed = value.get("request")
    kind = query.get("resultType") if url else None
    if kind is None and isinstance(echoed, dict) and isinstance(echoed.get("resultType"), str):
        kind = echoed["resultType"]
    items = value_items("europepmc", value)
    preprints = [i for i in items if isinstance(i, dict) and i.get("source") == "PPR"]
    if preprints and (kind or "lite").lower() != "core":
        placement.notes.append(
            f"{len(preprints)} preprint result(s) not placed: not resultType=core (a lite "
            "result lacks what a by-id answer holds)"
        )
        return
    parse = parser_for("europepmc")
    for item in preprints:
        _add(
            placement,
            EUROPEPMC_PPR,
            _dump(item),
            lambda t: parse(f'{{"resultList": {{"result": [{t}]}}}}'),
            scheme="ppr",
        )


def _crossref(placement: Placement, value: Any, url: str | None, asked: Asked | None) -> None:
    del url
    if asked is None or asked.kind != CROSSREF_UPDATES:
        if placement.exchange is None:
            placement.reason = (
                "a raw Crossref body: only a wrapper whose request names the DOI (an "
                "updates: filter) says which record its notices update"
            )
        return
    message = value.get("message") if isinstance(value, dict) else None
    items = message.get("items", []) if isinstance(message, dict) else []
    total = message.get("total-results") if isinstance(message, dict) else None
    if not isinstance(items, list) or (isinstance(total, int) and total > len(items)):
        placement.reason = (
            f"a Crossref answer that lists {len(items) if isinstance(items, list) else 0} of "
            f"{total} notices: not the whole answer"
        )
        return
    for doi in asked.ids:
        mine = items if len(asked.ids) == 1 else [i for i in items if doi in _updated(i)]
        placement.parts.append(Part(CROSSREF_UPDATES, doi, held=True, fragment=_dump(mine)))


def _updated(item: Any) -> set[str]:
    """The DOIs a Crossref notice updates (its ``update-to`` entries), lower case."""
    entries = item.get("update-to") if isinstance(item, dict) else None
    if not isinstance(entries, list):
        return set()
    return {str(e.get("DOI", "")).lower() for e in entries if isinstance(e, dict)}


def _clinicaltrials(placement: Placement, value: Any, url: str | None, asked: Asked | None) -> None:
    del asked
    fields = field_set(dict(parse_qsl(urlsplit(url).query)).get("fields")) if url else None
    parse = parser_for("clinicaltrials")
    for study in value_items("clinicaltrials", value):
        _add(placement, CLINICALTRIALS_IDS, _dump(study), parse, fields=fields, scheme="nct")


def _openfda(placement: Placement, value: Any, url: str | None, asked: Asked | None) -> None:
    del url, asked
    parse = parser_for("openfda")
    for label in value_items("openfda", value):
        _add(
            placement,
            OPENFDA_SETIDS,
            _dump(label),
            lambda t: parse(f'{{"results": [{t}]}}'),
            scheme="setid",
        )


def _full_text(placement: Placement, body: str, record_id: str, content_type: str) -> None:
    """A raw ``fullTextXML`` body as the exchange of its PMCID's full-text request."""
    scheme, _, pmcid = record_id.partition(":")
    if scheme == "pmcid":
        url = FULL_TEXT_URL.format(pmcid=pmcid)
        placement.exchange = Exchange("GET", url, 200, content_type or "application/xml", body)


_SPLITTERS: dict[str, Callable[[Placement, Any, str | None, Asked | None], None]] = {
    "pubmed": _pubmed,
    "pubtator3": _pubtator3,
    "europepmc": _europepmc,
    "crossref": _crossref,
    "clinicaltrials": _clinicaltrials,
    "openfda": _openfda,
}


def kinds_held(parts: Iterable[Part]) -> dict[str, int]:
    """How many ids each kind holds (absent ones not counted)."""
    counts: dict[str, int] = {}
    for part in parts:
        if part.held:
            counts[part.kind] = counts.get(part.kind, 0) + 1
    return counts
