"""The live bench's loopback APIs: one HTTP server per source that speaks its API's format
and enforces its published limit (:mod:`pipeline.bench.bench_live` drives the harvest).

:class:`LoopbackAPI` is one HTTP server per source, started by the bench on its own loopback
address (``127.0.0.2`` … ``127.0.0.6``, so each is a separate host to the client's pacing, as
the real APIs are), speaking that API's format for the requests a harvest makes: PubMed
esearch JSON and efetch XML (:class:`pipeline.bench.bench_snapshot.SyntheticPubMed`), and
NCBI's history server for the large searches (esearch ``usehistory=y``, then efetch by
``WebEnv``/``query_key``: :func:`with_history`, :func:`history_pmids`),
PubTator3 BioC JSON, Crossref ``updates:`` work-lists (paged by ``cursor``),
ClinicalTrials.gov v2 studies by ``filter.ids`` and openFDA labels by ``set_id`` OR-searches.
Each server holds its API's *published* limit (:data:`LIMITS`, from API-FACTS.md) in a
:class:`TokenBucket` (a one-second window: ``max(1, rate)`` tokens, refilled at ``rate``) and
answers 429 with ``Retry-After`` when a request finds no token. The answers themselves are
pure functions of the request (:class:`Answers`).
"""

from __future__ import annotations

import json
import math
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx

from pipeline.bench.bench_snapshot import (
    FIRST_PMID,
    QUERY_SIZE,
    SECTIONS,
    SyntheticPubMed,
    _sentence,
    article_xml,
)

RETRACTED_EVERY = 100  # every 100th DOI has a Crossref retraction notice

# Published limits, requests/s (API-FACTS.md §1, §3, §4, §5, §6)
LIMITS: Mapping[str, float] = {
    "pubmed": 10.0,  # E-utilities with an API key (3 without)
    "pubtator3": 3.0,  # "no more than 3 requests per second"
    "crossref": 3.0,  # polite pool, list (filter) requests, from December 2025
    "clinicaltrials": 50 / 60,  # about 50 requests a minute per IP
    "openfda": 240 / 60,  # 240 requests a minute
}
HOSTS: Mapping[str, str] = {  # one loopback host per API: each is paced on its own
    "pubmed": "127.0.0.2",
    "pubtator3": "127.0.0.3",
    "crossref": "127.0.0.4",
    "clinicaltrials": "127.0.0.5",
    "openfda": "127.0.0.6",
}
BASE_PATHS: Mapping[str, str] = {  # the path of each API's public base URL
    "pubmed": "/entrez/eutils",
    "pubtator3": "/research/pubtator3-api",
    "crossref": "",
    "clinicaltrials": "/api/v2",
    "openfda": "",
}

Answer = tuple[int, str, bytes]  # status, content type, body


