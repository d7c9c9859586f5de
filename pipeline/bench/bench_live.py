"""Live-path throughput: a harvest over HTTP against loopback APIs that enforce the limits.

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
answers 429 with ``Retry-After`` when a request finds no token.

:func:`run` generates a spec (:data:`RECORDS` PubMed records found by two esearch queries,
with PubTator3 annotations and Crossref update notices, :data:`TRIALS` trials and
:data:`LABELS` labels by id), points ``CITESEAL_<SOURCE>_URL`` at the servers and runs
``build_snapshot(..., live=True)`` in a child process, whose limiter is instrumented to log
the moment each request starts waiting for its slot. The enrichments run beside the fetch
(:mod:`pipeline.harvest_pipeline`; ``CITESEAL_HARVEST_JOBS`` passed on, 1 to compare), so a
source *owns* its host's span (its first request's wait to its last one's, plus one
interval); a source's records/s is its records over that span, and its theoretical maximum
is its records over ``requests / limit`` (the requests that harvest needed at the published
limit). It also prints the whole build's records/s against the maximum of sources run one
after another and run concurrently (each host at its own pace), the busiest second each
server saw, the 429s the
servers answered and the peak RSS of the build and writer processes: each process's own
``VmHWM`` (Linux), not ``ru_maxrss``, which a child started by ``subprocess`` inherits from
its parent's peak at ``exec`` (the writer's is sampled every 0.2 s while the build runs).
"""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx

from pipeline.bench import Figure
from pipeline.bench.bench_figures import peak_per_second, shares, started_peaks
from pipeline.bench.bench_snapshot import (
    FIRST_PMID,
    QUERY_SIZE,
    SECTIONS,
    SyntheticPubMed,
    _sentence,
    article_xml,
)

RECORDS = 20_000  # PubMed records (two esearch queries of QUERY_SIZE)
TRIALS = 1_000
LABELS = 500
RETRACTED_EVERY = 100  # every 100th DOI has a Crossref retraction notice
GOAL_SHARE = 90.0  # % of the theoretical maximum, per source
NCBI_KEY = "bench-not-a-real-key-0000"  # NCBI allows 10 requests/s with a key
EMAIL = "bench@example.org"  # Crossref's polite pool (3 list requests/s)

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


class Answers:
    """Every source's answer to a request (method, path below its base, query + form).

    The PubMed records and PubTator3 documents of the corpus are made before the build
    (:meth:`prepare`), so the loopback APIs answer in the time a real one streams a stored
    body, and what the bench measures is the client, not the bench's own generator."""

    def __init__(self, records: int) -> None:
        self.records = records
        self.pubmed = SyntheticPubMed(records)
        self._xml: dict[int, str] = {}
        self._docs: dict[int, str] = {}

    def prepare(self) -> Answers:
        for block in range(math.ceil(self.records / QUERY_SIZE)):
            first = FIRST_PMID + block * QUERY_SIZE
            for pmid in range(first, first + min(QUERY_SIZE, self.records - block * QUERY_SIZE)):
                self._article(pmid)
                self._document(pmid)
        return self

    def _article(self, pmid: int) -> str:
        if pmid not in self._xml:
            self._xml[pmid] = article_xml(pmid, random.Random(pmid))
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


# -- the harvest -----------------------------------------------------------------------------
def write_spec(
    path: Path, records: int = RECORDS, trials: int = TRIALS, labels: int = LABELS
) -> Path:
    """The bench corpus: ``records`` PubMed records by esearch queries of up to
    :data:`QUERY_SIZE` (``benchN`` answers block N), annotated and with Crossref's notices,
    ``trials`` NCT ids and ``labels`` set ids."""
    queries = ", ".join(
        f'{{ term = "bench{i}", limit = {min(QUERY_SIZE, records - i * QUERY_SIZE)} }}'
        for i in range(math.ceil(records / QUERY_SIZE))
    )
    trial_ids = ", ".join(f'"{nct_id(i)}"' for i in range(1, trials + 1))
    label_ids = ", ".join(f'"{set_id(i)}"' for i in range(1, labels + 1))
    path.write_text(
        'name = "live"\n'
        f'description = "Generated live-path bench corpus ({records} PubMed records)."\n\n'
        f"[pubmed]\nqueries = [{queries}]\nannotations = true\n\n"
        "[crossref]\nupdates = true\n\n"
        f"[clinicaltrials]\nids = [{trial_ids}]\n\n"
        f"[openfda]\nset_ids = [{label_ids}]\n",
        encoding="utf-8",
    )
    return path


_CHILD = """
import json, os, sys, time
from pathlib import Path
from pipeline import pacing
from pipeline.bench.procmem import ChildPeaks, peak_kb
from pipeline.settings import Settings
from pipeline.snapshot.build import build_snapshot
from pipeline.bench.bench_snapshot import BENCH_KEYRING
from pipeline.http import HttpClient
log, granted, answered = [], [], [0.0]
original = pacing.RateLimiter.wait
def wait(self, host):
    log.append((host, time.perf_counter()))
    waited = original(self, host)
    granted.append((host, self._next[host] - self.interval(host)))  # the slot it was given
    return waited
pacing.RateLimiter.wait = wait
writer = ChildPeaks()  # the writer process's own peak, sampled until the build ends
for name in ("get", "post"):
    def timed(self, *args, _call=getattr(HttpClient, name), **kwargs):
        try:
            return _call(self, *args, **kwargs)
        finally:
            answered[0] = time.perf_counter()
    setattr(HttpClient, name, timed)
started = time.perf_counter()
settings = Settings.from_env()
result = build_snapshot(Path(sys.argv[1]), keyring=BENCH_KEYRING, settings=settings,
                        live=True, resume=False)
ended = time.perf_counter()
writer_kb = writer.stop()
m = result.manifest
print(json.dumps({"started": started, "ended": ended, "log": log, "last": answered[0],
                  "jobs": settings.harvest_jobs, "granted": granted,
                  "records": {s: v.records for s, v in m.sources.items()},
                  "failed": len(m.failed_requests),
                  "rss_kb": peak_kb(), "writer_rss_kb": writer_kb}))
"""


