"""What a by-id request asks, and the one answer the held parts of it make (pure).

A harvest asks six kinds of request by identifier; each is read from its method, URL and
form by a small grammar (:func:`asked_of`), credential and polite parameters ignored. A
request that deviates from its grammar in any way (another parameter, another value, a
page past the first) is no by-id request and is matched only by its exact key
(:mod:`pipeline.replay`):

=====================  ==================================================================
kind                   request (every other parameter absent)
=====================  ==================================================================
``pubmed-efetch``      ``eutils…/efetch.fcgi`` GET or POST ``db=pubmed``, ``id=A,B``,
                       ``retmode=xml``
``pubtator3-export``   ``…/pubtator3-api/publications/export/biocjson?pmids=A,B``
``europepmc-ppr``      ``…/europepmc/webservices/rest/search`` ``query=(EXT_ID:A OR
                       EXT_ID:B) AND SRC:PPR``, ``resultType=core``, ``format=json``,
                       ``cursorMark=*``, ``pageSize`` ≥ the ids asked
``crossref-updates``   ``api.crossref.org/works`` (or ``/v1/works``) ``filter=updates:D1,
                       updates:D2…``, optional ``rows``, optional ``cursor=*``
``clinicaltrials-ids`` ``clinicaltrials.gov/api/v2/studies`` ``filter.ids=A,B``, optional
                       ``fields``, ``format=json``, ``pageSize`` ≥ the ids asked
``openfda-setids``     ``api.fda.gov/drug/label.json`` ``search=set_id:"a" OR
                       set_id:"b"``, ``limit`` ≥ the ids asked, optional ``skip=0``,
                       ``sort``
=====================  ==================================================================

An id is normalised as its source spells it in a record (a PMID's digits, ``NCT…`` and
``PPR…`` upper case, a set id and a DOI lower case). :func:`answer` merges the parts held
for the ids asked into one body in that API's own format, in the order the ids were asked;
ids held as *absent* (an answer that was asked for them and did not hold them) are left
out, as the API left them out.

A ClinicalTrials.gov part remembers the ``fields`` projection it was recorded under (None:
the whole study). It serves a request whose fields it covers (:func:`serves`): every field
asked is a module path (``protocolSection.statusModule``) inside one it holds, and the
study is cut down to the fields asked, as the API would; fields named as pieces
(``NCTId``) are served only by a part recorded with exactly those fields.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from pipeline.redact import CREDENTIAL_PARAMS

PUBMED_EFETCH = "pubmed-efetch"
PUBTATOR3_EXPORT = "pubtator3-export"
EUROPEPMC_PPR = "europepmc-ppr"
CROSSREF_UPDATES = "crossref-updates"
CLINICALTRIALS_IDS = "clinicaltrials-ids"
OPENFDA_SETIDS = "openfda-setids"
KINDS: dict[str, tuple[str, str]] = {  # kind → (source, what its ids are)
    PUBMED_EFETCH: ("pubmed", "PMID"),
    PUBTATOR3_EXPORT: ("pubtator3", "PMID"),
    EUROPEPMC_PPR: ("europepmc", "preprint"),
    CROSSREF_UPDATES: ("crossref", "DOI"),
    CLINICALTRIALS_IDS: ("clinicaltrials", "NCT id"),
    OPENFDA_SETIDS: ("openfda", "set id"),
}

_PMID = re.compile(r"[1-9]\d{0,9}")
_NCT = re.compile(r"NCT\d{8}")
_PPR = re.compile(r"PPR\d{1,12}")
_SET_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_DOI = re.compile(r"10\.\d{4,9}/[^\s,]+")
_EPMC_QUERY = re.compile(r"\((EXT_ID:\S+(?: OR EXT_ID:\S+)*)\) AND SRC:PPR")
_OPENFDA_SEARCH = re.compile(r'set_id:"[^"]+"(?: OR set_id:"[^"]+")*')
_DOCTYPE = (
    '<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
    '"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">'
)
_PIECE = re.compile(r"[A-Z]")  # ClinicalTrials.gov piece names start upper case, paths lower


@dataclass(frozen=True)
class Asked:
    """A by-id request: its kind, the ids in the order asked, and (ClinicalTrials.gov) the
    ``fields`` asked, as a sorted tuple (None: the whole study)."""

    kind: str
    ids: tuple[str, ...]
    fields: tuple[str, ...] | None = None
    size: int | None = None  # the page size or limit asked (echoed in the answer's meta)


@dataclass(frozen=True)
class Part:
    """What is held for one id of one kind: its fragment (an XML element or a JSON value as
    text), or ``held`` False (an answer asked for it and did not hold it)."""

    kind: str
    ident: str
    held: bool
    fragment: str = ""
    fields: tuple[str, ...] | None = None


def normal_id(kind: str, raw: str) -> str | None:
    """``raw`` as the records of ``kind`` spell it, or None when it is no such id."""
    value = raw.strip()
    if kind in (PUBMED_EFETCH, PUBTATOR3_EXPORT):
        return value if _PMID.fullmatch(value) else None
    if kind == EUROPEPMC_PPR:
        value = value.upper()
        return value if _PPR.fullmatch(value) else None
    if kind == CLINICALTRIALS_IDS:
        value = value.upper()
        return value if _NCT.fullmatch(value) else None
    if kind == OPENFDA_SETIDS:
        value = value.lower()
        return value if _SET_ID.fullmatch(value) else None
    if kind == CROSSREF_UPDATES:
        value = value.lower()
        return value if _DOI.fullmatch(value) else None
    return None


def _params(text: str) -> dict[str, str] | None:
    """The parameters of a query or form, credentials dropped; None when one repeats."""
    found: dict[str, str] = {}
    for key, value in parse_qsl(text, keep_blank_values=True):
        if key.lower() in CREDENTIAL_PARAMS:
            continue
        if key in found:
            return None
        found[key] = value
    return found


def _ids(kind: str, raws: Sequence[str]) -> tuple[str, ...] | None:
    """The ids, normalised and deduplicated in order; None when one is no such id."""
    ids: dict[str, None] = {}
    for raw in raws:
        ident = normal_id(kind, raw)
        if ident is None:
            return None
        ids[ident] = None
    return tuple(ids) or None


def _size(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None


def asked_of(method: str, url: str, form: str | None = None) -> Asked | None:
    """The by-id request a method, URL and form make (module docstring), else None."""
    parts = urlsplit(url)
    host, path = (parts.hostname or "").lower(), parts.path
    method = method.upper()
    if method == "POST" and host == "eutils.ncbi.nlm.nih.gov" and not parts.query:
        params = _params(form or "")
    elif method == "GET":
        params = _params(parts.query)
    else:
        return None
    if params is None:
        return None
    if host == "eutils.ncbi.nlm.nih.gov" and path.endswith("/efetch.fcgi"):
        return _efetch(params)
    if host == "www.ncbi.nlm.nih.gov" and path.endswith(
        "/pubtator3-api/publications/export/biocjson"
    ):
        ids = _ids(PUBTATOR3_EXPORT, params.pop("pmids", "").split(","))
        return Asked(PUBTATOR3_EXPORT, ids) if ids and not params else None
    if host == "www.ebi.ac.uk" and path == "/europepmc/webservices/rest/search":
        return _preprints(params)
    if host == "api.crossref.org" and path in ("/works", "/v1/works"):
        return _updates(params)
    if host in ("clinicaltrials.gov", "www.clinicaltrials.gov") and path == "/api/v2/studies":
        return _trials(params)
    if host == "api.fda.gov" and path == "/drug/label.json":
        return _labels(params)
    return None


def _efetch(params: dict[str, str]) -> Asked | None:
    if params.keys() != {"db", "id", "retmode"}:
        return None
    if params["db"] != "pubmed" or params["retmode"] != "xml":
        return None
    ids = _ids(PUBMED_EFETCH, params["id"].split(","))
    return Asked(PUBMED_EFETCH, ids) if ids else None


def _preprints(params: dict[str, str]) -> Asked | None:
    if params.keys() != {"query", "resultType", "format", "pageSize", "cursorMark"}:
        return None
    query = _EPMC_QUERY.fullmatch(params["query"].strip())
    if not query or params["resultType"].lower() != "core" or params["format"] != "json":
        return None
    ids = _ids(EUROPEPMC_PPR, [t.removeprefix("EXT_ID:") for t in query.group(1).split(" OR ")])
    size = _size(params["pageSize"])
    if not ids or params["cursorMark"] != "*" or size is None or size < len(ids):
        return None
    return Asked(EUROPEPMC_PPR, ids, size=size)


def _updates(params: dict[str, str]) -> Asked | None:
    rows = params.pop("rows", None)
    if params.pop("cursor", "*") != "*":
        return None  # a page past the first
    if params.keys() != {"filter"} or (rows is not None and _size(rows) is None):
        return None
    terms = params["filter"].split(",")
    if not all(t.startswith("updates:") for t in terms):
        return None
    ids = _ids(CROSSREF_UPDATES, [t.removeprefix("updates:") for t in terms])
    return Asked(CROSSREF_UPDATES, ids, size=_size(rows)) if ids else None


def _trials(params: dict[str, str]) -> Asked | None:
    fields = params.pop("fields", None)
    size = _size(params.pop("pageSize", "10"))
    if params.pop("format", "json") != "json" or params.keys() != {"filter.ids"}:
        return None
    ids = _ids(CLINICALTRIALS_IDS, params["filter.ids"].split(","))
    if not ids or size is None or size < len(ids):
        return None
    return Asked(CLINICALTRIALS_IDS, ids, fields=field_set(fields), size=size)


def field_set(fields: str | None) -> tuple[str, ...] | None:
    """A ``fields`` parameter as a sorted tuple (None: not given, the whole study)."""
    if fields is None:
        return None
    return tuple(sorted({f.strip() for f in fields.split(",") if f.strip()}))


def _labels(params: dict[str, str]) -> Asked | None:
    params.pop("sort", None)
    if params.pop("skip", "0") != "0":
        return None
    size = _size(params.pop("limit", "1"))
    if params.keys() != {"search"}:
        return None
    search = params["search"].strip()
    if not _OPENFDA_SEARCH.fullmatch(search):
        return None
    ids = _ids(OPENFDA_SETIDS, re.findall(r'set_id:"([^"]+)"', search))
    if not ids or size is None or size < len(ids):
        return None
    return Asked(OPENFDA_SETIDS, ids, size=size)


# -- serving ---------------------------------------------------------------------------------
def _covered(asked: str, held: Sequence[str]) -> bool:
    return any(asked == h or asked.startswith(h + ".") for h in held)


def serves(part: Part, fields: tuple[str, ...] | None) -> bool:
    """Whether a part can answer a request for ``fields`` (module docstring); an absent id
    answers any (the API did not hold the study at all)."""
    if not part.held or part.kind != CLINICALTRIALS_IDS:
        return True
    if fields == part.fields:
        return True
    if fields is None or any(_PIECE.match(f) for f in fields):
        return False
    return part.fields is None or all(_covered(f, part.fields) for f in fields)


def _project(study: Mapping[str, Any], fields: Sequence[str]) -> dict[str, Any]:
    """The study cut down to the module paths of ``fields`` (missing paths are left out)."""
    out: dict[str, Any] = {}
    for field in fields:
        steps = field.split(".")
        node: Any = study
        for step in steps:
            node = node.get(step) if isinstance(node, Mapping) else None
        if node is None:
            continue
        into = out
        for step in steps[:-1]:
            into = into.setdefault(step, {})
        into[steps[-1]] = node
    return out


def answer(asked: Asked, parts: Sequence[Part]) -> tuple[int, str, str]:
    """``(status, content type, body)``: the held parts for ``asked`` as one answer in the
    API's format (``parts`` are those of the ids asked, in order; absent ones are left out)."""
    held = [p for p in parts if p.held]
    texts = [p.fragment for p in held]
    if asked.kind == PUBMED_EFETCH:
        body = "".join(
            ['<?xml version="1.0" ?>\n', _DOCTYPE, "\n<PubmedArticleSet>\n"]
            + [t + "\n" for t in texts]
            + ["</PubmedArticleSet>\n"]
        )
        return 200, "text/xml; charset=UTF-8", body
    values = [json.loads(t) for t in texts]
    data: object
    if asked.kind == PUBTATOR3_EXPORT:
        data = {"PubTator3": values}
    elif asked.kind == EUROPEPMC_PPR:
        query = "(" + " OR ".join(f"EXT_ID:{i}" for i in asked.ids) + ") AND SRC:PPR"
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
    elif asked.kind == CROSSREF_UPDATES:
        items = _unique_items(v for listed in values for v in listed)
        data = {
            "status": "ok",
            "message-type": "work-list",
            "message-version": "1.0.0",
            "message": {
                "facets": {},
                "total-results": len(items),
                "items": items,
                "items-per-page": asked.size or 20,
                "query": {"start-index": 0, "search-terms": None},
            },
        }
    elif asked.kind == CLINICALTRIALS_IDS:
        fields = asked.fields
        studies = [
            _project(v, fields) if fields is not None and p.fields != fields else v
            for p, v in zip(held, values, strict=True)
        ]
        data = {"studies": studies}
    elif asked.kind == OPENFDA_SETIDS:
        if not values:
            body = {"error": {"code": "NOT_FOUND", "message": "No matches found!"}}
            return 404, "application/json; charset=utf-8", json.dumps(body, indent=2)
        meta = {"results": {"skip": 0, "limit": asked.size, "total": len(values)}}
        data = {"meta": meta, "results": values}
    else:
        raise ValueError(f"no answer format for {asked.kind!r}")
    return 200, "application/json", json.dumps(data, ensure_ascii=False)


def _unique_items(items: Any) -> list[Any]:
    """Crossref notices without repeats (a notice updating two DOIs asked is listed once)."""
    seen: set[str] = set()
    out: list[Any] = []
    for item in items:
        key = str(item.get("DOI", "")).lower() if isinstance(item, dict) else ""
        if key and key in seen:
            continue
        seen.add(key)
        out.append(item)
    return out
