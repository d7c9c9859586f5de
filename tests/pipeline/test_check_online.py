"""``citeseal check --online`` and ``--lookup`` through the CLI, on loopback stand-ins of the
registries in their formats (tests/pipeline/check_online_apis.py): the chain, the lookup
snapshot and its offline re-run, outages, storms and bad bodies, --mailto, URL inputs."""

from __future__ import annotations

import json
import logging
import shutil
import zlib
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from pipeline import http as http_module
from pipeline.snapshot.manifest import manifest_path, read_manifest
from tests.audit.references.works import write_works
from tests.conftest import TEST_KEY_HEX
from tests.pipeline.check_online_apis import Standin, standins
from tests.pipeline.test_check_cmd import run

DOC = (Path(__file__).parent / "check_online_refs.md").read_text(encoding="utf-8")
ONLINE_TIERS = [
    "hallucinated",  # NCT99000077 in running text: ClinicalTrials.gov answered without it
    "verified",
    "verified",
    "hallucinated",
    "verified",
    "verified",
    "hallucinated",
    "verified",  # the PMCID, found by Europe PMC: a retracted paper
]
EMAIL = "ops.check@example.org"


@pytest.fixture(scope="module")
def works(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_works(tmp_path_factory.mktemp("works") / "works.duckdb")


@pytest.fixture
def apis() -> Iterator[Standin]:
    with standins() as standin:
        yield standin


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, works: Path, apis: Standin) -> Path:
    """A working folder with the document, a private copy of the works snapshot, the test
    key, every source moved to its stand-in and one attempt per request."""
    folder = tmp_path / "work"
    (folder / "snapshots" / "works").mkdir(parents=True)
    for path in (works, manifest_path(works)):
        shutil.copyfile(path, folder / "snapshots" / "works" / path.name)
    (folder / "refs.md").write_text(DOC, encoding="utf-8")
    monkeypatch.chdir(folder)
    monkeypatch.setenv("CITESEAL_KEY", TEST_KEY_HEX)
    monkeypatch.setenv("CITESEAL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CITESEAL_MAX_ATTEMPTS", "1")
    for name, value in apis.env.items():
        monkeypatch.setenv(name, value)
    return folder


@pytest.fixture
def unpaced(monkeypatch: pytest.MonkeyPatch) -> None:
    """No pacing (the pacer has its own tests; one test here keeps the real rates)."""
    real = http_module.host_rates
    monkeypatch.setattr(http_module, "host_rates", lambda s, o=None: dict.fromkeys(real(s, o), 0.0))


SNAPSHOT = "snapshots/works/works.duckdb"


def check(monkeypatch, capsys, *args: str) -> tuple[int, dict, str]:
    code, out, err = run(
        monkeypatch, capsys, "check", "refs.md", "-s", SNAPSHOT, "-f", "json", *args
    )
    return code, json.loads(out), err


def tiers(report: dict) -> list[str]:
    return [r["tier"] for r in report["documents"][0]["references"]]


def lookup_file(report: dict) -> Path:
    return Path(report["lookup"]["path"])


def snapshot_texts(path: Path) -> list[str]:
    """Everything a snapshot holds, as text: every row of every table (raw bodies
    decompressed), and its manifest."""
    texts = [manifest_path(path).read_text(encoding="utf-8")]
    con = duckdb.connect(str(path), read_only=True)
    try:
        tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        for table in tables:
            for row in con.execute(f'SELECT * FROM "{table}"').fetchall():  # noqa: S608
                for value in row:
                    if isinstance(value, bytes) and table == "responses":
                        value = zlib.decompress(value).decode("utf-8", "replace")
                    texts.append(str(value))
    finally:
        con.close()
    assert any("openalex" in t for t in texts)  # the responses are there to be searched
    return texts


