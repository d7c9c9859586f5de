"""The live-path bench's loopback APIs: the limit they enforce, the formats they speak, and
how the harvest's time is split between the sources (never the bench itself: it is slow)."""

from __future__ import annotations

import random
from pathlib import Path

import httpx
import pytest

from pipeline.bench import bench_live
from pipeline.bench.bench_figures import started_peaks
from pipeline.bench.bench_live import Answers, LoopbackAPI, TokenBucket, peak_per_second, shares
from pipeline.bench.bench_snapshot import article_xml
from pipeline.pacing import RateLimiter
from pipeline.sources import clinicaltrials, crossref, openfda, pubmed, pubtator3

PMID = 99_100_000  # the bench's first PMID; a multiple of 100, so its DOI has a notice


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_bucket_grants_a_one_second_window_then_refuses_until_a_token_is_back() -> None:
    clock = Clock()
    bucket = TokenBucket(3.0, clock=clock)
    assert [bucket.take() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert round(bucket.take(), 6) == round(1 / 3, 6)  # the 4th in the same instant: refused
    clock.now = 1 / 3
    assert bucket.take() == 0.0


def test_the_bucket_of_a_limit_below_one_a_second_still_holds_one_token() -> None:
    clock = Clock()
    bucket = TokenBucket(50 / 60, clock=clock)
    assert bucket.take() == 0.0
    assert round(bucket.take(), 6) == round(60 / 50, 6)


def test_the_bucket_never_refuses_requests_paced_at_its_rate() -> None:
    clock = Clock()
    bucket = TokenBucket(4.0, clock=clock)
    refused = []
    for i in range(200):
        clock.now = i / 4.0
        refused.append(bucket.take())
    assert refused == [0.0] * 200


def _api(rate: float, capacity: float | None = None) -> LoopbackAPI:
    return LoopbackAPI("crossref", Answers(10), TokenBucket(rate, capacity=capacity))


def test_the_loopback_api_answers_429_with_retry_after_when_driven_too_fast() -> None:
    url = "/works?filter=updates:10.5555/bench.99100001&rows=100&cursor=*"
    # the server's clock stands still: 10 requests arrive within the same instant, however
    # loaded the host (a wall clock let tokens come back when the requests were slow)
    bucket = TokenBucket(5.0, clock=Clock())
    with (
        LoopbackAPI("crossref", Answers(10), bucket) as api,
        httpx.Client(base_url=api.url()) as http,
    ):
        statuses = [http.get(url) for _ in range(10)]
    assert [r.status_code for r in statuses] == [200] * 5 + [429] * 5
    assert {r.headers["retry-after"] for r in statuses[5:]} == {"1"}
    assert (api.counts.answered, api.counts.rejected) == (5, 5)


def test_the_loopback_api_never_refuses_a_client_paced_at_its_limit() -> None:
    url = "/works?filter=updates:10.5555/bench.99100001&rows=100&cursor=*"
    # a window of 2 tokens: a paced client keeps it near full, one sent twice as fast would
    # empty it within a few requests
    with _api(20.0, capacity=2.0) as api, httpx.Client(base_url=api.url()) as http:
        pacing = RateLimiter({api.host: 20.0})
        statuses = []
        for _ in range(12):
            pacing.wait(api.host)
            statuses.append(http.get(url).status_code)
    assert statuses == [200] * 12
    assert api.counts.rejected == 0


def test_the_answers_parse_with_each_sources_own_parser() -> None:
    answers = Answers(1_000)
    xml = article_xml(PMID, random.Random(PMID))
    [article] = pubmed.parse(f"<PubmedArticleSet>{xml}</PubmedArticleSet>").records
    export = f"/research/pubtator3-api/publications/export/biocjson?pmids={PMID}"
    status, _, body = answers("pubtator3", "GET", export, b"")
    annotations = pubtator3.align(body, {article.record_id: article})[article.record_id]
    assert status == 200
    assert [(a.path, a.start) for a in annotations] == [("title", 0), ("abstract.1", 0)]

    doi = article.doi or ""
    _, _, body = answers("crossref", "GET", f"/works?filter=updates:{doi}&rows=100&cursor=*", b"")
    notices = crossref.parse(body).notices
    assert [(n.kind, n.target) for n in notices] == [
        ("retraction_in", f"doi:10.5555/bench-notice.{PMID}")
    ]

    nct = bench_live.nct_id(1)
    _, _, body = answers("clinicaltrials", "GET", f"/api/v2/studies?filter.ids={nct}", b"")
    assert [r.record_id for r in clinicaltrials.parse(body).records] == [f"nct:{nct}"]

    set_id = bench_live.set_id(1)
    _, _, body = answers("openfda", "GET", f'/drug/label.json?search=set_id:"{set_id}"', b"")
    [label] = openfda.parse(body).records
    assert (label.record_id, label.version) == (f"setid:{set_id}", "1")
    status, _, _ = answers("openfda", "GET", '/drug/label.json?search=set_id:"x-y"', b"")
    assert status == 404  # openFDA's no-match


def test_crossref_notices_are_paged_by_cursor() -> None:
    dois = ",".join(f"updates:10.5555/bench.{PMID + 100 * i}" for i in range(5))
    _, _, first = Answers(10)("crossref", "GET", f"/works?filter={dois}&rows=2&cursor=*", b"")
    page = crossref.parse(first)
    assert (len(page.notices), page.count) == (2, 5)
    _, _, last = Answers(10)("crossref", "GET", f"/works?filter={dois}&rows=2&cursor=page-4", b"")
    assert len(crossref.parse(last).notices) == 1


def test_a_source_owns_its_hosts_span_plus_one_interval_at_its_limit() -> None:
    """Sources run concurrently: each owns its first request's wait to its last one's, plus
    that last request's slot (1 / its limit), however the others interleave."""
    out = {
        "log": [("a", 0.0), ("b", 0.5), ("a", 1.0), ("c", 4.0), ("b", 4.5)],
        "last": 4.75,
    }
    owned = shares(out, {"a": "pubmed", "b": "crossref", "c": "openfda"}, bench_live.LIMITS)
    assert owned == {
        "pubmed": (2, pytest.approx(1.0 + 1 / 10)),
        "crossref": (2, pytest.approx(4.0 + 1 / 3)),
        "openfda": (1, pytest.approx(1 / 4)),
    }


def test_the_peak_counts_the_arrivals_of_the_busiest_second_less_the_jitter_slack() -> None:
    # paced at 4/s (0.25 s apart), one arrival 40 ms late: still 4 in any second
    assert peak_per_second([0.0, 0.25, 0.54, 0.75, 1.0, 1.25]) == 4
    # five within 0.9 s: over a limit of 4
    assert peak_per_second([0.0, 0.2, 0.4, 0.6, 0.9]) == 5
    assert peak_per_second([]) == 0


def test_the_spec_asks_for_every_source_of_the_bench(tmp_path: Path) -> None:
    from pipeline.snapshot.spec import load_spec

    spec = load_spec(bench_live.write_spec(tmp_path / "live.toml", 12_000, 3, 2))
    assert spec.pubmed is not None and spec.pubmed.annotations
    assert [q.limit for q in spec.pubmed.queries] == [10_000, 2_000]
    assert spec.crossref is not None and spec.crossref.updates
    assert spec.clinicaltrials is not None and len(spec.clinicaltrials.ids) == 3
    assert spec.openfda is not None and len(spec.openfda.set_ids) == 2


def test_a_tiny_live_build_over_the_loopback_apis_is_complete_and_never_refused(
    tmp_path: Path,
) -> None:
    figures = {
        f.name.split(" (")[0]: f for f in bench_live.run(tmp_path, records=120, trials=2, labels=2)
    }
    assert figures["429s answered by the loopback APIs"].value == 0
    assert figures["failed requests in the manifest"].value == 0
    assert figures["whole build: 124 records, wall time"].value > 0
    requests = {s: figures[f"{s}: requests"].value for s in bench_live.LIMITS}
    # 1 esearch + 1 efetch; PubTator3 100 PMIDs a request; Crossref 50 DOIs (50 + 50 + 20)
    assert requests == {
        "pubmed": 2,
        "pubtator3": 2,
        "crossref": 3,
        "clinicaltrials": 1,
        "openfda": 1,
    }
    assert figures["peak RSS, build"].value > 0  # its own peak: more than an empty interpreter


def _harvest_pubmed(limit: int, *, records: int = 2_000) -> tuple[list[str], int]:
    """A PubMed search of ``limit`` records over the bench's PubMed answers: the requests
    made (path and paging parameters) and the records delivered."""
    from collections.abc import Collection, Sequence
    from urllib.parse import parse_qsl

    from pipeline.harvest import Harvester
    from pipeline.harvest_spec import parse_spec
    from pipeline.http import HttpClient
    from pipeline.records import Record
    from pipeline.settings import Settings
    from pipeline.snapshot.progress import NullProgress

    answers = Answers(records)
    asked: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        form = request.read()
        params = dict(parse_qsl(request.url.query.decode()) + parse_qsl(form.decode()))
        shown = {
            k: params[k] for k in ("usehistory", "WebEnv", "retstart", "retmax") if k in params
        }
        ids = params.get("id", "")
        shown |= {"ids": str(len(ids.split(",")))} if ids else {}
        asked.append(f"{request.url.path.rsplit('/', 1)[1]} {shown}")
        status, kind, body = answers("pubmed", request.method, str(request.url), form)
        return httpx.Response(status, content=body, headers={"content-type": kind})

    class Sink:
        delivered = 0

        def records(
            self, source: str, records: Sequence[Record], *, incomplete: Collection[str] = ()
        ) -> None:
            Sink.delivered += len(records)

        def failure(self, source: str, step: str, error: Exception) -> None:
            raise AssertionError(f"{step}: {error}")

        def step(self, source: str, step: str, count: int, detail: str | None = None) -> None:
            pass

    spec = parse_spec(
        f'name = "b"\n[pubmed]\nqueries = [{{ term = "bench0", limit = {limit} }}]\n',
        Path("b.toml"),
    )
    transport = httpx.MockTransport(handler)
    with HttpClient(Settings(), transport=transport, rates={"eutils.ncbi.nlm.nih.gov": 0}) as c:
        Sink.delivered = 0
        Harvester(spec, c, Sink(), NullProgress()).run()  # type: ignore[arg-type]
    return asked, Sink.delivered


def test_a_search_above_the_threshold_reads_the_history_server() -> None:
    assert pubmed.HISTORY_ABOVE == 1_000
    asked, delivered = _harvest_pubmed(1_200)
    assert asked == [
        "esearch.fcgi {'usehistory': 'y', 'retstart': '0', 'retmax': '500'}",
        "efetch.fcgi {'WebEnv': 'BENCH-0', 'retstart': '0', 'retmax': '500'}",
        "efetch.fcgi {'WebEnv': 'BENCH-0', 'retstart': '500', 'retmax': '500'}",
        "efetch.fcgi {'WebEnv': 'BENCH-0', 'retstart': '1000', 'retmax': '200'}",
    ]
    assert delivered == 1_200


def test_a_search_at_the_threshold_pages_ids_and_fetches_them_by_id() -> None:
    assert _harvest_pubmed(5_000, records=900)[0] == [
        "esearch.fcgi {'usehistory': 'y', 'retstart': '0', 'retmax': '500'}",
        "esearch.fcgi {'usehistory': 'y', 'retstart': '500', 'retmax': '500'}",
        "efetch.fcgi {'ids': '500'}",
        "efetch.fcgi {'ids': '400'}",
    ]  # a limit above the threshold, a count below it: ids, the history unused; no lineage:
    # whole requests
    asked, delivered = _harvest_pubmed(1_000)  # at the threshold: no history asked
    assert asked == [
        "esearch.fcgi {'retstart': '0', 'retmax': '500'}",
        "esearch.fcgi {'retstart': '500', 'retmax': '500'}",
        "efetch.fcgi {'ids': '500'}",
        "efetch.fcgi {'ids': '500'}",
    ]
    assert delivered == 1_000


def test_the_clients_busiest_second_counts_the_slots_its_limiter_granted() -> None:
    paced = [(bench_live.HOSTS["crossref"], i / 3) for i in range(9)]  # 3/s exactly
    hosts = {bench_live.HOSTS["crossref"]: "crossref"}
    assert started_peaks(paced, hosts) == {"crossref": 3}
    early = [*paced, (bench_live.HOSTS["crossref"], 0.5)]  # one slot in between: 4 in a second
    assert started_peaks(early, hosts) == {"crossref": 4}
    assert started_peaks([], hosts) == {"crossref": 0}
