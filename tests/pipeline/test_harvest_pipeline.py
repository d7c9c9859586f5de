"""The pipelined harvest: the sequential harvest's sink calls in its order, the same snapshot,
a stage's failure listed in its place, strict stops every thread, and no host asked faster
than its limit."""

from __future__ import annotations

import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import duckdb
import httpx
import pytest

from pipeline import harvest, harvest_pipeline, pacing
from pipeline.bench import bench_live
from pipeline.bench.bench_figures import started_peaks
from pipeline.bench.bench_live import Answers
from pipeline.errors import HarvestError, ParseError, TerminalHarvestError
from pipeline.harvest import Harvester
from pipeline.harvest_pipeline import stages_for
from pipeline.harvest_spec import parse_spec
from pipeline.http import HttpClient
from pipeline.records import Record
from pipeline.settings import Settings
from pipeline.snapshot.build import build_snapshot
from pipeline.snapshot.progress import NullProgress
from pipeline.sources import crossref, source
from tests.conftest import TEST_KEYRING
from tests.fingerprints import demo_fingerprints
from tests.pipeline.snapshot.conftest import DEMO_REPLAY, DEMO_UPDATE, copy_demo_spec

HOSTS = {  # the public host of each source's API → the source the bench's answers speak for
    "eutils.ncbi.nlm.nih.gov": "pubmed",
    "www.ncbi.nlm.nih.gov": "pubtator3",
    "api.crossref.org": "crossref",
    "clinicaltrials.gov": "clinicaltrials",
    "api.fda.gov": "openfda",
    "www.ebi.ac.uk": "europepmc",
}


class Calls:
    """A sink that writes down every call it gets, in order, and the threads it got them on."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.threads: set[str] = set()

    def records(
        self, source: str, records: Sequence[Record], *, incomplete: Collection[str] = ()
    ) -> None:
        self.threads.add(threading.current_thread().name)
        ids = tuple(r.record_id for r in records)
        self.calls.append(("records", source, ids, tuple(sorted(incomplete)), records))

    def failure(self, source: str, step: str, error: HarvestError | ParseError) -> None:
        self.threads.add(threading.current_thread().name)
        self.calls.append(("failure", source, step, error.message))

    def step(self, source: str, step: str, count: int, detail: str | None = None) -> None:
        self.threads.add(threading.current_thread().name)
        self.calls.append(("step", source, step, count, detail))


FAILED = "GET api.crossref.org/works answered HTTP 400 Bad Request: bad request"
RECORDS = 150  # PubMed records of the bench's answers, three chunks of 50


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 50 records (one batch of notices each), so a small corpus has several on
    their way at once."""
    monkeypatch.setattr(harvest, "CHUNK", 50)


def _spec(
    tmp_path: Path,
    records: int = RECORDS,
    trials: int = 100,
    labels: int = 40,
    *,
    full_text: bool = False,
) -> str:
    path = tmp_path / "s.toml"
    return bench_live.write_spec(path, records, trials, labels, full_text=full_text).read_text()


class Run:
    """What one harvest did: the sink's calls, the requests (source, url, thread) in the order
    they were sent, when each host was asked, and what the harvest raised."""

    def __init__(self) -> None:
        self.sink = Calls()
        self.asked: list[tuple[str, str, str]] = []
        self.arrivals: dict[str, list[float]] = {}
        self.raised: TerminalHarvestError | None = None
        self.in_flight: Counter[str] = Counter()  # requests of each source under way now
        self.most_in_flight: Counter[str] = Counter()  # and the most at any moment


