"""``citeseal replay import``: recorded responses placed by what they answer, then replayed
by meaning through a real ``snapshot build --replay`` (synthetic demo exchanges and bodies)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import duckdb
import pytest
from lxml import etree  # pyright: ignore[reportAttributeAccessIssue]  (no stubs)

from pipeline.errors import ReplayMissError
from pipeline.http import HttpClient
from pipeline.replay import ReplayTransport
from pipeline.replay_import import plan_import, write_import
from pipeline.settings import Settings
from pipeline.snapshot.build import build_snapshot
from pipeline.sources import clinicaltrials, openfda, pubmed
from tests.cli import citeseal
from tests.conftest import REFERENCE, TEST_KEY_HEX, TEST_KEYRING, requires_reference
from tests.pipeline.snapshot.conftest import DEMO_REPLAY, copy_demo_spec

EFETCH = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi"
PMIDS = [f"9900000{n}" for n in range(1, 7)]
NCTS = ["NCT99000001", "NCT99000002", "NCT99000003"]
SET_ID = "5eed0001-0000-4000-8000-000000000001"


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return citeseal(*args, cwd=cwd, env={**os.environ, "CITESEAL_KEY": TEST_KEY_HEX})


def query(path: Path, sql: str) -> list[tuple[object, ...]]:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(sql).fetchall()


def demo_body(source: str, endpoint: str) -> str:
    path = sorted((DEMO_REPLAY / source).glob(f"{endpoint}-*.json"))[0]
    return json.loads(path.read_text(encoding="utf-8"))["body"]


def wrapper(folder: Path, name: str, url: str, body: str, status: int = 200) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"url": url, "status": status, "content_type": "text/plain", "body": body}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def imported(source: Path, into: Path) -> Path:
    write_import(plan_import(source, Settings()), into, read_from=source)
    return into


def raw_bodies(folder: Path) -> Path:
    """The demo's PubMed articles, PubTator3 documents, trials and label, one raw body per
    record (no wrapper, no URL), as someone else's downloads would be."""
    folder.mkdir(parents=True)
    root = etree.fromstring(demo_body("pubmed", "efetch").encode())
    for n, article in enumerate(root):
        text = etree.tostring(article, encoding="unicode")
        (folder / f"article-{n}.xml").write_text(
            f"<?xml version='1.0'?>\n<PubmedArticleSet>{text}</PubmedArticleSet>\n",
            encoding="utf-8",
        )
    for n, doc in enumerate(json.loads(demo_body("pubtator3", "biocjson"))["PubTator3"]):
        (folder / f"bioc-{n}.json").write_text(json.dumps(doc), encoding="utf-8")
    for n, study in enumerate(json.loads(demo_body("clinicaltrials", "studies"))["studies"]):
        (folder / "trials" / f"study-{n}.json").parent.mkdir(exist_ok=True)
        (folder / "trials" / f"study-{n}.json").write_text(json.dumps(study), encoding="utf-8")
    (folder / "label.json").write_text(demo_body("openfda", "label"), encoding="utf-8")
    return folder