class TokenBucket:
    """A rate limit as an API enforces it: ``capacity`` tokens (default ``max(1, rate)``,
    a one-second window), refilled at ``rate`` per second; thread-safe."""

    def __init__(
        self,
        rate: float,
        *,
        capacity: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate
        self.capacity = capacity if capacity is not None else max(1.0, rate)
        self._clock = clock
        self._tokens = self.capacity
        self._at = clock()
        self._lock = threading.Lock()

    def take(self) -> float:
        """0.0 when a request may go now (a token is taken), else the seconds until one may."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self.capacity, self._tokens + (now - self._at) * self.rate)
            self._at = now
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return 0.0
            return (1.0 - self._tokens) / self.rate


# -- the APIs' answers (pure) ----------------------------------------------------------------
def _json(data: object) -> Answer:
    return 200, "application/json", json.dumps(data).encode("utf-8")


def article_texts(pmid: int) -> tuple[str, list[str]]:
    """The title and abstract section texts of the bench's PubMed record ``pmid``, drawn
    exactly as :func:`pipeline.bench.bench_snapshot.article_xml` draws them."""
    rng = random.Random(pmid)
    sections = [" ".join(_sentence(rng, 14) for _ in range(3)) for _ in SECTIONS]
    for _ in range(4):  # the authors' names
        rng.randint(1, 500)
    return f"{_sentence(rng, 10)} (synthetic bench record)", sections


def pubtator_document(pmid: int) -> dict[str, Any]:
    """A BioC JSON document as PubTator3 exports it: a title passage and one abstract passage
    with the section labels inlined, an annotation on the first word of each."""
    title, sections = article_texts(pmid)
    abstract = " ".join(f"{label}: {text}" for label, text in zip(SECTIONS, sections, strict=True))
    passages = []
    for kind, offset, text in (("title", 0, title), ("abstract", len(title) + 1, abstract)):
        word = text.split(" ", 1)[0] if kind == "title" else sections[0].split(" ", 1)[0]
        at = 0 if kind == "title" else len(f"{SECTIONS[0]}: ")
        passages.append(
            {
                "infons": {"type": kind},
                "offset": offset,
                "text": text,
                "annotations": [
                    {
                        "id": "1",
                        "infons": {"identifier": "MESH:D000001", "type": "Chemical"},
                        "text": word,
                        "locations": [{"offset": offset + at, "length": len(word)}],
                    }
                ],
            }
        )
    return {"_id": f"{pmid}|None", "id": str(pmid), "passages": passages}


HISTORY_GONE = (
    b'<?xml version="1.0" ?>\n<eFetchResult><ERROR>Unable to obtain query #1</ERROR></eFetchResult>'
)


def _block_count(block: int, records: int) -> int:
    return max(0, min(QUERY_SIZE, records - block * QUERY_SIZE))


def with_history(answer: dict[str, Any], params: Mapping[str, str]) -> dict[str, Any]:
    """An esearch answer asked with ``usehistory=y``: the WebEnv (``BENCH-N`` for query
    ``benchN``) and query key that name its result on this server's history, added."""
    block = int(params["term"].removeprefix("bench"))
    return {
        "esearchresult": {**answer["esearchresult"], "querykey": "1", "webenv": f"BENCH-{block}"}
    }


def history_pmids(params: Mapping[str, str], records: int) -> list[int] | None:
    """The PMIDs of an efetch by ``WebEnv``/``query_key`` with ``retstart``/``retmax`` (None:
    no such history, as NCBI answers an expired one)."""
    webenv, key = params.get("WebEnv", ""), params.get("query_key")
    if not webenv.startswith("BENCH-") or key != "1":
        return None
    block = int(webenv.removeprefix("BENCH-"))
    first, count = FIRST_PMID + block * QUERY_SIZE, _block_count(block, records)
    start, size = int(params.get("retstart", 0)), int(params.get("retmax", 20))
    return [first + i for i in range(start, min(start + size, count))]


def crossref_notice(updated: str) -> dict[str, Any]:
    date = {"date-parts": [[2025, 3, 1]]}
    return {
        "DOI": updated.replace("10.5555/bench.", "10.5555/bench-notice."),
        "type": "journal-article",
        "title": [f"Retraction notice: {updated}"],
        "published": date,
        "update-to": [
            {
                "DOI": updated,
                "type": "retraction",
                "label": "Retraction",
                "source": "publisher",
                "updated": date,
            }
        ],
    }


def crossref_updates(params: Mapping[str, str]) -> Answer:
    """The ``updates:`` list of the DOIs filtered (ORed), ``rows`` a page, paged by cursor."""
    dois = [t.removeprefix("updates:") for t in params["filter"].split(",")]
    notices = [
        crossref_notice(d)
        for d in dois
        if d.startswith("10.5555/bench.") and int(d.rsplit(".", 1)[1]) % RETRACTED_EVERY == 0
    ]
    rows, cursor = int(params.get("rows", 20)), params.get("cursor", "*")
    start = 0 if cursor == "*" else int(cursor.removeprefix("page-"))
    items = notices[start : start + rows]
    message = {
        "facets": {},
        "total-results": len(notices),
        "items": items,
        "items-per-page": rows,
        "query": {"start-index": 0, "search-terms": None},
        "next-cursor": f"page-{start + rows}",
    }
    return _json({"status": "ok", "message-type": "work-list", "message": message})


def nct_id(i: int) -> str:
    return f"NCT99{i:06d}"


def set_id(i: int) -> str:
    return f"5eed{i:04x}-0000-4000-8000-{i:012x}"


def trial_study(nct: str) -> dict[str, Any]:
    return {
        "protocolSection": {
            "identificationModule": {"nctId": nct, "briefTitle": f"Bench trial {nct}"},
            "statusModule": {
                "overallStatus": "COMPLETED",
                "lastUpdateSubmitDate": "2025-01-15",
                "lastUpdatePostDateStruct": {"date": "2025-01-15", "type": "ACTUAL"},
            },
            "descriptionModule": {"briefSummary": f"A generated bench trial ({nct})."},
        },
        "hasResults": False,
    }


def clinicaltrials_studies(params: Mapping[str, str]) -> Answer:
    ids = [i for i in params["filter.ids"].split(",") if i.startswith("NCT99")]
    return _json({"studies": [trial_study(i) for i in ids]})


def label(set_id_: str) -> dict[str, Any]:
    return {
        "id": f"{set_id_[:8]}-aaaa-4000-8000-000000000000",
        "set_id": set_id_,
        "version": "1",
        "effective_time": "20250101",
        "indications_and_usage": [f"1 INDICATIONS AND USAGE Bench label {set_id_}."],
        "openfda": {"brand_name": ["Benchamab"], "generic_name": ["benchamab"]},
    }


def openfda_labels(params: Mapping[str, str]) -> Answer:
    wanted = [p.split('"')[1] for p in params["search"].split(" OR ")]
    results = [label(s) for s in wanted if s.startswith("5eed")]
    if not results:
        body = {"error": {"code": "NOT_FOUND", "message": "No matches found!"}}
        return 404, "application/json", json.dumps(body).encode()
    meta = {"results": {"skip": 0, "limit": int(params.get("limit", 1)), "total": len(results)}}
    return _json({"meta": meta, "results": results})


def full_text_xml(pmid: int) -> str:
    """The Europe PMC ``fullTextXML`` (JATS) of the bench's record ``pmid``: its PMCID
    (``PMC`` and the PMID's digits), PMID and DOI, title, abstract and one body section."""
    title, sections = article_texts(pmid)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<article article-type="research-article">'
        "<front><article-meta>"
        f'<article-id pub-id-type="pmcid">PMC{pmid}</article-id>'
        f'<article-id pub-id-type="pmid">{pmid}</article-id>'
        f'<article-id pub-id-type="doi">10.5555/bench.{pmid}</article-id>'
        f"<title-group><article-title>{title}</article-title></title-group>"
        '<permissions><license xmlns:xlink="http://www.w3.org/1999/xlink" '
        'xlink:href="https://creativecommons.org/licenses/by/4.0/"><license-p>CC BY 4.0'
        "</license-p></license></permissions>"
        f"<abstract><p>{sections[0]}</p></abstract></article-meta></front>"
        f"<body><sec><title>Results</title><p>{sections[1]}</p></sec></body></article>"
    )