def test_online_resolves_through_the_chain_keeps_a_lookup_snapshot_that_re_runs_offline(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    here: Path,
    apis: Standin,
) -> None:
    caplog.set_level(logging.DEBUG)
    code, report, err = check(monkeypatch, capsys, "--online", "--mailto", EMAIL)
    assert code == 0
    assert tiers(report) == ONLINE_TIERS
    running, *refs = report["documents"][0]["references"]
    assert (running["kind"], running["identifiers"]) == ("running_text", ["nct:NCT99000077"])
    assert running["trace"][0]["detail"] == "no such record at clinicaltrials (asked online)"
    assert refs[6]["record"] == "pmid:99200003" and refs[6]["flags"]["retracted"] is True
    assert refs[0]["trace"][0]["resolver"] == "snapshot"  # the snapshot answered: not asked
    assert not any("99100002" in s for s in apis.seen)
    assert refs[1]["record"] in ("doi:10.5555/oa.0001", "openalex:W9900000001")
    assert refs[2]["reason"] == (
        "doi:10.5555/fake.9999 resolves to nothing at registries that answered; no work of "
        "its title exists either"
    )
    assert refs[2]["trace"][0]["detail"] == "no such record at crossref, openalex (asked online)"
    assert refs[3]["record"] == "arxiv:9912.90001"
    assert refs[3]["flags"] == {
        "retracted": None,
        "expression_of_concern": None,
        "preprint": True,
        "published_version": "doi:10.5555/published.0001",
    }
    assert refs[4]["record"] == "pmid:99200002"
    assert refs[5]["trace"][0]["detail"] == "no such record at pubmed (asked online)"
    # the lookup snapshot: its own lineage, sealed, named by the report and on stderr
    lookup = lookup_file(report)
    assert lookup.parent == Path("snapshots/works-lookup") and lookup.is_file()
    manifest = read_manifest(lookup)
    assert manifest.parent is None and manifest.seal is not None and not manifest.partial
    assert report["lookup"]["snapshot_id"] == manifest.snapshot_id
    assert report["online"] is True
    assert f"note: lookup snapshot {lookup} written; re-run offline with --lookup {lookup}" in err
    # --mailto reaches the polite parameters, and never the report, the log or the snapshot
    encoded = EMAIL.replace("@", "%40")
    assert any(s.startswith("crossref ") and f"mailto={encoded}" in s for s in apis.seen)
    assert any(s.startswith("openalex ") and f"mailto={encoded}" in s for s in apis.seen)
    assert any(s.startswith("pubmed ") and f"email={encoded}" in s for s in apis.seen)
    assert not any(s.startswith("arxiv ") and "mailto" in s for s in apis.seen)
    titled = [s for s in apis.seen if "query.bibliographic=" in s or "search=" in s]
    assert {s.split()[0] for s in titled} == {"crossref", "openalex"}  # and PubMed's [ti]
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("citeseal"))
    assert "127.0.0.11" in ours  # the client logged its requests (httpx's own logger is not
    # citeseal's: silent unless an application turns it on, and it shows the query as sent)
    for text in (json.dumps(report), err, ours, *snapshot_texts(lookup)):
        assert EMAIL not in text and encoded not in text
    # the offline re-run: nothing asked, the same report but for the run field `online`
    asked = len(apis.seen)
    code, offline, err = check(monkeypatch, capsys, "--lookup", str(lookup))
    assert (code, err) == (0, "")
    assert len(apis.seen) == asked
    assert offline.pop("online") is False and report.pop("online") is True
    assert offline == report


def test_a_server_error_storm_makes_its_keys_unresolved_never_hallucinated(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    here: Path,
    apis: Standin,
    unpaced: None,
) -> None:
    monkeypatch.setenv("CITESEAL_MAX_ATTEMPTS", "2")
    apis.override = lambda source, path, params: (
        (500, "text/plain", b"storm") if source == "crossref" and "filter" in params else None
    )
    code, report, _ = check(monkeypatch, capsys, "--online")
    assert code == 0
    got = tiers(report)[1:]  # the reference list
    assert got[1] == "verified"  # OpenAlex answered for it
    assert got[2] == "unresolved"  # Crossref never answered: not evidence
    step = report["documents"][0]["references"][3]["trace"][0]
    assert step["outcome"] == "unreachable" and step["detail"].startswith("crossref: works")
    assert step["detail"].endswith("failed after 2 attempts: HTTP 500 Internal Server Error")
    asked = [s for s in apis.seen if s.startswith("crossref ") and "filter=" in s]
    assert len(asked) == 2 and len(set(asked)) == 1  # retried once, then failed
    assert read_manifest(lookup_file(report)).partial


def test_a_429_storm_and_a_malformed_body_are_failures_of_their_source(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    here: Path,
    apis: Standin,
    unpaced: None,
) -> None:
    def override(source: str, path: str, params: dict[str, str]):
        if source == "openalex":
            return 200, "application/json", b'{"meta": {"count": 1}, "results": [{"id": 7'
        if source == "pubmed" and path.endswith("esearch.fcgi"):
            return 429, "text/plain", b"Too Many Requests"
        return None

    apis.override = override
    _, report, _ = check(monkeypatch, capsys, "--online")
    got = tiers(report)[1:]  # the reference list
    assert got[2] == "unresolved"  # OpenAlex's DOI answer did not parse
    assert got[5] == "unresolved"  # PMID absent, but the title searches failed
    assert got[4] == "verified"  # PubMed's efetch still answered
    failed = {f.source for f in read_manifest(lookup_file(report)).failed_requests}
    assert failed == {"openalex", "pubmed"}