def run_harvest(
    text: str,
    *,
    jobs: int,
    fail: Callable[[str, str], bool] | None = None,
    strict: bool = False,
    paced: bool = False,
    full_text_every: int = 0,
    rates: Mapping[str, float] | None = None,
    slow: Mapping[str, float] | None = None,
    email: str | None = bench_live.EMAIL,
) -> Run:
    """Harvest ``text`` over the bench's answers with ``jobs`` threads (``paced``: each host
    at its published rate, or at ``rates``, else at once); ``fail(source, url)`` True answers
    that request 400; ``slow``: seconds a source's answer takes; ``full_text_every``: every
    so many PubMed records have a PMCID and Europe PMC's full text."""
    answers = Answers(RECORDS, full_text_every=full_text_every)
    run = Run()
    lock = threading.Lock()

    def handler(request: httpx.Request) -> httpx.Response:
        source = HOSTS[request.url.host]
        form = request.read()
        url = str(request.url)
        with lock:
            run.arrivals.setdefault(source, []).append(time.monotonic())
            thread = threading.current_thread().name
            run.asked.append((source, url + "&" + form.decode() if form else url, thread))
            run.in_flight[source] += 1
            run.most_in_flight[source] = max(run.most_in_flight[source], run.in_flight[source])
        try:
            time.sleep((slow or {}).get(source, 0.0))
            if fail is not None and fail(source, url):
                return httpx.Response(400, text="bad request")
            status, kind, body = answers(source, request.method, url, form)
            return httpx.Response(status, content=body, headers={"content-type": kind})
        finally:
            with lock:
                run.in_flight[source] -= 1

    transport = httpx.MockTransport(handler)
    transport.offline = not paced  # type: ignore[attr-defined]  # offline: no pacing
    spec = parse_spec(text, Path("s.toml"))
    settings = Settings(max_attempts=1, email=email, ncbi_api_key=bench_live.NCBI_KEY)
    with HttpClient(settings, transport=transport, rates=rates) as client:
        harvester = Harvester(spec, client, run.sink, NullProgress(), strict=strict, jobs=jobs)
        try:
            harvester.run()
        except TerminalHarvestError as error:
            run.raised = error
    return run


def test_a_pipelined_harvest_makes_the_sequential_harvests_sink_calls_in_its_order(
    tmp_path: Path,
) -> None:
    text = _spec(tmp_path)
    one = run_harvest(text, jobs=1)
    three = run_harvest(text, jobs=3)
    assert one.sink.calls == three.sink.calls  # the records themselves compared too
    assert sorted(a[:2] for a in one.asked) == sorted(a[:2] for a in three.asked)
    assert three.sink.threads == {threading.current_thread().name}  # every write on the caller's
    delivered = {
        s: sum(len(c[2]) for c in three.sink.calls if c[:2] == ("records", s))
        for s in HOSTS.values()
    }
    assert delivered == {
        "pubmed": RECORDS,
        "pubtator3": 0,
        "crossref": 0,
        "clinicaltrials": 100,
        "openfda": 40,
        "europepmc": 0,
    }
    # each enrichment asked on its own stage's thread, the sources on the caller's
    threads = {(s, t) for s, _, t in three.asked}
    caller = threading.current_thread().name
    assert threads == {
        ("pubmed", caller),
        ("pubtator3", "harvest-pubtator3"),
        ("crossref", "harvest-crossref"),
        ("clinicaltrials", caller),
        ("openfda", caller),
    }


def test_one_job_harvests_on_the_callers_thread_only(tmp_path: Path) -> None:
    one = run_harvest(_spec(tmp_path, trials=1, labels=1), jobs=1)
    assert {t for _, _, t in one.asked} == {threading.current_thread().name}


def test_two_jobs_run_every_enrichment_on_one_stage_in_the_harvests_order(
    tmp_path: Path,
) -> None:
    text = _spec(tmp_path, trials=1, labels=1)
    one = run_harvest(text, jobs=1)
    two = run_harvest(text, jobs=2)
    assert one.sink.calls == two.sink.calls
    assert {t for s, _, t in two.asked if s in ("pubtator3", "crossref")} == {
        "harvest-pubtator3+crossref"
    }


def test_stages_group_the_enrichments_that_change_records_in_order() -> None:
    pubtator3, crossref, europepmc = source("pubtator3"), source("crossref"), source("europepmc")
    assert stages_for([pubtator3, crossref], 1) == []
    assert stages_for([pubtator3, crossref], 2) == [[pubtator3, crossref]]
    assert stages_for([pubtator3, crossref], 3) == [[pubtator3], [crossref]]
    assert stages_for([pubtator3, crossref], 16) == [[pubtator3], [crossref]]
    assert stages_for([], 4) == []
    # Europe PMC's full text adds records: it runs as a chunk is handed in, on no stage
    assert stages_for([pubtator3, crossref, europepmc], 4) == [[pubtator3], [crossref]]
    assert stages_for([europepmc], 4) == []


FULL_TEXT_EVERY = 7  # every 7th PubMed record of the bench's answers has a PMCID


