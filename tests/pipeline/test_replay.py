"""Replay and record transports: matching rules, file naming, folder priority, misses."""

from __future__ import annotations

import json
import time
import zlib
from pathlib import Path

import httpx
import pytest

from pipeline.errors import (
    ParseError,
    ReplayMissError,
    TerminalHarvestError,
    TransientHarvestError,
)
from pipeline.http import HttpClient
from pipeline.replay import (
    RecordingTransport,
    ReplayTransport,
    make_wrapper,
    replay_key,
    short_hash,
    write_wrapper,
)
from pipeline.settings import Settings
from pipeline.snapshot.resume import ResumeTransport
from pipeline.sources import pubmed

EFETCH = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi"
FAST = {"eutils.ncbi.nlm.nih.gov": 0.0, "api.crossref.org": 0.0}


def fake_api(request: httpx.Request) -> httpx.Response:
    if request.url.params.get("id") == "503":
        return httpx.Response(503, text="busy")
    return httpx.Response(
        200,
        headers={"content-type": "text/xml"},
        text=f"<answer method='{request.method}' id='{request.url.params.get('id', '')}'/>",
    )


def put(folder: Path, name: str, url: str, body: str, **extra: object) -> Path:
    wrapper = {"url": url, "status": 200, "content_type": "text/plain", "body": body, **extra}
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(wrapper), encoding="utf-8")
    return path


def test_recorded_exchanges_replay_identically(tmp_path: Path) -> None:
    recorder = RecordingTransport(httpx.MockTransport(fake_api), tmp_path)
    settings = Settings(email="me@example.org", ncbi_api_key="secret-key-0123456789")
    with HttpClient(settings, transport=recorder, rates=FAST) as http:
        live = http.get(EFETCH, params={"db": "pubmed", "id": "99000001"}, source="pubmed")
    [written] = recorder.written
    key = replay_key("GET", f"{EFETCH}?db=pubmed&id=99000001")
    assert written == tmp_path / "pubmed" / f"efetch-{short_hash(key)}.json"
    stored = json.loads(written.read_text(encoding="utf-8"))
    assert stored == {
        "url": f"{EFETCH}?db=pubmed&id=99000001",
        "status": 200,
        "content_type": "text/xml",
        "body": "<answer method='GET' id='99000001'/>",
    }
    assert "secret-key" not in written.read_text() and "me@example.org" not in written.read_text()
    assert not list(tmp_path.rglob(".tmp-*"))  # atomic write leaves no temp file
    with HttpClient(settings, transport=ReplayTransport([tmp_path])) as http:
        again = http.get(EFETCH, params={"id": "99000001", "db": "pubmed"}, source="pubmed")
    assert again.content == live.content
    assert again.headers["content-type"] == "text/xml"


def test_retryable_answers_are_not_recorded(tmp_path: Path) -> None:
    recorder = RecordingTransport(httpx.MockTransport(fake_api), tmp_path)
    with (
        HttpClient(Settings(max_attempts=1), transport=recorder, rates=FAST) as http,
        pytest.raises(TransientHarvestError, match="HTTP 503"),
    ):
        http.get(EFETCH, params={"id": "503"}, source="pubmed")
    assert recorder.written == []


def test_matching_ignores_query_order_encoding_and_credentials(tmp_path: Path) -> None:
    put(
        tmp_path,
        "a.json",
        "https://api.crossref.org/works?rows=100&filter=updates%3A10.5555%2Fx",
        "A",
    )
    replay = ReplayTransport([tmp_path])
    with HttpClient(Settings(email="me@example.org"), transport=replay) as http:
        response = http.get(
            "https://api.crossref.org/works",
            params={"filter": "updates:10.5555/x", "rows": 100},  # mailto is added, and ignored
            source="crossref",
        )
    assert response.text == "A"


def test_post_bodies_match_as_form_parameters(tmp_path: Path) -> None:
    put(tmp_path, "p.json", EFETCH, "posted", method="POST", request_body="id=1%2C2&db=pubmed")
    with HttpClient(Settings(ncbi_api_key="k" * 36), transport=ReplayTransport([tmp_path])) as http:
        answer = http.post(EFETCH, data={"db": "pubmed", "id": "1,2"}, source="pubmed")
        assert answer.text == "posted"
        with pytest.raises(ReplayMissError):
            http.post(EFETCH, data={"db": "pubmed", "id": "1,3"}, source="pubmed")
        with pytest.raises(ReplayMissError):
            http.get(EFETCH, params={"db": "pubmed", "id": "1,2"}, source="pubmed")