def test_when_every_request_fails_nothing_is_written_and_every_lookup_is_unresolved(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    here: Path,
    apis: Standin,
    unpaced: None,
) -> None:
    apis.override = lambda source, path, params: (503, "text/plain", b"down")
    code, report, err = check(monkeypatch, capsys, "--online", "--fail-on-fabrication")
    assert code == 0  # nothing hallucinated: nothing is known
    assert tiers(report) == ["unresolved", "verified"] + ["unresolved"] * 6
    assert "lookup" not in report
    assert not Path("snapshots/works-lookup").exists() or not list(
        Path("snapshots/works-lookup").glob("*.duckdb")
    )
    assert err.startswith("note: nothing was fetched online (")
    assert err.rstrip().endswith("every reference looked up online is unresolved")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--mailto", EMAIL), "error: --mailto needs --online"),
        (
            ("--online", "--mailto", "not-an-address"),
            "error: --mailto: expected an e-mail address (name@host.domain)",
        ),
        (
            ("--online", "--lookup", "x.duckdb"),
            "error: --online and --lookup cannot be combined: --lookup re-runs an online check "
            "offline",
        ),
    ],
)
def test_online_usage_errors_are_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    here: Path,
    args: tuple[str, ...],
    message: str,
) -> None:
    code, out, err = run(monkeypatch, capsys, "check", "refs.md", "-s", SNAPSHOT, *args)
    assert (code, out, err.strip()) == (2, "", message)


def test_an_ordinary_snapshot_given_as_lookup_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], here: Path
) -> None:
    code, out, err = run(
        monkeypatch, capsys, "check", "refs.md", "-s", SNAPSHOT, "--lookup", SNAPSHOT
    )
    assert code != 0 and out == ""
    assert err.splitlines()[0] == (
        "error: works.duckdb is not a lookup snapshot (one written by citeseal check --online)"
    )


# -- URL inputs --------------------------------------------------------------------------------
HOSTILE = b"""<!doctype html><html><head><title>x</title>
<script>document.write('PMID: 99100001')</script><style>p{}</style></head><body>
<h2>References</h2><ol>
<li>Doe J, Roe R. Vitamin Y and sleep quality in older adults: a randomised trial.
Synth Rev Geriatr. 2021;3:4. PMID: 99100002 <img src=x onerror="alert(1)"></li>
</ol><!-- PMID: 99100003 --></body></html>"""


def test_a_url_input_is_fetched_typed_by_its_content_type_and_named_without_its_query(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    here: Path,
    apis: Standin,
) -> None:
    apis.documents["/doc/page"] = ("text/html; charset=utf-8", HOSTILE)
    apis.documents["/doc/refs.md"] = ("application/octet-stream", DOC.encode("utf-8"))
    base = f"http://127.0.0.19:{apis.ports['documents']}"
    code, out, err = run(
        monkeypatch,
        capsys,
        "check",
        f"{base}/doc/page?token=secret",
        f"{base}/doc/refs.md",
        "-s",
        SNAPSHOT,
        "-f",
        "json",
    )
    assert (code, err) == (0, "")
    report = json.loads(out)
    first, second = report["documents"]
    assert (first["file"], first["format"]) == (f"{base}/doc/page", "html")
    assert [r["identifiers"] for r in first["references"]] == [["pmid:99100002"]]  # no script
    assert first["references"][0]["tier"] == "verified"
    assert (second["file"], second["format"]) == (f"{base}/doc/refs.md", "markdown")
    assert "secret" not in out


def test_a_url_that_fails_or_is_too_large_is_one_error_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    here: Path,
    apis: Standin,
) -> None:
    from audit.references import inputs

    monkeypatch.setattr(inputs, "MAX_INPUT_BYTES", 64)
    apis.documents["/doc/big.txt"] = ("text/plain", b"PMID: 99100002 " * 10)
    apis.documents["/doc/blob"] = ("application/octet-stream", b"x")
    base = f"http://127.0.0.19:{apis.ports['documents']}"
    code, out, err = run(
        monkeypatch,
        capsys,
        "check",
        f"{base}/doc/missing.md",
        f"{base}/doc/big.txt",
        f"{base}/doc/blob",
        "-s",
        SNAPSHOT,
        "-f",
        "json",
    )
    assert code == 2
    assert err.splitlines() == [
        f"error: {base}/doc/missing.md: answered HTTP 404 Not Found",
        f"error: {base}/doc/big.txt: over the limit of 64 bytes",
        f"error: {base}/doc/blob: cannot tell the format of a application/octet-stream answer",
    ]
    assert json.loads(out)["documents"] == []
