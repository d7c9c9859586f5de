"""``citeseal serve --online`` (pipeline/serve/online.py) against loopback stand-ins.

The stand-ins are the live bench's APIs (:class:`pipeline.bench.bench_live.LoopbackAPI`:
PubMed esearch/efetch, PubTator3, Crossref, ClinicalTrials.gov and openFDA in their formats,
synthetic records only), one per loopback address, each started by the test, with every
``CITESEAL_<SOURCE>_URL`` pointing at them (Europe PMC's at one that answers 404), so no
request can leave the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit.errors import InputError
from audit.handles import parse_handle, verify
from pipeline.bench.bench_live import BASE_PATHS, Answer, Answers, LoopbackAPI, TokenBucket
from pipeline.errors import SnapshotError, TerminalHarvestError, TransientHarvestError
from pipeline.http import HttpClient
from pipeline.serve import describe, service
from pipeline.serve.online import (
    DeadlinePassed,
    DeadlineTransport,
    LiveServed,
    ids_spec,
    live_ids,
    query_spec,
)
from pipeline.serve.service import HandleQuery, Outcome, Served
from pipeline.settings import BASE_URLS, Settings
from pipeline.snapshot.locate import snapshots_in
from pipeline.snapshot.manifest import manifest_path, read_manifest, sha256_file
from pipeline.snapshot.spec import CorpusSpec
from pipeline.snapshot.trust import SealPolicy, trust_snapshot
from tests.conftest import TEST_KEY_HEX, TEST_KEYRING
from tests.pipeline.serve.conftest import DEMO

CITESEAL = [sys.executable, "-c", "from pipeline.cli import main; main()"]
POLICY = SealPolicy.of(TEST_KEYRING, DEMO)  # the demo pair's seal, and the children's (demo)
HOSTS = {
    "pubmed": "127.0.0.2",
    "pubtator3": "127.0.0.3",
    "crossref": "127.0.0.4",
    "clinicaltrials": "127.0.0.5",
    "openfda": "127.0.0.6",
    "europepmc": "127.0.0.7",
    "arxiv": "127.0.0.8",  # not asked by serve --online; moved to loopback all the same
    "openalex": "127.0.0.9",
}
DEMO_SPEC = CorpusSpec.model_validate(
    {
        "name": "demo",
        "pubmed": {"ids": ["99000003"], "annotations": True},
        "europepmc": {"full_text": True},
        "crossref": {"updates": True},
        "clinicaltrials": {"ids": ["NCT99000001"]},
    }
)


# -- the stand-ins -----------------------------------------------------------------------------


@dataclass
class Standin:
    """Every source's loopback API; ``override`` answers first when it returns an answer."""

    apis: dict[str, LoopbackAPI]
    override: Callable[[str, str, str, bytes], Answer | None] | None = None
    seen: list[str] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        return {
            f"CITESEAL_{source.upper()}_URL": api.url(BASE_PATHS.get(source, "/rest"))
            for source, api in self.apis.items()
        }

    @property
    def requests(self) -> int:
        return sum(api.counts.answered for api in self.apis.values())


@pytest.fixture
def standin() -> Iterator[Standin]:
    answers = Answers(10)
    state = Standin({})

    def answer(source: str, method: str, url: str, form: bytes) -> Answer:
        state.seen.append(f"{source} {url}")
        made = state.override(source, method, url, form) if state.override else None
        return made if made is not None else answers(source, method, url, form)

    with ExitStack() as stack:
        for source, host in HOSTS.items():
            api = LoopbackAPI(source, answer, TokenBucket(1000.0), host)
            state.apis[source] = stack.enter_context(api)
        assert set(state.apis) == set(BASE_URLS)  # every source is moved to loopback
        yield state
        stops = [threading.Thread(target=a.server.shutdown) for a in state.apis.values()]
        for stop in stops:  # together: each waits up to its poll interval (0.5 s)
            stop.start()
        for stop in stops:
            stop.join()


