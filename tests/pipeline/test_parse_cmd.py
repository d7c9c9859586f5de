"""``citeseal parse``: through the real CLI boundary, plus its helpers in-process."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from audit.errors import InputError
from pipeline.cli import main
from pipeline.cli.parse_cmd import detect, parse_file, to_text
from tests.conftest import ROOT, reference_files, requires_reference

FIXTURES = ROOT / "tests" / "fixtures"
DEMO = ROOT / "snapshots" / "demo" / "replay"
CLI = (sys.executable, "-c", "from pipeline.cli import main; main()")


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The real console entry point, in a subprocess (slow: used once)."""
    return subprocess.run(
        [*CLI, "parse", *args], capture_output=True, text=True, input=stdin, check=False
    )


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


def run_here(
    *args: str,
    stdin: str | None = None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Done:
    """``main()`` with its one error boundary, in-process (fast)."""
    monkeypatch.setattr(sys, "argv", ["citeseal", "parse", *args])
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    code = 0
    try:
        main()
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return Done(code, out, err)


def test_json_output_of_a_demo_efetch_wrapper() -> None:
    [efetch] = sorted((DEMO / "pubmed").glob("efetch-*.json"))
    done = run("auto", str(efetch), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["source"] == "pubmed"
    assert data["url"].startswith("https://eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi?")
    assert data["status"] == 200
    by_id = {r["record_id"]: r for r in data["records"]}
    retracted = by_id["pmid:99000002"]
    assert retracted["flags"] == {
        "retracted": True,
        "expression_of_concern": False,
        "preprint": False,
    }
    assert retracted["relations"][0]["kind"] == "retraction_in"
    assert retracted["relations"][0]["target"] == "pmid:99000003"
    first = by_id["pmid:99000001"]
    assert (first["doi"], first["year"], first["content_type"]) == (
        "10.5555/demo.0001",
        2024,
        "article",
    )
    assert first["passages"][3] == {
        "path": "abstract.3",
        "section": "RESULTS",
        "text": "During 48\u00a0210 person-years of follow-up, 312 children were diagnosed with "
        "Farrow syndrome. The adjusted hazard ratio comparing exposed with unexposed children "
        "was 0.97 (95% CI, 0.84\u20131.12).",
    }


def test_text_output_summarises_records(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(FIXTURES / "pubmed" / "expression-of-concern.xml")
    done = run_here("pubmed", path, monkeypatch=monkeypatch, capsys=capsys)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:7] == [
        "source: pubmed; 2 record(s)",
        "pmid:99100005  version -  (preprint)",
        "  title: An invented trial under concern.",
        "  year: 2023; journal: Demo Journal of Invented Medicine; status: MEDLINE",
        "  flags: retracted no, expression of concern yes, preprint yes",
        "  relation: expression_of_concern_in pmid:99100006",
        "  passages: 3 (title, abstract.1, abstract.2)",
    ]


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (
            ("pubmed", str(FIXTURES / "pubmed" / "bomb.xml")),
            None,
            "error: expected PubMed XML (efetch PubmedArticleSet or esearch) but the XML "
            "declares entities (refused: entity expansion and external entities are not allowed)",
        ),
        (
            ("europepmc", "-"),
            "<html><head><title>Bad Gateway</title></head><body>oops</body></html>",
            "error: expected Europe PMC fullTextXML (JATS) but got an HTML page ('Bad Gateway'); "
            "the service may have answered with an error page",
        ),
        (
            ("crossref", str(FIXTURES / "pubmed" / "esearch.xml")),
            None,
            "error: expected Crossref works JSON but got XML or markup, not JSON",
        ),
    ],
)
def test_bad_bodies_give_one_line_errors_and_exit_2(
    args: tuple[str, ...],
    stdin: str | None,
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = run_here(*args, stdin=stdin, monkeypatch=monkeypatch, capsys=capsys)
    assert done.returncode == 2
    assert done.stderr.strip() == message
    assert "Traceback" not in done.stderr


def test_openfda_no_match_wrapper_is_zero_records(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(FIXTURES / "openfda" / "no-match.json")
    done = run_here("auto", path, "--json", monkeypatch=monkeypatch, capsys=capsys)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["source"], data["records"], data["status"]) == ("openfda", [], 404)


def test_detection_from_url_and_body() -> None:
    assert detect(b"{}", "https://www.ncbi.nlm.nih.gov/research/pubtator3-api/x") == "pubtator3"
    assert detect(b"{}", "https://www.ebi.ac.uk/europepmc/webservices/rest/search") == "europepmc"
    assert detect(b"{}", "https://api.crossref.org/works") == "crossref"
    assert detect(b"<?xml version='1.0'?><eSearchResult/>", None) == "pubmed"
    assert detect(b'{"message-type":"work"}', None) == "crossref"
    assert detect(b'[{"passages": []}]', None) == "pubtator3"
    assert detect(b"plain text", None) is None


def test_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        parse_file("medline", str(tmp_path))
    assert caught.value.message == (
        "unknown source 'medline'; choose one of pubmed, europepmc, pubtator3, crossref, "
        "clinicaltrials, openfda, arxiv, openalex, local, auto"
    )
    with pytest.raises(InputError) as caught:
        parse_file("auto", str(tmp_path))
    assert caught.value.message == f"{tmp_path} is a directory, not a response file"
    with pytest.raises(InputError) as caught:
        parse_file("auto", str(tmp_path / "missing.json"))
    assert caught.value.message == f"{tmp_path / 'missing.json'} does not exist"
    unknown = tmp_path / "x.txt"
    unknown.write_text("hello", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        parse_file("auto", str(unknown))
    assert caught.value.message == f"cannot tell which source {unknown} comes from"


def test_text_output_neutralises_control_characters(tmp_path: Path) -> None:
    body = {
        "status": "ok",
        "message-type": "work",
        "message": {"DOI": "10.5555/x", "type": "journal-article", "title": ["Evil \x1b[31mred"]},
    }
    path = tmp_path / "w.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    source, result, _, _ = parse_file("auto", str(path))
    lines = to_text(result, source)
    assert "  title: Evil \\u001b[31mred" in lines
    assert not any("\x1b" in line for line in lines)


SOURCES = ("pubmed", "europepmc", "pubtator3", "crossref", "clinicaltrials", "openfda")


@requires_reference
@pytest.mark.parametrize(
    "path",
    [p for s in SOURCES for p in reference_files(s)],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_auto_detects_every_reference_file_by_url_and_by_body_alone(path: Path) -> None:
    source, _, url, status = parse_file("auto", str(path))
    assert source == path.parent.name
    assert url and status in (200, 404)
    body = json.loads(path.read_text(encoding="utf-8"))["body"]
    assert detect(body, None) == path.parent.name  # real openFDA bodies put meta first


def _reversed_keys(value: object) -> object:
    if isinstance(value, dict):
        return {k: _reversed_keys(v) for k, v in reversed(list(value.items()))}
    if isinstance(value, list):
        return [_reversed_keys(v) for v in value]
    return value


JSON_BODIES = sorted(
    path
    for folder in (FIXTURES, DEMO)
    for source in SOURCES
    for path in (folder / source).glob("*.json")
    if path.name != "rate-limit.json"  # NCBI's rate-limit JSON names no source
)


@pytest.mark.parametrize("path", JSON_BODIES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_auto_detects_every_json_body_whatever_the_order_of_its_keys(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    body = data["body"] if isinstance(data, dict) and "url" in data else path.read_text("utf-8")
    assert detect(body, None) == path.parent.name
    if not body.lstrip().startswith("<"):  # a wrapped XML body has no keys to reorder
        assert detect(json.dumps(_reversed_keys(json.loads(body))), None) == path.parent.name


def test_auto_detects_an_openfda_label_whose_meta_block_comes_first() -> None:
    label = {
        "boxed_warning": ["WARNING: invented bleeding risk. " * 200],
        "set_id": "5eed0001-0000-4000-8000-000000000001",
        "id": "5eed0001-0000-4000-8000-0000000000a1",
        "version": "3",
        "effective_time": "20250101",
        "openfda": {"brand_name": ["ZENTRAVIR"]},
    }
    meta = {
        "disclaimer": "Synthetic demo data written for citeseal; not from openFDA.",
        "terms": "https://open.fda.gov/terms/",
        "license": "https://open.fda.gov/license/",
        "last_updated": "2025-01-02",
        "results": {"skip": 0, "limit": 1, "total": 1},
    }
    body = json.dumps({"meta": meta, "results": [label]}, indent=2)
    assert body.index('"openfda"') > 4096  # beyond any fixed-size look at the head
    assert detect(body, None) == "openfda"
    assert detect(b'{"error": {"message": "No matches found!", "code": "NOT_FOUND"}}', None) == (
        "openfda"
    )
    assert detect(b'{"meta": {}}', None) is None
    assert detect(b'{"results": []}', None) is None


def test_a_crossref_answer_with_message_as_a_list_is_a_one_line_error_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    body = '{"status": "ok", "message-type": "work-list", "message": []}'
    done = run_here("crossref", "-", stdin=body, monkeypatch=monkeypatch, capsys=capsys)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "error: crossref: message must be an object, got a list\n"


def test_json_nested_100000_deep_is_a_one_line_error_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    body = '{"resultList": ' + "[" * 100_000 + "]" * 100_000 + "}"
    done = run_here("europepmc", "-", stdin=body, monkeypatch=monkeypatch, capsys=capsys)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: expected Europe PMC search JSON but the JSON is nested deeper than 64 levels\n"
    )


def test_refused_records_are_listed_with_their_reason_and_count(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    results = [
        {"id": "1", "source": "MED", "pmid": "Health Literacy", "title": "T"},
        {"id": "2", "source": "MED", "pmid": "0", "title": "T"},
    ]
    body = json.dumps({"hitCount": 2, "resultList": {"result": results}})
    done = run_here("europepmc", "-", stdin=body, monkeypatch=monkeypatch, capsys=capsys)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "source: europepmc; 0 record(s)",
        "count: 2",
        "refused 2 record(s) that cannot be cited: pmid must be 1 to 10 digits without a "
        "leading zero ('Health Literacy', '0')",
    ]
    done = run_here("europepmc", "-", "--json", stdin=body, monkeypatch=monkeypatch, capsys=capsys)
    assert json.loads(done.stdout)["refused"] == [
        {
            "reason": "pmid must be 1 to 10 digits without a leading zero",
            "value": "Health Literacy",
            "record_id": None,
        },
        {
            "reason": "pmid must be 1 to 10 digits without a leading zero",
            "value": "0",
            "record_id": None,
        },
    ]