class Answers:
    """Every source's answer to a request (method, path below its base, query + form).

    The PubMed records and PubTator3 documents of the corpus are made before the build
    (:meth:`prepare`), so the loopback APIs answer in the time a real one streams a stored
    body, and what the bench measures is the client, not the bench's own generator.
    ``full_text_every``: every so many PubMed records (by PMID) carry a PMCID, and Europe
    PMC answers their open-access full text (:func:`full_text_xml`; 0: none do)."""

    def __init__(self, records: int, *, full_text_every: int = 0) -> None:
        self.records = records
        self.full_text_every = full_text_every
        self.pubmed = SyntheticPubMed(records)
        self._xml: dict[int, str] = {}
        self._docs: dict[int, str] = {}

    def _open_access(self, pmid: int) -> bool:
        return self.full_text_every > 0 and pmid % self.full_text_every == 0

    def prepare(self) -> Answers:
        for block in range(math.ceil(self.records / QUERY_SIZE)):
            first = FIRST_PMID + block * QUERY_SIZE
            for pmid in range(first, first + min(QUERY_SIZE, self.records - block * QUERY_SIZE)):
                self._article(pmid)
                self._document(pmid)
        return self

    def _article(self, pmid: int) -> str:
        if pmid not in self._xml:
            xml = article_xml(pmid, random.Random(pmid))
            if self._open_access(pmid):
                mark = f'<ArticleId IdType="pubmed">{pmid}</ArticleId>'
                xml = xml.replace(mark, f'{mark}<ArticleId IdType="pmc">PMC{pmid}</ArticleId>')
            self._xml[pmid] = xml
        return self._xml[pmid]

    def _document(self, pmid: int) -> str:
        if pmid not in self._docs:
            self._docs[pmid] = json.dumps(pubtator_document(pmid))
        return self._docs[pmid]

    def __call__(self, source: str, method: str, url: str, form: bytes) -> Answer:
        path = urlsplit(url).path
        params = dict(parse_qsl(urlsplit(url).query))
        if source == "pubmed" and path.endswith("/efetch.fcgi"):
            params |= dict(parse_qsl(form.decode("utf-8")))
            pmids = history_pmids(params, self.records) if "WebEnv" in params else None
            if pmids is None and "WebEnv" in params:
                return 200, "text/xml", HISTORY_GONE
            ids = pmids if pmids is not None else [int(p) for p in params["id"].split(",")]
            xml = "".join(self._article(p) for p in ids)
            body = f'<?xml version="1.0" ?>\n<PubmedArticleSet>{xml}</PubmedArticleSet>'
            return 200, "text/xml", body.encode("utf-8")
        if source == "pubmed":
            public = "https://eutils.ncbi.nlm.nih.gov" + path + "?" + urlsplit(url).query
            got = self.pubmed.handle_request(httpx.Request(method, public))
            if params.get("usehistory") == "y" and got.status_code == 200:
                return _json(with_history(got.json(), params))
            return got.status_code, got.headers["content-type"], got.content
        if source == "pubtator3" and path.endswith("/publications/export/biocjson"):
            docs = ",".join(self._document(int(p)) for p in params["pmids"].split(","))
            return 200, "application/json", f'{{"PubTator3": [{docs}]}}'.encode()
        if source == "crossref" and path == "/works" and "filter" in params:
            return crossref_updates(params)
        if source == "clinicaltrials" and path.endswith("/studies") and "filter.ids" in params:
            return clinicaltrials_studies(params)
        if source == "openfda" and path == "/drug/label.json" and "search" in params:
            return openfda_labels(params)
        if source == "europepmc" and path.endswith("/fullTextXML"):
            pmcid = path.rsplit("/", 2)[-2]
            pmid = int(pmcid.removeprefix("PMC")) if pmcid.removeprefix("PMC").isdigit() else 0
            if self._open_access(pmid):
                return 200, "application/xml", full_text_xml(pmid).encode("utf-8")
            return 404, "text/plain", b"not found"
        return 404, "text/plain", f"no bench answer for {method} {path}".encode()