def ids_spec(folder: Path, pmids: list[str], *, annotations: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "byid.toml"
    spec.write_text(
        'name = "byid"\n'
        f"[pubmed]\nids = {json.dumps(pmids)}\nannotations = {str(annotations).lower()}\n"
        f"[clinicaltrials]\nids = {json.dumps(NCTS)}\n"
        f"[openfda]\nset_ids = {json.dumps([SET_ID])}\n",
        encoding="utf-8",
    )
    return spec


SAME = (
    "SELECT record_id, version, content_hash FROM record_versions ORDER BY ALL",
    "SELECT record_id, version, path, text FROM passages ORDER BY ALL",
    "SELECT * FROM annotations ORDER BY ALL",
)


def test_imported_demo_exchanges_build_the_same_snapshot_as_the_recorded_ones(
    tmp_path: Path, demo_pair: tuple[Path, Path]
) -> None:
    folder = imported(DEMO_REPLAY, tmp_path / "imported")
    assert not list(folder.rglob("pubmed/efetch-*.json"))  # by-id answers became parts
    path = build_snapshot(
        copy_demo_spec(tmp_path / "spec"),
        keyring=TEST_KEYRING,
        replay=[folder],
        settings=Settings(),
        resume=False,
    ).path
    for sql in SAME:
        assert query(path, sql) == query(demo_pair[0], sql)


def test_raw_bodies_answer_batch_requests_merged_from_several_files(
    tmp_path: Path, demo_pair: tuple[Path, Path]
) -> None:
    folder = imported(raw_bodies(tmp_path / "raw"), tmp_path / "imported")
    built = build_snapshot(
        ids_spec(tmp_path / "spec", PMIDS),
        keyring=TEST_KEYRING,
        replay=[folder],
        settings=Settings(),
        resume=False,
    )
    assert built.manifest.failed_requests == []
    ours = "SELECT record_id, path, text FROM passages ORDER BY ALL"
    held = query(built.path, ours)
    assert {str(r[0]) for r in held} == {
        *(f"pmid:{p}" for p in PMIDS),
        *(f"nct:{n}" for n in NCTS),
        f"setid:{SET_ID}",
    }
    demo = [r for r in query(demo_pair[0], ours) if r in held or str(r[0]).startswith("pmid:")]
    assert held == [r for r in demo if str(r[0]).split(":")[0] in ("pmid", "nct", "setid")]
    annotations = "SELECT * FROM annotations ORDER BY ALL"
    assert query(built.path, annotations) == query(demo_pair[0], annotations)


def test_an_id_not_held_fails_its_request_and_names_the_id(tmp_path: Path) -> None:
    folder = imported(raw_bodies(tmp_path / "raw"), tmp_path / "imported")
    with (
        HttpClient(Settings(), transport=ReplayTransport([folder])) as http,
        pytest.raises(ReplayMissError) as caught,
    ):
        pubmed.fetch_records(http, ["99000001", "99000999", "99000002"])
    assert caught.value.message == (
        "imported holds no recorded pubmed answer for 1 of the 3 PMID(s) asked by GET "
        f"{EFETCH}?db=pubmed&id=99000001%2C99000002%2C99000999&retmode=xml: "
        "99000999"
    )


def test_an_id_not_held_is_a_listed_failure_of_the_build(tmp_path: Path) -> None:
    folder = imported(raw_bodies(tmp_path / "raw"), tmp_path / "imported")
    built = build_snapshot(
        ids_spec(tmp_path / "spec", ["99000001", "99000999"], annotations=False),
        keyring=TEST_KEYRING,
        replay=[folder],
        settings=Settings(),
        resume=False,
        allow_partial=True,
    )
    [failure] = built.manifest.failed_requests
    assert (failure.source, failure.step) == ("pubmed", "efetch")
    assert failure.error.endswith(
        "for 1 of the 2 PMID(s) asked by GET "
        + (f"{EFETCH}?db=pubmed&id=99000001%2C99000999&retmode=xml: 99000999")
    )
    assert (
        query(built.path, "SELECT record_id FROM record_versions WHERE record_id LIKE 'pmid:%'")
        == []
    )


def test_an_id_recorded_absent_is_left_out_of_the_answer(tmp_path: Path) -> None:
    source = tmp_path / "recorded"
    body = demo_body("pubmed", "efetch")
    root = etree.fromstring(body.encode())
    first = etree.tostring(root[0], encoding="unicode")
    wrapper(
        source,
        "efetch.json",
        f"{EFETCH}?db=pubmed&id=99000001,99000777&retmode=xml",
        f"<PubmedArticleSet>{first}</PubmedArticleSet>",
    )
    folder = imported(source, tmp_path / "imported")
    with HttpClient(Settings(), transport=ReplayTransport([folder])) as http:
        records = pubmed.fetch_records(http, ["99000777", "99000001"])
    assert [r.record_id for r in records] == ["pmid:99000001"]


def test_a_study_recorded_with_fewer_fields_does_not_answer_a_full_request(
    tmp_path: Path,
) -> None:
    study = json.loads(demo_body("clinicaltrials", "studies"))["studies"][0]
    narrow = {
        "protocolSection": {
            "identificationModule": study["protocolSection"]["identificationModule"]
        }
    }
    source = tmp_path / "recorded"
    wrapper(
        source,
        "narrow.json",
        "https://clinicaltrials.gov/api/v2/studies?filter.ids=NCT99000001"
        "&fields=protocolSection.identificationModule&format=json",
        json.dumps({"studies": [narrow]}),
    )
    folder = imported(source, tmp_path / "imported")
    with (
        HttpClient(Settings(), transport=ReplayTransport([folder])) as http,
        pytest.raises(
            ReplayMissError,
            match="no recorded clinicaltrials answer with the fields asked for 1 of the 1 NCT id",
        ),
    ):
        clinicaltrials.fetch_records(http, ["NCT99000001"])
    (tmp_path / "whole").mkdir()
    (tmp_path / "whole" / "study.json").write_text(json.dumps(study), encoding="utf-8")
    both = imported(tmp_path / "whole", tmp_path / "imported-whole")
    with HttpClient(Settings(), transport=ReplayTransport([folder, both])) as http:
        [record] = clinicaltrials.fetch_records(http, ["NCT99000001"])
    assert record.passages == clinicaltrials.parse(json.dumps(study)).records[0].passages


def test_every_file_not_placed_is_listed_with_its_reason(tmp_path: Path) -> None:
    source = tmp_path / "mixed"
    source.mkdir()
    (source / "notes.txt").write_text("my downloads\n", encoding="utf-8")
    (source / "esearch.json").write_text(demo_body("pubmed", "esearch"), encoding="utf-8")
    (source / "notices.json").write_text(demo_body("crossref", "works"), encoding="utf-8")
    (source / "cut.xml").write_text("<PubmedArticleSet><PubmedArticle>", encoding="utf-8")
    (source / "label.json").write_text(demo_body("openfda", "label"), encoding="utf-8")
    wrapper(source, "busy.json", f"{EFETCH}?db=pubmed&id=99000001&retmode=xml", "busy", 503)
    wrapper(source, "other.json", "https://example.org/api?id=1", "{}")
    done = cli("replay", "import", str(source), "--into", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "read 7 file(s) from mixed; placed 1 (openfda 1) into out",
        "  openfda: 1 set id(s) held for by-id requests",
        "not placed: busy.json: a failed answer (HTTP 503), not a record",
        "not placed: cut.xml: its body does not parse: expected a response body (XML) but "
        "the XML is not well-formed: Premature end of data in tag PubmedArticle line 1",
        "not placed: esearch.json: a raw pubmed body without its request URL: what it "
        "answers is unknown",
        "not placed: notes.txt: its body does not parse: neither JSON nor XML (a response "
        "body starts with {, [ or <)",
        "not placed: notices.json: a raw Crossref body: only a wrapper whose request names "
        "the DOI (an updates: filter) says which record its notices update",
        "not placed: other.json: recorded from example.org, which is no registered source's API",
    ]
    summary = json.loads((tmp_path / "out" / "citeseal-replay.json").read_text())
    assert [n["file"] for n in summary["not_placed"]] == [
        "busy.json",
        "cut.xml",
        "esearch.json",
        "notes.txt",
        "notices.json",
        "other.json",
    ]


def test_an_empty_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = cli("replay", "import", "empty", "--into", "out", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "error: empty holds no file to import\n"
    assert not (tmp_path / "out").exists()


def test_a_folder_with_nothing_to_place_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "a.txt").write_text("hello\n", encoding="utf-8")
    done = cli("replay", "import", "raw", "--into", "out", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == "error: none of the 1 file(s) in raw could be placed; nothing written\n"
    assert done.stdout.splitlines()[0] == "read 1 file(s) from raw; placed 0"
    assert not (tmp_path / "out").exists()
    assert not list(tmp_path.glob(".out.tmp-*"))


def test_strict_writes_nothing_when_a_file_is_not_placed(tmp_path: Path) -> None:
    source = raw_bodies(tmp_path / "raw")
    (source / "a.txt").write_text("hello\n", encoding="utf-8")
    done = cli("replay", "import", "raw", "--into", "out", "--strict", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "error: 1 of the 17 file(s) in raw could not be placed (--strict); nothing written\n"
    )
    assert not (tmp_path / "out").exists()


def test_an_existing_folder_that_is_not_empty_is_never_written_into(tmp_path: Path) -> None:
    raw_bodies(tmp_path / "raw")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "mine.txt").write_text("keep me", encoding="utf-8")
    done = cli("replay", "import", "raw", "--into", "out", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "error: out already exists and is not an empty folder\n"
        "hint: choose a new folder for --into\n"
    )
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["mine.txt"]
    inside = cli("replay", "import", "raw", "--into", "raw/replay", cwd=tmp_path)
    assert inside.stderr == (
        "error: raw/replay is inside the folder read; write the replay folder elsewhere\n"
    )


def test_keys_and_emails_echoed_by_a_body_never_reach_the_replay_folder(
    tmp_path: Path,
) -> None:
    theirs, ours = "THEIRKEY0123456789abcdef", "OURKEY0123456789abcdef"
    label = json.loads(demo_body("openfda", "label"))
    label["meta"]["disclaimer"] = f"asked with {theirs} by them@example.org and {ours}"
    source = tmp_path / "recorded"
    wrapper(
        source,
        "label.json",
        f"https://api.fda.gov/drug/label.json?search=set_id:%22{SET_ID}%22&limit=1"
        f"&api_key={theirs}&email=them%40example.org",
        json.dumps(label),
    )
    wrapper(
        source,
        "search.json",
        f"https://api.fda.gov/drug/label.json?search=zentravir&limit=1&api_key={theirs}",
        json.dumps(label),
    )
    settings = Settings(openfda_api_key=ours, email="me@example.org")
    write_import(plan_import(source, settings), tmp_path / "out", read_from=source)
    written = [p.read_text(encoding="utf-8") for p in (tmp_path / "out").rglob("*.json")]
    assert len(written) == 3  # the label's part, the search exchange, the summary
    for text in written:
        assert theirs not in text and ours not in text and "them@example.org" not in text
    assert any("[REDACTED]" in text for text in written)


def test_an_id_held_twice_differently_keeps_the_first_and_says_so(tmp_path: Path) -> None:
    source = tmp_path / "recorded"
    source.mkdir()
    label = demo_body("openfda", "label")
    (source / "a.json").write_text(label, encoding="utf-8")
    (source / "b.json").write_text(label.replace("Zentravir", "Zentravix", 1), encoding="utf-8")
    (source / "c.json").write_text(label, encoding="utf-8")
    plan = plan_import(source, Settings())
    assert plan.notes == [
        (
            "b.json",
            f"its set id {SET_ID} differs from the part placed from a.json; the first is kept",
        )
    ]
    folder = imported(source, tmp_path / "out")
    with HttpClient(Settings(), transport=ReplayTransport([folder])) as http:
        [record] = openfda.fetch_records(http, [SET_ID])
    assert record == openfda.parse(label).records[0]


@requires_reference
def test_reference_responses_are_placed_and_answer_batches_across_files(
    tmp_path: Path,
) -> None:
    plan = plan_import(REFERENCE, Settings())
    recorded = {p.parent.name for p in REFERENCE.glob("*/*.json")}
    for source in recorded:
        assert plan.placed_files[source] == len(list((REFERENCE / source).glob("*.json")))
    assert {name for name, _ in plan.not_placed} <= {"INDEX.tsv", "README.md"}
    folder = tmp_path / "out"
    write_import(plan, folder, read_from=REFERENCE)
    held = [p.name.removesuffix(".json") for p in (folder / "units" / "pubmed-efetch").iterdir()]
    with HttpClient(Settings(), transport=ReplayTransport([folder])) as http:
        records = pubmed.fetch_records(http, held)  # one request, answered from many files
    assert sorted(r.pmid or "" for r in records) == sorted(held)