def test_a_pipelined_harvest_with_full_text_makes_the_sequential_harvests_sink_calls(
    tmp_path: Path,
) -> None:
    """Europe PMC's full text on: the harvest is pipelined all the same (annotations and
    notices on their stages, the full texts asked on the caller's thread as each chunk is
    handed in), and the sink gets the sequential harvest's calls in its order: each full-text
    record enriched and delivered before the chunk that named its PMCID."""
    text = _spec(tmp_path, trials=1, labels=1, full_text=True)
    one = run_harvest(text, jobs=1, full_text_every=FULL_TEXT_EVERY)
    three = run_harvest(text, jobs=3, full_text_every=FULL_TEXT_EVERY)
    assert one.sink.calls == three.sink.calls  # the records themselves compared too
    pmcids = [p for p in range(99100000, 99100000 + RECORDS) if p % FULL_TEXT_EVERY == 0]
    texts = [c for c in three.sink.calls if c[:2] == ("records", "europepmc")]
    assert [c[2] for c in texts] == [(f"pmcid:PMC{p}",) for p in pmcids]
    order = [c[2][0] for c in three.sink.calls if c[0] == "records" and c[1] != "openfda"]
    assert order.index(f"pmcid:PMC{pmcids[0]}") < order.index("pmid:99100000")
    caller = threading.current_thread().name
    assert {(s, t) for s, _, t in three.asked if s != "crossref"} == {
        ("pubmed", caller),
        ("europepmc", caller),
        ("pubtator3", "harvest-pubtator3"),
        ("clinicaltrials", caller),
        ("openfda", caller),
    }


def test_a_failed_full_text_under_strict_is_listed_last_and_stops_the_pipelined_harvest(
    tmp_path: Path,
) -> None:
    """A full text fails under strict on the caller's thread while chunks are on their way:
    the sequential harvest's error leaves run(), listed as the last call, no stage is left."""
    text = _spec(tmp_path, trials=1, labels=1, full_text=True)
    open_access = [p for p in range(99100000, 99100000 + RECORDS) if p % FULL_TEXT_EVERY == 0]
    wanted = f"PMC{open_access[10]}"  # in the second chunk

    def fail(source: str, url: str) -> bool:
        return source == "europepmc" and wanted in url

    before = {t.name for t in threading.enumerate()}
    one = run_harvest(text, jobs=1, fail=fail, strict=True, full_text_every=FULL_TEXT_EVERY)
    three = run_harvest(text, jobs=3, fail=fail, strict=True, full_text_every=FULL_TEXT_EVERY)
    assert one.raised is not None and three.raised is not None
    assert three.raised.message == one.raised.message
    assert three.raised.message.startswith(
        f"GET www.ebi.ac.uk/europepmc/webservices/rest/{wanted}/fullTextXML answered HTTP 400"
    )
    assert three.sink.calls[-1] == one.sink.calls[-1]
    assert three.sink.calls[-1][:3] == ("failure", "europepmc", f"full text {wanted}")
    assert _no_stage_left(before)


FAST = {"eutils.ncbi.nlm.nih.gov": 200.0, "www.ncbi.nlm.nih.gov": 200.0, "api.crossref.org": 200.0}