def test_first_folder_wins(tmp_path: Path) -> None:
    url = "https://www.ebi.ac.uk/europepmc/webservices/rest/PMC1/fullTextXML"
    put(tmp_path / "update", "x.json", url, "new")
    put(tmp_path / "base", "x.json", url, "old")
    put(tmp_path / "base", "y.json", url + "?other=1", "only-in-base")
    replay = ReplayTransport([tmp_path / "update", tmp_path / "base"])
    with HttpClient(Settings(), transport=replay) as http:
        assert http.get(url, source="europepmc").text == "new"
        assert http.get(url, params={"other": 1}, source="europepmc").text == "only-in-base"
    assert len(replay) == 2


def test_an_unmatched_request_names_method_url_and_folders_by_public_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside = tmp_path / "work" / "replay"
    outside = tmp_path / "elsewhere" / "recorded"
    put(inside, "a.json", f"{EFETCH}?id=1", "x")
    put(outside, "a.json", f"{EFETCH}?id=1", "x")
    monkeypatch.chdir(tmp_path / "work")
    settings = Settings(email="me@example.org", ncbi_api_key="secret-key-0123456789")
    with (
        HttpClient(settings, transport=ReplayTransport([inside, outside])) as http,
        pytest.raises(ReplayMissError) as caught,
    ):
        http.get(EFETCH, params={"id": "2"}, source="pubmed")
    # the folder inside the working folder relative to it, the other by its last part: the
    # message reaches the manifest, the harvest log and the site, never a local path
    assert caught.value.message == f"no recorded exchange for GET {EFETCH}?id=2 in replay, recorded"
    assert str(tmp_path) not in caught.value.message
    assert caught.value.exit_code == 3


def test_a_missing_folder_is_an_error_naming_it_by_its_public_name(tmp_path: Path) -> None:
    with pytest.raises(ReplayMissError) as caught:
        ReplayTransport([tmp_path / "nope"])
    assert caught.value.message == "replay folder nope does not exist"


def test_a_wrapper_file_broken_since_indexing_is_a_one_line_error_without_its_local_path(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "replay"
    put(folder, "pubmed/a.json", f"{EFETCH}?id=1", "x")
    replay = ReplayTransport([folder])
    (folder / "pubmed" / "a.json").write_text('{"url": "' + EFETCH + '?id=1", "body": [', "utf-8")
    with HttpClient(Settings(), transport=replay) as http, pytest.raises(ParseError) as caught:
        http.get(EFETCH, params={"id": "1"}, source="pubmed")
    assert caught.value.message == (
        "expected the wrapper file replay/pubmed/a.json but the JSON is malformed: "
        "Expecting value: line 1 column 84 (char 83)"
    )
    (folder / "pubmed" / "a.json").write_text("[1, 2]", "utf-8")
    (folder / "pubmed").rename(folder / "gone")
    with HttpClient(Settings(), transport=replay) as http:
        with pytest.raises(ReplayMissError) as missing:
            http.get(EFETCH, params={"id": "1"}, source="pubmed")
        (folder / "gone").rename(folder / "pubmed")
        with pytest.raises(ParseError) as odd:
            http.get(EFETCH, params={"id": "1"}, source="pubmed")
    assert missing.value.message == (
        "the wrapper file replay/pubmed/a.json cannot be read: No such file or directory"
    )
    assert odd.value.message == (
        "the wrapper file replay/pubmed/a.json is not a wrapper (an object with an HTTP status)"
    )


def test_non_wrapper_json_files_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "notes.json").write_text('{"not": "a wrapper"}', encoding="utf-8")
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    assert len(ReplayTransport([tmp_path])) == 0


def test_replay_is_not_paced(tmp_path: Path) -> None:
    put(tmp_path, "a.json", f"{EFETCH}?id=1", "x")
    waits: list[float] = []
    with HttpClient(Settings(), transport=ReplayTransport([tmp_path]), sleep=waits.append) as http:
        for _ in range(5):
            http.get(EFETCH, params={"id": "1"}, source="pubmed")
    assert waits == []


def test_make_wrapper_orders_keys_and_strips_credentials(tmp_path: Path) -> None:
    wrapper = make_wrapper(
        "post", f"{EFETCH}?api_key=s3cret", 200, "text/xml", "<x/>", "id=1&email=a%40b.org"
    )
    assert list(wrapper) == ["url", "method", "request_body", "status", "content_type", "body"]
    assert wrapper["url"] == EFETCH
    assert wrapper["request_body"] == "id=1"
    write_wrapper(tmp_path / "deep" / "w.json", wrapper)
    assert json.loads((tmp_path / "deep" / "w.json").read_text(encoding="utf-8")) == wrapper