@pytest.fixture
def folder(demo_pair: tuple[Path, Path], tmp_path: Path) -> Path:
    """A private copy of the demo corpus folder (the pair), so children land in it only."""
    corpus = tmp_path / "snapshots" / "demo"
    corpus.mkdir(parents=True)
    for path in demo_pair:
        shutil.copyfile(path, corpus / path.name)
        shutil.copyfile(manifest_path(path), manifest_path(corpus / path.name))
    return corpus


@pytest.fixture
def live(folder: Path, standin: Standin) -> Iterator[LiveServed]:
    trusted = trust_snapshot(snapshots_in(folder)[-1].path, POLICY)
    settings = Settings.from_env(standin.env)
    served = LiveServed(trusted, DEMO, policy=POLICY, settings=settings, deadline=20)
    with served:
        yield served


# -- the specs (pure) --------------------------------------------------------------------------


def test_ids_spec_puts_each_scheme_in_its_section_with_the_served_enrichment() -> None:
    spec = ids_spec(
        DEMO_SPEC,
        [
            "pmid:99100001",
            "pmcid:PMC99000001",
            "ppr:PPR99000001",
            "nct:NCT99000777",
            "setid:5eed0009-0000-4000-8000-000000000009",
            "pmid:99100001",
        ],
    )
    assert spec.harvested() == {
        "name": "demo",
        "pubmed": {"queries": [], "ids": ["99100001"], "annotations": True},
        "europepmc": {
            "queries": [],
            "ids": ["PPR99000001"],
            "pmcids": ["PMC99000001"],
            "full_text": True,
        },
        "crossref": {"updates": True, "dois": []},
        "clinicaltrials": {"queries": [], "ids": ["NCT99000777"]},
        "openfda": {"queries": [], "set_ids": ["5eed0009-0000-4000-8000-000000000009"]},
    }


def test_query_spec_asks_only_sources_that_take_queries() -> None:
    spec = query_spec(DEMO_SPEC, "bench0", 5, ["pubmed", "pubtator3", "crossref"])
    assert spec.harvested() == {
        "name": "demo",
        "pubmed": {"queries": [{"term": "bench0", "limit": 5}], "ids": [], "annotations": True},
        "crossref": {"updates": True, "dois": []},
    }
    with pytest.raises(InputError) as caught:
        query_spec(DEMO_SPEC, "x", 5, ["pubtator3", "crossref"])
    assert caught.value.message == "none of pubtator3, crossref can be searched live"


def test_live_ids_leaves_ids_no_source_can_be_asked_for_to_the_service() -> None:
    asked = ["pmid:99100001", "pmid:0123", "doi:10.5555/x", "nct:NCT1", "bogus", "setid:ABC"]
    assert live_ids(asked) == ["pmid:99100001"]


SCHEME_IDS = {  # scheme → a strategy of ids of its source's form
    "pmid": st.integers(1, 9_999_999_999).map(str),
    "pmcid": st.integers(1, 9_999_999_999).map(lambda n: f"PMC{n}"),
    "ppr": st.integers(1, 9_999_999_999).map(lambda n: f"PPR{n}"),
    "nct": st.integers(0, 99_999_999).map(lambda n: f"NCT{n:08d}"),
    "setid": st.uuids().map(str),
}
SECTION_KEYS = {
    "pmid": ("pubmed", "ids"),
    "pmcid": ("europepmc", "pmcids"),
    "ppr": ("europepmc", "ids"),
    "nct": ("clinicaltrials", "ids"),
    "setid": ("openfda", "set_ids"),
}
RECORD_IDS = st.lists(
    st.sampled_from(sorted(SCHEME_IDS)).flatmap(
        lambda scheme: SCHEME_IDS[scheme].map(lambda ident: f"{scheme}:{ident}")
    ),
    min_size=1,
    max_size=20,
)