def test_crossrefs_notice_batches_go_three_at_once_in_its_polite_pool_in_the_sequential_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chunk's Crossref batches (10 DOIs each here, 5 a chunk) are asked as many at once as
    Crossref's polite pool allows in flight, 3 and never more, while the sink still gets the
    sequential harvest's calls (the steps of each batch in its place)."""
    monkeypatch.setattr(crossref, "UPDATES_BATCH", 10)
    text = _spec(tmp_path, trials=1, labels=1)
    slow = {"crossref": 0.05}
    one = run_harvest(text, jobs=1)
    three = run_harvest(text, jobs=3, paced=True, rates=FAST, slow=slow)
    assert one.sink.calls == three.sink.calls
    steps = [c[4] for c in three.sink.calls if c[:3] == ("step", "crossref", "updates")]
    assert steps == ["10 DOIs asked"] * (RECORDS // 10)
    assert three.most_in_flight["crossref"] == 3
    assert len({t for s, _, t in three.asked if s == "crossref"}) == 3  # the stage's workers


def test_crossref_without_a_contact_e_mail_is_asked_one_request_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Crossref's public pool (no mailto) allows one request in flight: never more."""
    monkeypatch.setattr(crossref, "UPDATES_BATCH", 10)
    text = _spec(tmp_path, records=50, trials=1, labels=1)
    three = run_harvest(text, jobs=3, paced=True, rates=FAST, slow={"crossref": 0.02}, email=None)
    assert three.most_in_flight["crossref"] == 1
    assert len([a for a in three.asked if a[0] == "crossref"]) == 5


def test_a_failed_notice_batch_is_listed_in_its_place_and_its_records_incomplete_as_sequentially(
    tmp_path: Path,
) -> None:
    """One batch of Crossref's update notices fails (on its stage's thread), and Crossref's
    works by DOI (on the caller's): each is a listed failure in its place, PubMed's records
    all arrive, those of the failed batch incomplete; the sequential harvest makes the very
    same calls."""
    text = _spec(tmp_path, trials=1, labels=1).replace(
        "[crossref]\nupdates = true\n",
        '[crossref]\nupdates = true\ndois = ["10.5555/lane.1", "10.5555/lane.2"]\n',
    )

    def fail(source: str, url: str) -> bool:
        wanted = dict(parse_qsl(httpx.URL(url).query.decode())).get("filter", "")
        return source == "crossref" and ("lane.1" in wanted or "bench.99100060" in wanted)

    one = run_harvest(text, jobs=1, fail=fail)
    three = run_harvest(text, jobs=3, fail=fail)
    assert one.sink.calls == three.sink.calls
    failures = [c[1:] for c in three.sink.calls if c[0] == "failure"]
    batch = ", ".join(f"10.5555/bench.{p}" for p in range(99100050, 99100100))
    assert failures == [
        ("crossref", f"updates {batch}", FAILED),
        ("crossref", "works", FAILED),
    ]
    pubmed = [c for c in three.sink.calls if c[:2] == ("records", "pubmed")]
    assert sum(len(c[2]) for c in pubmed) == RECORDS
    incomplete = {i for c in pubmed for i in c[3]}
    assert incomplete == {f"pmid:{p}" for p in range(99100050, 99100100)}


def _no_stage_left(before: set[str]) -> bool:
    return {t.name for t in threading.enumerate()} == before


def test_strict_stops_every_thread_at_a_stages_failure_and_lists_it(tmp_path: Path) -> None:
    """The second chunk's notices fail under strict, on Crossref's stage: run() raises the
    sequential harvest's error, the failure is the last call the sink got, nothing after it
    was delivered (no trial, no label), and no stage thread is left."""
    text = _spec(tmp_path)

    def fail(source: str, url: str) -> bool:
        return source == "crossref" and "bench.99100060" in url

    before = {t.name for t in threading.enumerate()}
    one = run_harvest(text, jobs=1, fail=fail, strict=True)
    started = time.monotonic()
    three = run_harvest(text, jobs=3, fail=fail, strict=True)
    elapsed = time.monotonic() - started
    assert one.raised is not None and three.raised is not None
    assert three.raised.message == one.raised.message == FAILED
    assert three.sink.calls[-1] == one.sink.calls[-1]
    assert three.sink.calls[-1][:2] == ("failure", "crossref")
    assert not [c for c in three.sink.calls if c[:2] == ("records", "clinicaltrials")]
    assert _no_stage_left(before)
    assert elapsed < 30


def test_strict_stops_every_stage_at_a_failure_on_the_harvests_own_thread(
    tmp_path: Path,
) -> None:
    """The trials' request fails under strict while chunks of PubMed may still be on their
    way: the error leaves run(), listed as the last call, and no stage thread is left."""
    text = _spec(tmp_path)
    before = {t.name for t in threading.enumerate()}
    three = run_harvest(text, jobs=3, fail=lambda s, _: s == "clinicaltrials", strict=True)
    assert three.raised is not None
    assert three.raised.message.startswith(
        "GET clinicaltrials.gov/api/v2/studies answered HTTP 400"
    )
    assert three.sink.calls[-1][:3] == ("failure", "clinicaltrials", "fetch")
    assert not [c for c in three.sink.calls if c[:2] == ("records", "openfda")]
    assert _no_stage_left(before)


def test_the_harvests_thread_waits_beyond_the_bound_of_chunks_on_their_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At most AHEAD chunks are handed in and not yet delivered (memory stays flat)."""
    most = [0]
    submit = harvest_pipeline.Pipeline.submit

    def counted(self: harvest_pipeline.Pipeline, *args: Any) -> None:
        submit(self, *args)
        most[0] = max(most[0], len(self._pending))  # what the bound holds

    monkeypatch.setattr(harvest_pipeline.Pipeline, "submit", counted)
    monkeypatch.setattr(harvest, "CHUNK", 20)  # 8 chunks of PubMed records
    run_harvest(_spec(tmp_path, trials=1, labels=1), jobs=3)
    assert most[0] == harvest_pipeline.AHEAD


def test_no_host_is_asked_faster_than_its_limit_when_the_enrichments_run_beside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Paced at the published rates (NCBI with a key, Crossref's polite pool), the requests
    the client let start in any one second never exceed a host's limit, and the sink calls
    are still the sequential harvest's. The starts are the limiter's granted slots: arrival
    stamps at the stand-in bunch when a loaded host wakes its threads late (they flaked)."""
    text = _spec(tmp_path, trials=1, labels=1)
    one = run_harvest(text, jobs=1)
    granted: list[tuple[str, float]] = []
    wait = pacing.RateLimiter.wait

    def logged(self: pacing.RateLimiter, host: str) -> float:
        waited = wait(self, host)
        granted.append((host, self.granted.at))  # this thread's slot
        return waited

    monkeypatch.setattr(pacing.RateLimiter, "wait", logged)
    three = run_harvest(text, jobs=3, paced=True)
    assert one.sink.calls == three.sink.calls
    starts = started_peaks(granted, HOSTS)
    limits = {"pubmed": 10.0, "pubtator3": 3.0, "crossref": 3.0}
    for name, limit in limits.items():
        assert 1 <= starts[name] <= math.ceil(limit), name
        assert len(three.arrivals[name]) == sum(HOSTS.get(h) == name for h, _ in granted), name


def test_a_snapshot_built_pipelined_is_the_one_built_one_step_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo corpus with Europe PMC's full text (annotations and notices on their stages,
    the full texts joining their chunks), its first snapshot and its refreshed child (which
    reads a lineage), built with 1 job and with 3: every table's rows fingerprint the same."""
    entered = [0]
    enter = harvest_pipeline.Pipeline.__enter__

    def counted(self: harvest_pipeline.Pipeline) -> harvest_pipeline.Pipeline:
        entered[0] += 1
        return enter(self)

    monkeypatch.setattr(harvest_pipeline.Pipeline, "__enter__", counted)
    built = {}
    for jobs in (1, 3):
        folder = tmp_path / f"jobs{jobs}"
        folder.mkdir()
        spec = copy_demo_spec(folder)
        assert "full_text = true" in spec.read_text()
        settings = Settings(harvest_jobs=jobs)
        first = build_snapshot(
            spec, keyring=TEST_KEYRING, replay=[DEMO_REPLAY], settings=settings, resume=False
        )
        second = build_snapshot(
            spec,
            keyring=TEST_KEYRING,
            parent="latest",
            replay=[DEMO_UPDATE, DEMO_REPLAY],
            settings=settings,
            resume=False,
        )
        built[jobs] = demo_fingerprints(first.path, second.path)
        texts = first.path
    assert entered[0] >= 2  # the jobs=3 builds were pipelined (run, and the refresh)
    assert built[1] == built[3]
    assert all(entry["rows"] > 0 for name, entry in built[3].items() if name.endswith("/records"))
    con = duckdb.connect(str(texts), read_only=True)
    try:  # the full texts are in it (pmcid: records of Europe PMC)
        (count,) = con.execute(
            "SELECT count(*) FROM records WHERE record_id LIKE 'pmcid:%'"
        ).fetchone() or (0,)
    finally:
        con.close()
    assert count > 0