def test_recorded_files_are_indexed_from_their_head_and_edited_ones_whole(
    tmp_path: Path,
) -> None:
    from pipeline.replay import _recorded_key

    form = "db=pubmed&id=99000001%2C99000002"
    key = replay_key("POST", EFETCH, form)
    recorded = tmp_path / "pubmed" / f"efetch-{short_hash(key)}.json"
    write_wrapper(recorded, make_wrapper("POST", EFETCH, 200, "text/xml", '<x a="\n "/>', form))
    assert _recorded_key(recorded, recorded.read_bytes()) == key  # from the head alone

    # edited by hand after recording (another id): the name no longer matches, parsed whole
    edited = tmp_path / "pubmed" / f"efetch-{short_hash(key)}-copy-{short_hash(key)}.json"
    text = recorded.read_text(encoding="utf-8").replace("99000002", "99000003")
    edited.write_text(text, encoding="utf-8")
    assert _recorded_key(edited, edited.read_bytes()) is None
    # a key after the body, or a body key that is not at the top level: parsed whole
    head = '{\n "url": "' + EFETCH + '",\n '
    odd = {
        "late": head + '"body": "<x/>",\n "method": "POST",\n "request_body": "' + form + '"\n}',
        "nested": head
        + '"x": {\n "body": 1},\n "method": "POST",\n "request_body": "'
        + form
        + '",\n "body": "<y/>"\n}',
    }
    for folder, text in odd.items():
        path = tmp_path / folder / f"efetch-{short_hash(key)}.json"
        path.parent.mkdir()
        path.write_text(text + "\n", encoding="utf-8")
        assert json.loads(path.read_text(encoding="utf-8"))["url"] == EFETCH  # valid JSON
        assert _recorded_key(path, path.read_bytes()) is None

    replay = ReplayTransport([tmp_path / "pubmed", tmp_path / "late", tmp_path / "nested"])
    assert len(replay) == 2  # the recorded file (first folder wins over the other two) + edit
    data = {"db": "pubmed", "id": "99000001,99000003"}
    with HttpClient(Settings(), transport=replay) as http:
        assert http.post(EFETCH, data=data, source="pubmed").text == '<x a="\n "/>'
        both = {"db": "pubmed", "id": "99000001,99000002"}
        assert http.post(EFETCH, data=both, source="pubmed").text == '<x a="\n "/>'


def echo_api(request: httpx.Request) -> httpx.Response:
    """An API that quotes the credentials of the request back in its answer."""
    key = request.url.params.get("api_key", "")
    mail = request.url.params.get("email", "")
    return httpx.Response(
        400, text=f'{{"error": "invalid", "api-key": "{key}", "contact": "{mail}"}}'
    )


@pytest.mark.parametrize("resume", [False, True], ids=["record", "resume-cache"])
def test_credentials_echoed_in_a_body_are_redacted_from_recorded_files(
    tmp_path: Path, resume: bool
) -> None:
    secret, mail = "echoed-secret-key-0123456789", "person@example.org"
    inner = httpx.MockTransport(echo_api)
    transport = ResumeTransport(inner, tmp_path) if resume else RecordingTransport(inner, tmp_path)
    settings = Settings(email=mail, ncbi_api_key=secret)
    with HttpClient(settings, transport=transport, rates=FAST) as http:
        http.get(EFETCH, params={"id": "1"}, source="pubmed", expect=(400,))
    [written] = list(tmp_path.rglob("*.json"))
    assert json.loads(written.read_text(encoding="utf-8"))["body"] == (
        '{"error": "invalid", "api-key": "[REDACTED]", "contact": "[REDACTED]"}'
    )


def test_a_recorded_body_larger_than_the_cap_is_not_recorded(tmp_path: Path) -> None:
    big = httpx.MockTransport(lambda request: httpx.Response(200, content=b"x" * 2048))
    recorder = RecordingTransport(big, tmp_path, max_bytes=1024)
    with (
        HttpClient(Settings(), transport=recorder, rates=FAST) as http,
        pytest.raises(TerminalHarvestError) as caught,
    ):
        http.get(EFETCH, source="pubmed")
    assert caught.value.message == (
        "GET eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi answered more than 1,024 bytes "
        "(decoded); the answer was not read further"
    )
    assert recorder.written == []


