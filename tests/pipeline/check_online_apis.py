"""Loopback stand-ins of the registries ``citeseal check --online`` asks, in their formats.

One :class:`ThreadingHTTPServer` per source, each on its own loopback address (so each is
paced at its own API's rate, as the client paces by host), all answering from the synthetic
works below (DOI prefix 10.5555, PMIDs above 99000000, NCT99…, arXiv 9912.9…): Crossref
``/works?filter=doi:…``, OpenAlex ``/works?filter=doi:…|…`` and ``search=``, PubMed esearch
JSON and efetch XML, ClinicalTrials.gov ``/studies?filter.ids=``, arXiv ``/api/query``, and
a document server (``/doc/…``). ``override`` answers first (outages, storms, bad bodies);
``seen`` lists every request as ``source URL``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.pipeline.sources.helpers import fixture

Answer = tuple[int, str, bytes]
JSON = "application/json"

HOSTS = {
    "crossref": "127.0.0.11",
    "openalex": "127.0.0.12",
    "pubmed": "127.0.0.13",
    "clinicaltrials": "127.0.0.14",
    "arxiv": "127.0.0.15",
    "europepmc": "127.0.0.16",
    "pubtator3": "127.0.0.17",
    "openfda": "127.0.0.18",
    "documents": "127.0.0.19",
}
BASE_PATHS = {
    "crossref": "",
    "openalex": "",
    "pubmed": "/entrez/eutils",
    "clinicaltrials": "/api/v2",
    "arxiv": "/api",
    "europepmc": "/europepmc/webservices/rest",
    "pubtator3": "/research/pubtator3-api",
    "openfda": "",
}

CROSSREF_WORKS = {
    "10.5555/oa.0001": {
        "DOI": "10.5555/oa.0001",
        "type": "journal-article",
        "title": ["Synthetic ketone bodies and cognition in ageing rats"],
        "author": [{"family": "Núñez", "given": "Ana"}, {"family": "van Dijk", "given": "Piet"}],
        "container-title": ["Journal of Invented Neuroscience"],
        "published": {"date-parts": [[2098, 3, 1]]},
    }
}
PUBMED_ARTICLES = {
    "99200002": (
        "Invented probiotics shorten invented colds: a synthetic trial.",
        "Journal of Synthetic Medicine",
        [("Okafor", "Chidi")],
        "10.5555/pm.0002",
    )
}


def _json(data: object) -> Answer:
    return 200, JSON, json.dumps(data).encode("utf-8")


def pubmed_article(pmid: str) -> str:
    title, journal, authors, doi = PUBMED_ARTICLES[pmid]
    names = "".join(
        f"<Author><LastName>{escape(last)}</LastName><ForeName>{escape(first)}</ForeName>"
        f"<Initials>{first[0]}</Initials></Author>"
        for last, first in authors
    )
    return (
        f'<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM">'
        f'<PMID Version="1">{pmid}</PMID><Article PubModel="Electronic">'
        "<Journal><JournalIssue><PubDate><Year>2097</Year></PubDate></JournalIssue>"
        f"<Title>{escape(journal)}</Title></Journal>"
        f"<ArticleTitle>{escape(title)}</ArticleTitle>"
        "<Abstract><AbstractText>Nothing here happened.</AbstractText></Abstract>"
        f"<AuthorList>{names}</AuthorList>"
        "<PublicationTypeList><PublicationType>Journal Article</PublicationType>"
        "</PublicationTypeList></Article></MedlineCitation><PubmedData>"
        f'<ArticleIdList><ArticleId IdType="pubmed">{pmid}</ArticleId>'
        f'<ArticleId IdType="doi">{doi}</ArticleId></ArticleIdList>'
        "<PublicationStatus>epublish</PublicationStatus></PubmedData></PubmedArticle>"
    )


def _words(text: str) -> set[str]:
    return {w.lower() for w in "".join(c if c.isalnum() else " " for c in text).split()}


def answer(source: str, path: str, params: dict[str, str], form: dict[str, str]) -> Answer:
    """The stand-in's answer to one request (module docstring)."""
    if source == "crossref" and path == "/works":
        dois = [d.removeprefix("doi:") for d in params.get("filter", "").split(",")]
        items = [CROSSREF_WORKS[d] for d in dois if d in CROSSREF_WORKS]
        message = {"total-results": len(items), "items": items, "items-per-page": len(items)}
        return _json({"status": "ok", "message-type": "work-list", "message": message})
    if source == "openalex" and path == "/works":
        works = json.loads(fixture("openalex", "works-doi.json"))["results"]
        if "filter" in params:
            dois = set(params["filter"].removeprefix("doi:").split("|"))
            found = [w for w in works if w["doi"].removeprefix("https://doi.org/").lower() in dois]
        else:
            asked = _words(params.get("search", ""))
            found = [w for w in works if len(asked & _words(w["title"])) >= 4]
        meta = {"count": len(found), "page": 1, "asked_by": params.get("mailto")}  # an echo
        return _json({"meta": meta, "results": found, "group_by": []})
    if source == "pubmed" and path.endswith("/esearch.fcgi"):
        asked = _words(params.get("term", "").replace("[ti]", " "))
        ids = [p for p, a in PUBMED_ARTICLES.items() if asked and asked <= _words(a[0]) | {"and"}]
        result = {"count": str(len(ids)), "retmax": str(len(ids)), "retstart": "0", "idlist": ids}
        return _json({"esearchresult": result})
    if source == "pubmed" and path.endswith("/efetch.fcgi"):
        ids = (form.get("id") or params.get("id", "")).split(",")
        xml = "".join(pubmed_article(p) for p in ids if p in PUBMED_ARTICLES)
        body = f'<?xml version="1.0" ?>\n<PubmedArticleSet>{xml}</PubmedArticleSet>'
        return 200, "text/xml", body.encode("utf-8")
    if source == "europepmc" and path.endswith("/search"):
        if "PMC99200003" in params.get("query", ""):
            return 200, JSON, fixture("europepmc", "search-core-retracted.json")
        request = {"queryString": params.get("query", ""), "resultType": "CORE"}
        return _json({"hitCount": 0, "request": request, "resultList": {"result": []}})
    if source == "clinicaltrials" and path.endswith("/studies"):
        return _json({"studies": []})
    if source == "arxiv" and path == "/api/query":
        ids = params.get("id_list", "").split(",")
        if "9912.90001" in ids:
            return 200, "application/atom+xml", fixture("arxiv", "id-list.xml")
        return 200, "application/atom+xml", fixture("arxiv", "empty.xml")
    return 404, "text/plain", f"no stand-in answer for {source} {path}".encode()