def build_live(spec: Path, apis: Mapping[str, LoopbackAPI], data_dir: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITESEAL_")}
    env |= {
        f"CITESEAL_{source.upper()}_URL": api.url(BASE_PATHS[source])
        for source, api in apis.items()
    }
    jobs = os.environ.get("CITESEAL_HARVEST_JOBS")
    if jobs is not None:
        env["CITESEAL_HARVEST_JOBS"] = jobs  # the one setting a comparison may change
    env |= {
        "CITESEAL_EMAIL": EMAIL,
        "NCBI_API_KEY": NCBI_KEY,
        "CITESEAL_DATA_DIR": str(data_dir),
        "NO_PROXY": "*",
    }
    env.pop("OPENFDA_API_KEY", None)
    done = subprocess.run(  # noqa: S603 (our own interpreter and code)
        [sys.executable, "-c", _CHILD, str(spec)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    if done.returncode != 0:
        raise RuntimeError(f"live bench build failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(
    workdir: Path, *, records: int = RECORDS, trials: int = TRIALS, labels: int = LABELS
) -> list[Figure]:
    spec = write_spec(workdir / "live.toml", records, trials, labels)
    with loopback_apis(records) as apis:
        out = build_live(spec, apis, workdir / "data")
        rejected = sum(api.counts.rejected for api in apis.values())
        answered = {s: api.counts.answered for s, api in apis.items()}
        endpoints = {s: dict(api.counts.endpoints) for s, api in apis.items()}
        serving = {s: api.counts.serving for s, api in apis.items()}
        peaks = {s: peak_per_second(api.counts.arrivals) for s, api in apis.items()}
    starts = started_peaks(out["granted"], {api.host: s for s, api in apis.items()})
    by_host = {api.host: s for s, api in apis.items()}
    owned = shares(out, by_host, LIMITS)
    counted: dict[str, int] = dict(out["records"])
    counted["pubtator3"] = counted["crossref"] = counted.get("pubmed", 0)  # enriched records
    wall = out["ended"] - out["started"]
    figures: list[Figure] = []
    minimum: dict[str, float] = {}
    for source in LIMITS:
        n, seconds = owned.get(source, (0, 0.0))
        got = counted.get(source, 0)
        if not n or not got:
            figures.append(Figure(f"{source}: no request made", 0.0, "req"))
            continue
        minimum[source] = answered[source] / LIMITS[source]
        best = got / minimum[source]
        achieved = got / seconds if seconds > 0 else float("inf")
        asked = ", ".join(f"{e} {c}" for e, c in sorted(endpoints[source].items()))
        figures += [
            Figure(f"{source}: requests ({asked})", n, "req"),
            Figure(f"{source}: published limit", LIMITS[source], "req/s"),
            Figure(
                f"{source}: most requests the client started in one second",
                starts[source],
                "req",
                max(1, math.ceil(LIMITS[source])),
                higher_is_better=False,
            ),
            Figure(f"{source}: most arriving in one second (less 50 ms)", peaks[source], "req"),
            Figure(f"{source}: records/s (max {best:,.1f} at the limit)", achieved, "rec/s"),
            Figure(f"{source}: share of the maximum", 100 * achieved / best, "%", GOAL_SHARE),
            Figure(f"{source}: time owned", seconds, "s"),
            Figure(f"{source}: minimum time at the limit", minimum[source], "s"),
            Figure(f"{source}: the loopback API answering", serving[source], "s"),
        ]
    total = sum(counted.get(s, 0) for s in ("pubmed", "clinicaltrials", "openfda"))
    sequential = total / sum(minimum.values()) if minimum else 0.0
    concurrent = total / max(minimum.values()) if minimum else 0.0
    figures += [
        Figure("whole build: harvest jobs (CITESEAL_HARVEST_JOBS)", out["jobs"], ""),
        Figure(f"whole build: {total:,} records, wall time", wall, "s"),
        Figure("whole build: records/s", total / wall, "rec/s"),
        Figure("  max, sources one after another", sequential, "rec/s"),
        Figure("  max, sources concurrent (each host its pace)", concurrent, "rec/s"),
        Figure("429s answered by the loopback APIs", rejected, "", 0, higher_is_better=False),
        Figure("failed requests in the manifest", out["failed"], "", 0, higher_is_better=False),
        Figure("peak RSS, build (its own VmHWM)", out["rss_kb"] / 1024, "MiB"),
        Figure("peak RSS, writer (VmHWM sampled every 0.2 s)", out["writer_rss_kb"] / 1024, "MiB"),
    ]
    return figures