# -- the servers -----------------------------------------------------------------------------
@dataclass
class Counts:
    answered: int = 0
    rejected: int = 0  # 429s
    endpoints: Counter[str] = field(default_factory=Counter)  # answered, by last path step
    serving: float = 0.0  # seconds spent making the answers (the bench's cost, not the client's)
    arrivals: list[float] = field(default_factory=list)  # when each request arrived (monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)


class LoopbackAPI:
    """One source's API on ``host`` (a loopback address), port chosen by the system; every
    request takes a token of ``bucket`` first, or is answered 429 with ``Retry-After``."""

    def __init__(
        self,
        source: str,
        answer: Callable[[str, str, str, bytes], Answer],
        bucket: TokenBucket,
        host: str = "127.0.0.1",
    ) -> None:
        self.source = source
        self.counts = Counts()
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the real APIs

            def log_message(self, format: str, *args: object) -> None:
                del format, args

            def _reply(self, status: int, content_type: str, body: bytes, **headers: str) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("content-length") or 0)
                form = self.rfile.read(length) if length else b""
                with api.counts.lock:
                    api.counts.arrivals.append(time.monotonic())
                wait = bucket.take()
                if wait > 0:
                    with api.counts.lock:
                        api.counts.rejected += 1
                    body = b'{"error": "rate limit exceeded"}'
                    retry = str(max(1, math.ceil(wait)))
                    self._reply(429, "application/json", body, **{"retry-after": retry})
                    return
                started = time.perf_counter()
                made = answer(source, method, self.path, form)
                with api.counts.lock:
                    api.counts.answered += 1
                    api.counts.endpoints[urlsplit(self.path).path.rsplit("/", 1)[-1]] += 1
                    api.counts.serving += time.perf_counter() - started
                self._reply(*made)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        address = self.server.server_address
        self.host, self.port = str(address[0]), int(address[1])
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, base_path: str = "") -> str:
        return f"http://{self.host}:{self.port}{base_path}"

    def __enter__(self) -> LoopbackAPI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join()


@contextmanager
def loopback_apis(records: int) -> Iterator[dict[str, LoopbackAPI]]:
    answers = Answers(records).prepare()
    with ExitStack() as stack:
        yield {
            source: stack.enter_context(
                LoopbackAPI(source, answers, TokenBucket(LIMITS[source]), HOSTS[source])
            )
            for source in LIMITS
        }