@dataclass
class Standin:
    """The running stand-ins (module docstring)."""

    ports: dict[str, int] = field(default_factory=dict)
    seen: list[str] = field(default_factory=list)
    documents: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    override: Callable[[str, str, dict[str, str]], Answer | None] | None = None

    def url(self, source: str) -> str:
        return f"http://{HOSTS[source]}:{self.ports[source]}{BASE_PATHS.get(source, '')}"

    @property
    def env(self) -> dict[str, str]:
        return {
            f"CITESEAL_{source.upper()}_URL": self.url(source)
            for source in HOSTS
            if source != "documents"
        }

    def _answer(self, source: str, method: str, url: str, body: bytes) -> Answer:
        self.seen.append(f"{source} {url}")
        parts = urlsplit(url)
        params = dict(parse_qsl(parts.query))
        form = dict(parse_qsl(body.decode("utf-8"))) if method == "POST" else {}
        if source == "documents":
            if parts.path in self.documents:
                kind, data = self.documents[parts.path]
                return 200, kind, data
            return 404, "text/plain", b"no such document"
        made = self.override(source, parts.path, params) if self.override else None
        return made if made is not None else answer(source, parts.path, params, form)


def _server(standin: Standin, source: str) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            del format, args

        def _serve(self, method: str) -> None:
            size = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(size) if size else b""
            status, kind, data = standin._answer(source, method, self.path, body)
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

    return ThreadingHTTPServer((HOSTS[source], 0), Handler)


@contextmanager
def standins() -> Iterator[Standin]:
    """Every stand-in, started on its loopback address and stopped at the end."""
    standin = Standin()
    servers = {source: _server(standin, source) for source in HOSTS}
    threads = []
    for source, server in servers.items():
        standin.ports[source] = server.server_address[1]
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
        thread.start()
        threads.append(thread)
    try:
        yield standin
    finally:
        for server in servers.values():
            server.shutdown()
            server.server_close()
        for thread in threads:
            thread.join()