def test_a_recorded_redirect_chain_replays_hop_by_hop(tmp_path: Path) -> None:
    def moved(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/old"):
            return httpx.Response(301, headers={"location": "https://api.crossref.org/works"})
        return httpx.Response(200, headers={"content-type": "application/json"}, text="{}")

    recorder = RecordingTransport(httpx.MockTransport(moved), tmp_path)
    with HttpClient(Settings(), transport=recorder, rates=FAST) as http:
        live = http.get("https://api.crossref.org/old", source="crossref")
    assert len(recorder.written) == 2
    with HttpClient(Settings(), transport=ReplayTransport([tmp_path])) as http:
        again = http.get("https://api.crossref.org/old", source="crossref")
    assert (again.status_code, again.content, str(again.request.url)) == (
        200,
        live.content,
        "https://api.crossref.org/works",
    )


def _transport(kind: str, inner: httpx.BaseTransport, folder: Path) -> httpx.BaseTransport:
    return ResumeTransport(inner, folder) if kind == "resume" else RecordingTransport(inner, folder)


@pytest.mark.parametrize("kind", ["record", "resume"])
def test_the_deadline_holds_while_a_recording_transport_reads_and_the_late_answer_is_not_kept(
    dribbling: str, tmp_path: Path, kind: str
) -> None:
    # the reproducer: the default build reads the network through the resume cache
    # (and a --record folder), which read the whole body before the client could check it
    transport = _transport(kind, httpx.HTTPTransport(retries=0), tmp_path)
    settings = Settings(timeout=5.0, deadline=0.5, max_attempts=1)
    started = time.monotonic()
    with (
        HttpClient(settings, transport=transport) as http,
        pytest.raises(TransientHarvestError) as caught,
    ):
        http.get(dribbling, source="europepmc")
    port = dribbling.split(":")[2].split("/")[0]
    assert caught.value.message == (
        f"GET 127.0.0.1:{port}/slow failed after 1 attempts: no answer within the deadline of 0.5 s"
    )
    assert time.monotonic() - started < 2.0  # not the 3 s the body takes, nor the 5 s timeout
    assert list(tmp_path.rglob("*.json")) == []  # neither recorded nor cached


def _gzip_of(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    return packer.compress(data) + packer.flush()


TOO_BIG = (
    "GET eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi answered more than 1,024 bytes "
    "(decoded); the answer was not read further"
)
FAILED_ANSWERS: dict[str, tuple[dict[str, str], bytes, str]] = {  # headers, raw body, error
    "cap": ({}, b"x" * 2048, TOO_BIG),  # the client's cap: 1,024 < the transport's default
    "bomb": ({"content-encoding": "gzip"}, _gzip_of(b"0" * 4096), TOO_BIG),
    "encoding": (
        {"content-encoding": "gzip"},
        b"\x1f\x8bnot gzip",
        "GET eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi answered a body that cannot be "
        "decoded (content-encoding gzip): Error -3 while decompressing data: unknown "
        "compression method",
    ),
}


@pytest.mark.parametrize("kind", ["record", "resume"])
@pytest.mark.parametrize("failure", list(FAILED_ANSWERS))
def test_an_answer_that_fails_the_clients_bounds_is_never_recorded_or_cached(
    tmp_path: Path, kind: str, failure: str
) -> None:
    headers, raw, message = FAILED_ANSWERS[failure]

    def network(request: httpx.Request) -> httpx.Response:  # streamed, not read yet
        return httpx.Response(200, headers=headers, stream=httpx.ByteStream(raw))

    transport = _transport(kind, httpx.MockTransport(network), tmp_path)
    settings = Settings(max_response_bytes=1024)
    with (
        HttpClient(settings, transport=transport, rates=FAST) as http,
        pytest.raises(TerminalHarvestError) as caught,
    ):
        http.get(EFETCH, source="pubmed")
    assert caught.value.message == message
    assert list(tmp_path.rglob("*.json")) == []


def test_a_recorded_batch_answers_a_batch_cut_differently_by_its_records(tmp_path: Path) -> None:
    """A first build's efetch of 5 PMIDs (recorded whole) answers a refresh build's request
    for 3 of them (asked with room for controls): each record placed from the recording."""
    import random

    from pipeline.bench.bench_snapshot import article_xml

    pmids = [str(p) for p in range(99100001, 99100006)]
    articles = "".join(article_xml(int(p), random.Random(int(p))) for p in pmids)
    body = f'<?xml version="1.0" ?>\n<PubmedArticleSet>{articles}</PubmedArticleSet>'
    form = f"db=pubmed&retmode=xml&id={'%2C'.join(pmids)}"
    put(tmp_path, "e.json", EFETCH, body, method="POST", request_body=form)
    with HttpClient(Settings(ncbi_api_key="k" * 36), transport=ReplayTransport([tmp_path])) as http:
        asked = {"db": "pubmed", "retmode": "xml", "id": ",".join(pmids[1:4])}
        answer = http.post(EFETCH, data=asked, source="pubmed")
        got = [r.record_id for r in pubmed.parse(answer.content).records]
        assert got == [f"pmid:{p}" for p in pmids[1:4]]
        with pytest.raises(ReplayMissError):  # an id the recording never asked for
            http.post(EFETCH, data={**asked, "id": "99100001,99100009"}, source="pubmed")