@given(RECORD_IDS)
def test_ids_spec_asks_for_every_id_once_in_its_section(record_ids: list[str]) -> None:
    assert live_ids(record_ids) == record_ids
    harvested = ids_spec(DEMO_SPEC, record_ids).harvested()
    for scheme, (section, key) in SECTION_KEYS.items():
        wanted = [r.partition(":")[2] for r in record_ids if r.startswith(f"{scheme}:")]
        assert harvested.get(section, {}).get(key, []) == list(dict.fromkeys(wanted))


@given(st.lists(st.text(max_size=40), max_size=10))
def test_live_ids_keeps_only_ids_a_source_can_be_asked_for(texts: list[str]) -> None:
    kept = live_ids(texts)
    assert set(kept) <= set(texts)
    ids_spec(DEMO_SPEC, kept)  # every id kept makes a valid spec


def test_deadline_transport_refuses_requests_past_the_deadline_and_shortens_timeouts() -> None:
    timeouts: list[dict[str, float]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        timeouts.append(request.extensions["timeout"])
        return httpx.Response(200)

    inner = httpx.MockTransport(answer)
    with httpx.Client(transport=DeadlineTransport(inner, time.monotonic() + 5), timeout=30) as c:
        assert c.get("http://127.0.0.1/x").status_code == 200
    assert set(timeouts[0]) == {"connect", "read", "write", "pool"}
    assert all(0 < value <= 5 for value in timeouts[0].values())
    with (
        httpx.Client(transport=DeadlineTransport(inner, time.monotonic() - 1)) as client,
        pytest.raises(DeadlinePassed, match="the live call's deadline has passed"),
    ):
        client.get("http://127.0.0.1/x")
    assert len(timeouts) == 1


def test_a_retry_never_sleeps_past_the_deadline_of_its_transport() -> None:
    """A 429 asking for 30 s, with 0.4 s left: the client waits out the 0.4 s, then the next
    attempt is refused unsent (not a 30 s sleep holding the live worker)."""
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        time.sleep(seconds)

    def busy(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, headers={"Retry-After": "30"}, request=request)

    transport = DeadlineTransport(httpx.MockTransport(busy), time.monotonic() + 0.4)
    started = time.monotonic()
    with (
        HttpClient(Settings(max_attempts=3), transport=transport, sleep=sleep) as http,
        pytest.raises(TerminalHarvestError, match="the live call's deadline has passed"),
    ):
        http.get("http://127.0.0.1/esearch.fcgi", source="pubmed")
    assert waits and max(waits) <= 0.4  # pacing and the one retry wait, none of them 30 s
    assert time.monotonic() - started < 2.0


def hit_ids(outcome: Outcome) -> list[str]:
    return [hit["record_id"] for hit in outcome.value.model_dump()["results"]]


def verdicts(outcome: Outcome) -> list[str]:
    return [result["verdict"] for result in outcome.value.model_dump()["results"]]


# -- live harvests -------------------------------------------------------------------------------


def test_a_fetch_of_ids_the_snapshot_lacks_seals_a_child_whose_handles_verify(
    live: LiveServed, folder: Path
) -> None:
    served_file = live.root.path
    before = sha256_file(served_file)
    old = service.fetch(live, ["nct:NCT99000001"]).value.model_dump()["records"][0]["record"]
    got = service.fetch(live, ["pmid:99100001", "nct:NCT99000777"]).value.model_dump()
    records = {r["record"]["record_id"]: r["record"] for r in got["records"]}
    assert set(records) == {"pmid:99100001", "nct:NCT99000777"}
    assert records["nct:NCT99000777"]["title"] == "Bench trial NCT99000777"
    new = [p["handle"] for r in records.values() for p in r["passages"]]
    assert new and all(verify(DEMO, parse_handle(h)) for h in new)

    # one child, named as the build names children, whose parent is the served snapshot
    (child,) = live.children
    assert [s.path for s in snapshots_in(folder)][-2:] == [served_file, child.path]
    manifest = read_manifest(child.path)
    assert manifest.parent is not None and manifest.parent.sha256 == live.root.sha256
    assert (manifest.mode, manifest.partial, manifest.seal is not None) == ("live", False, True)
    assert sha256_file(served_file) == before  # the served snapshot is never written

    # the child verifies the parent's handles and its own, here and in a fresh reader
    handles = [old["passages"][0]["handle"], *new]
    judged = service.resolve(live, [HandleQuery(handle=h) for h in handles]).value.model_dump()
    assert [r["verdict"] for r in judged["results"]] == ["ok"] * len(handles)
    with Served(trust_snapshot(child.path, POLICY), DEMO) as offline:
        again = service.resolve(offline, [HandleQuery(handle=h) for h in handles])
    assert verdicts(again) == ["ok"] * len(handles)
    assert describe.info(live).value.model_dump()["identity"]["file"] == child.path.name


def test_a_search_with_fewer_results_than_asked_harvests_the_query_once(
    live: LiveServed, standin: Standin
) -> None:
    def esearch(source: str, method: str, url: str, form: bytes) -> Answer | None:
        if source == "pubmed" and "esearch" in url:  # the bench answers "benchN" queries
            return Answers(10)(source, method, url.replace("term=hepatic", "term=bench0"), form)
        return None

    standin.override = esearch
    found = service.search(live, "literature", "hepatic", limit=50, sources=["pubmed"])
    ids = hit_ids(found)
    assert any(rid.startswith("pmid:991000") for rid in ids)
    assert len(live.children) == 1
    assert any("esearch" in s and "term=hepatic" in s for s in standin.seen)
    asked = standin.requests
    again = service.search(live, "literature", "hepatic", limit=50, sources=["pubmed"])
    assert hit_ids(again) == ids
    assert (standin.requests, len(live.children)) == (asked, 1)  # not asked twice
    enough = service.search(live, "literature", "zentravir", limit=2)
    assert len(hit_ids(enough)) == 2
    assert (standin.requests, len(live.children)) == (asked, 1)  # the snapshot answered


def test_an_id_upstream_does_not_return_is_an_error_and_is_asked_once(
    live: LiveServed, standin: Standin
) -> None:
    def empty(source: str, method: str, url: str, form: bytes) -> Answer | None:
        del method, url, form
        if source == "pubmed":
            return 200, "text/xml", b'<?xml version="1.0" ?>\n<PubmedArticleSet></PubmedArticleSet>'
        return None

    standin.override = empty
    message = (
        "pmid:99199999 is not in this snapshot, and upstream did not return it when asked live"
    )
    for _ in range(2):
        with pytest.raises(InputError) as caught:
            service.fetch(live, ["pmid:99199999"])
        assert caught.value.message == message
    efetches = [s for s in standin.seen if s.startswith("pubmed") and "efetch" in s]
    assert len(efetches) == 1  # the second call did not ask upstream again


@pytest.mark.parametrize(
    ("answer", "detail"),
    [
        ((503, "text/plain", b"down"), "failed after 3 attempts: HTTP 503 Service Unavailable"),
        (
            (429, "application/json", b'{"error": "rate limit exceeded"}'),
            "failed after 3 attempts: HTTP 429 Too Many Requests",
        ),
        ((200, "text/xml", b"<PubmedArticleSet><PubmedArticle>"), None),
    ],
    ids=["outage", "429-storm", "malformed"],
)
def test_an_upstream_failure_is_an_unavailable_error_and_seals_nothing(
    live: LiveServed,
    folder: Path,
    standin: Standin,
    answer: Answer,
    detail: str | None,
) -> None:
    standin.override = lambda source, *_: answer if source == "pubmed" else None
    before = snapshots_in(folder)
    with pytest.raises(TransientHarvestError) as caught:
        service.fetch(live, ["pmid:99100001"])
    message = caught.value.message
    assert message.startswith("upstream unavailable: pubmed: efetch failed: ")
    assert message.endswith("; nothing was added to the snapshot")
    if detail is not None:
        where = f"127.0.0.2:{standin.apis['pubmed'].port}/entrez/eutils/efetch.fcgi"
        assert message == (
            f"upstream unavailable: pubmed: efetch failed: GET {where} {detail}; nothing was "
            "added to the snapshot"
        )
    assert caught.value.advice == "retry later (the call may be repeated)"
    assert snapshots_in(folder) == before and live.children == []
    assert live.trusted.path == live.root.path


def test_a_live_call_answers_unavailable_at_its_deadline(folder: Path, standin: Standin) -> None:
    release = threading.Event()

    def slow(source: str, *_: object) -> Answer | None:
        if source == "pubmed":
            release.wait(10)
        return None

    standin.override = slow
    trusted = trust_snapshot(snapshots_in(folder)[-1].path, POLICY)
    settings = Settings.from_env(standin.env)
    with LiveServed(trusted, DEMO, policy=POLICY, settings=settings, deadline=1.5) as served:
        started = time.monotonic()
        with pytest.raises(TransientHarvestError) as caught:
            service.fetch(served, ["pmid:99100001"])
        took = time.monotonic() - started
        release.set()
    assert caught.value.message == (
        "upstream unavailable: the live harvest of 1 record id(s) did not finish within "
        "1.5 s; nothing was added to the snapshot"
    )
    assert 1.4 < took < 3.0
    assert len(snapshots_in(folder)) == 2  # the late harvest failed its deadline: no child


def test_concurrent_calls_while_a_live_harvest_moves_the_head_are_all_answered(
    live: LiveServed,
) -> None:
    parent = service.fetch(live, ["nct:NCT99000001"]).value.model_dump()
    handle = parent["records"][0]["record"]["passages"][0]["handle"]
    fetched: list[str] = []
    judged: list[list[str]] = []
    failures: list[BaseException] = []

    def fetch() -> None:
        got = service.fetch(live, ["nct:NCT99000555"]).value.model_dump()
        fetched.append(got["records"][0]["record"]["record_id"])

    def resolve() -> None:
        judged.append(verdicts(service.resolve(live, [HandleQuery(handle=handle)])))

    def guarded(call: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                call()
            except BaseException as error:  # noqa: BLE001 - reported by the assert below
                failures.append(error)

        return run

    calls = [fetch] * 4 + [resolve] * 12
    threads = [threading.Thread(target=guarded(call)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == []
    assert fetched == ["nct:NCT99000555"] * 4 and judged == [["ok"]] * 12
    assert len(live.children) == 1  # the four fetches harvested the id once


# -- the command ---------------------------------------------------------------------------------


def _env(tmp_path: Path, standin: Standin) -> dict[str, str]:
    return {
        **os.environ,
        **standin.env,
        "CITESEAL_KEY": TEST_KEY_HEX,
        "CITESEAL_DATA_DIR": str(tmp_path / "data"),
    }


class Wire:
    """A ``citeseal serve`` subprocess spoken to in raw JSON-RPC lines (so it can be killed)."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        self.stderr = (cwd / "stderr.txt").open("w")
        self.process = subprocess.Popen(
            [*CITESEAL, "serve", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=env,
            cwd=cwd,
        )
        self.next_id = 0
        self.send(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        )
        self.notify("notifications/initialized")

    def close(self, *, kill: bool = False) -> int:
        """End the server: kill -9, or close its input (EOF); its exit code."""
        assert self.process.stdin is not None and self.process.stdout is not None
        if kill:
            self.process.kill()
        else:
            self.process.stdin.close()
        code = self.process.wait(30)
        for stream in (self.process.stdin, self.process.stdout, self.stderr):
            stream.close()
        return code

    def notify(self, method: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")
        self.process.stdin.flush()

    def post(self, method: str, params: dict[str, object]) -> int:
        assert self.process.stdin is not None
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        return self.next_id

    def answer(self, ident: int) -> dict[str, object]:
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            assert line, "the server closed its output"
            message = json.loads(line)
            if message.get("id") == ident:
                return message["result"]

    def send(self, method: str, params: dict[str, object]) -> dict[str, object]:
        return self.answer(self.post(method, params))

    def call(self, tool: str, arguments: dict[str, object]) -> dict[str, object]:
        return self.send("tools/call", {"name": tool, "arguments": arguments})


def test_a_server_killed_mid_harvest_leaves_every_issued_handle_verifiable(
    folder: Path, standin: Standin, tmp_path: Path
) -> None:
    entered, release = threading.Event(), threading.Event()

    def hang(source: str, method: str, url: str, form: bytes) -> Answer | None:
        if source == "pubmed" and b"99100009" in form + url.encode():
            entered.set()
            release.wait(20)
        return None

    standin.override = hang
    args = ["--snapshot", str(folder), "--demo-key", "--online"]
    wire = Wire(args, _env(tmp_path, standin), tmp_path)
    try:
        fetched = wire.call("fetch_passages", {"record_ids": ["pmid:99100001"]})
        assert fetched["isError"] is False
        content = fetched["structuredContent"]
        assert isinstance(content, dict)
        handles = [p["handle"] for p in content["records"][0]["record"]["passages"]]
        visible = [s.path.name for s in snapshots_in(folder)]
        wire.post(
            "tools/call", {"name": "fetch_passages", "arguments": {"record_ids": ["pmid:99100009"]}}
        )
        assert entered.wait(30)
        time.sleep(0.3)
        assert list(folder.glob(".build-*.duckdb"))  # the build is under way, hidden
    finally:
        code = wire.close(kill=True)  # kill -9
        release.set()
    assert code == -9
    assert [s.path.name for s in snapshots_in(folder)] == visible  # nothing half-written
    answer = tmp_path / "answer.md"
    answer.write_text(
        "".join(f"Claim {n} [{h}].\n" for n, h in enumerate(handles, start=1)), encoding="utf-8"
    )
    done = subprocess.run(
        [
            *CITESEAL,
            "audit",
            str(answer),
            "--snapshot",
            str(folder),
            "--demo-key",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        env=_env(tmp_path, standin),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "pass"
    verdicts = [c["verdict"] for sentence in report["sentences"] for c in sentence["citations"]]
    assert verdicts == ["ok"] * len(handles)
    assert report["snapshot"]["snapshot_id"] == visible[-1].removesuffix(".duckdb")


@pytest.mark.parametrize(("end", "code"), [("eof", 0), ("sigterm", -signal.SIGTERM)])
def test_a_stopped_server_leaves_its_children_sealed(
    folder: Path, standin: Standin, tmp_path: Path, end: str, code: int
) -> None:
    wire = Wire(
        ["--snapshot", str(folder), "--demo-key", "--online"], _env(tmp_path, standin), tmp_path
    )
    fetched = wire.call("fetch_passages", {"record_ids": ["nct:NCT99000321"]})
    assert fetched["isError"] is False
    tools = wire.send("tools/list", {})["tools"]
    assert isinstance(tools, list)
    assert {t["name"]: t["annotations"]["openWorldHint"] for t in tools}["fetch_passages"] is True
    if end == "sigterm":
        wire.process.send_signal(signal.SIGTERM)
    assert wire.close() == code
    newest = snapshots_in(folder)[-1].path
    assert read_manifest(newest).mode == "live"
    trust_snapshot(newest, POLICY)  # sealed, verifies


def test_without_online_the_server_sends_no_request(
    folder: Path, standin: Standin, tmp_path: Path
) -> None:
    wire = Wire(["--snapshot", str(folder), "--demo-key"], _env(tmp_path, standin), tmp_path)
    try:
        missing = wire.call("fetch_passages", {"record_ids": ["pmid:99100001"]})
        short = wire.call("search_literature", {"query": "bench0", "limit": 50})
        trials = wire.call("search_trials", {"query": "zentravir", "limit": 50})
    finally:
        wire.close()
    assert missing["isError"] is True
    assert missing["content"] == [
        {
            "type": "text",
            "text": "Error executing tool fetch_passages: pmid:99100001 is not in this snapshot",
        }
    ]
    assert short["isError"] is False and trials["isError"] is False
    assert standin.requests == 0 and standin.seen == []
    assert len(snapshots_in(folder)) == 2


def test_a_deadline_that_is_not_positive_is_refused_before_anything_starts(
    folder: Path, tmp_path: Path
) -> None:
    done = subprocess.run(
        [
            *CITESEAL,
            "serve",
            "--snapshot",
            str(folder),
            "--demo-key",
            "--online",
            "--online-deadline",
            "0",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "CITESEAL_DATA_DIR": str(tmp_path / "data")},
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "error: --online-deadline must be a positive number of seconds, got 0\n"


@pytest.mark.anyio
async def test_through_mcp_a_malformed_body_is_an_is_error_result_saying_upstream_is_unavailable(
    live: LiveServed, standin: Standin
) -> None:
    from mcp import Client

    from pipeline.serve.server import build_server

    body = b"<PubmedArticleSet><PubmedArticle>"
    standin.override = lambda source, *_: (200, "text/xml", body) if source == "pubmed" else None
    async with Client(build_server(live), raise_exceptions=True) as client:
        tools = (await client.list_tools()).tools
        result = await client.call_tool("fetch_passages", {"record_ids": ["pmid:99100001"]})
    assert all(t.annotations is not None and t.annotations.open_world_hint for t in tools)
    assert result.is_error and result.structured_content is not None
    assert result.structured_content["error"]["code"] == "upstream_unavailable"
    assert result.structured_content["error"]["retryable"] is True
    assert [block.model_dump(exclude_none=True) for block in result.content] == [
        {
            "type": "text",
            "text": "Error executing tool fetch_passages: upstream unavailable: pubmed: efetch "
            "failed: expected PubMed XML (efetch PubmedArticleSet or esearch) but the XML is not "
            "well-formed: Premature end of data in tag PubmedArticle line 1; nothing was added "
            "to the snapshot; hint: retry later (the call may be repeated)",
        }
    ]


def test_a_child_that_cannot_be_written_is_an_error_naming_the_folder(
    live: LiveServed, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("pipeline.serve.online.build_locked", full)
    with pytest.raises(SnapshotError) as caught:
        service.fetch(live, ["pmid:99100001"])
    assert caught.value.message == (
        "cannot write a live child snapshot into the corpus folder demo: No space left on "
        "device; nothing was added to the snapshot"
    )
    assert live.children == [] and live.trusted.path == live.root.path


@pytest.mark.anyio
async def test_a_live_call_past_the_call_deadline_is_deadline_exceeded_and_writes_no_child(
    folder: Path, standin: Standin
) -> None:
    from mcp import Client

    from pipeline.serve.server import build_server

    release = threading.Event()

    def slow(source: str, *_: object) -> Answer | None:
        if source == "pubmed":
            release.wait(1.0)  # past the call's deadline: the live request is refused after it
        return None

    standin.override = slow
    before = sorted(p.name for p in folder.iterdir())
    trusted = trust_snapshot(snapshots_in(folder)[-1].path, POLICY)
    settings = Settings.from_env(standin.env)
    live = LiveServed(trusted, DEMO, policy=POLICY, settings=settings, deadline=20)
    with live:
        async with Client(build_server(live, deadline=0.3), raise_exceptions=True) as client:
            result = await client.call_tool("fetch_passages", {"record_ids": ["pmid:99100001"]})
        release.set()
    # closing waited for the live worker: the late harvest has ended, one way or the other
    assert result.is_error and isinstance(result.structured_content, dict)
    assert result.structured_content["error"]["code"] == "deadline_exceeded"
    assert result.structured_content["error"]["retryable"] is True
    after = sorted(p.name for p in folder.iterdir() if p.name != ".build-lock")  # the folder's lock
    assert after == before  # no child, nothing half-written
    assert live.children == []