@pytest.mark.parametrize(
    ("argv", "env", "jobs"), [(["--jobs", "1"], "5", 1), ([], "5", 5), ([], None, 3)]
)
def test_snapshot_build_jobs_sets_the_harvests_threads_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], env: str | None, jobs: int
) -> None:
    from typer.testing import CliRunner

    from pipeline.cli import app, snapshot_cmd

    seen: list[int] = []

    def build(*args: object, settings: Settings, **kwargs: object) -> None:
        seen.append(settings.harvest_jobs)
        raise KeyboardInterrupt  # what it would build is not this test's

    monkeypatch.setattr(snapshot_cmd, "build_snapshot", build)
    if env is None:
        monkeypatch.delenv("CITESEAL_HARVEST_JOBS", raising=False)
    else:
        monkeypatch.setenv("CITESEAL_HARVEST_JOBS", env)
    spec = copy_demo_spec(tmp_path)
    CliRunner().invoke(app, ["snapshot", "build", str(spec), "--demo-key", *argv])
    assert seen == [jobs]


def test_snapshot_build_refuses_zero_jobs() -> None:
    from typer.testing import CliRunner

    from pipeline.cli import app

    done = CliRunner().invoke(app, ["snapshot", "build", "x.toml", "--jobs", "0"])
    assert done.exit_code == 2
    assert done.output.endswith(
        "Error: Invalid value for '--jobs': Input should be greater than or equal to 1\n"
    )
