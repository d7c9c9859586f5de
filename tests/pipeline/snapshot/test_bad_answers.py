"""Bad upstream answers in a real build: each is one listed failed request or a counted
refusal, and the build goes on (harvest.py's failure path, build.py's manifest)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

from pipeline.settings import Settings
from pipeline.snapshot.build import build_snapshot
from tests.conftest import TEST_KEYRING
from tests.pipeline.snapshot.conftest import DEMO_REPLAY, copy_demo_spec

CLI = (sys.executable, "-c", "from pipeline.cli import main; main()")
SET_ID = "5eed0001-0000-4000-8000-000000000001"
VERSION_RULE = (
    "version must start with a letter or digit and contain only letters, digits, '.' and '-' "
    "(at most 40 characters)"
)


def _rewrite(path: Path, change: object) -> None:
    """Replace the body of a wrapper file (``change``: the new body, or a function of it)."""
    wrapper = json.loads(path.read_text(encoding="utf-8"))
    wrapper["body"] = change(wrapper["body"]) if callable(change) else change
    path.write_text(json.dumps(wrapper), encoding="utf-8")


# Crossref's notices of the six PubMed DOIs are one batched request: one bad per-DOI answer
# recorded for it fails the whole batch (a listed failure naming every DOI asked)
BATCH_STEP = "updates " + ", ".join(f"10.5555/demo.000{i}" for i in range(1, 7))
NOTICES_0004 = "crossref/works-7bacd07c7cf5.json"  # the recorded notices of 10.5555/demo.0004


def _unplaceable(folder: str) -> str:
    return (
        f"the recorded exchange {folder}/{NOTICES_0004} cannot answer the Crossref notices of "
        "10.5555/demo.0004: its body does not parse: "
    )


def _bad_replay(folder: Path) -> Path:
    """The demo's recorded answers with four bad ones: a Crossref message that is a list,
    PubTator3 JSON nested 100,000 deep, a label version ``4 rev``, a Europe PMC result whose
    pmid is ``Health Literacy``."""
    replay = Path(shutil.copytree(DEMO_REPLAY, folder))
    crossref = replay / NOTICES_0004
    _rewrite(crossref, '{"status": "ok", "message-type": "work-list", "message": []}')
    [pubtator] = (replay / "pubtator3").glob("*.json")
    _rewrite(pubtator, '{"PubTator3": ' + "[" * 100_000 + "]" * 100_000 + "}")
    [label] = (replay / "openfda").glob("*.json")
    _rewrite(label, lambda body: body.replace('"version": "3"', '"version": "4 rev"'))
    [search] = (replay / "europepmc").glob("search-*.json")

    def add_bad_result(body: str) -> str:
        data = json.loads(body)
        data["resultList"]["result"].append(
            {"id": "1", "source": "MED", "pmid": "Health Literacy", "title": "Not citable"}
        )
        return json.dumps(data)

    _rewrite(search, add_bad_result)
    return replay


def test_bad_answers_are_listed_failures_or_counted_refusals_and_the_build_goes_on(
    tmp_path: Path,
) -> None:
    spec = copy_demo_spec(tmp_path / "corpus")
    parent = build_snapshot(
        spec, keyring=TEST_KEYRING, replay=[DEMO_REPLAY], settings=Settings(), resume=False
    )
    replay = _bad_replay(tmp_path / "bad-replay")
    child = build_snapshot(  # failed requests: sealed only as a partial snapshot
        spec,
        keyring=TEST_KEYRING,
        parent=parent.path,
        replay=[replay],
        settings=Settings(),
        resume=False,
        allow_partial=True,
    )
    m = child.manifest
    assert sorted((f.source, f.step, f.error) for f in m.failed_requests) == [
        (
            "crossref",
            BATCH_STEP,
            _unplaceable("bad-replay") + "crossref: message must be an object, got a list",
        ),
        (
            "pubtator3",
            "annotations",
            "expected PubTator3 BioC JSON but the JSON is nested deeper than 64 levels",
        ),
    ]
    assert m.sources["openfda"].refused == {VERSION_RULE: 1}
    assert m.sources["europepmc"].refused == {
        "pmid must be 1 to 10 digits without a leading zero": 1
    }
    assert m.withdrawn == 0  # a refused label is not a withdrawn label
    assert m.sources["pubmed"].status == "ok"  # its own requests were answered
    assert m.carried > 0  # the records whose annotations failed keep their parent state
    con = duckdb.connect(str(child.path), read_only=True)
    try:
        versions = con.execute(
            "SELECT version FROM record_versions WHERE record_id = ? ORDER BY version",
            [f"setid:{SET_ID}"],
        ).fetchall()
    finally:
        con.close()
    assert versions == [("3",)]  # the parent's version, carried forward unchanged


def test_snapshot_build_prints_each_bad_answer_as_one_warning_line_and_no_traceback(
    tmp_path: Path,
) -> None:
    spec = copy_demo_spec(tmp_path / "corpus")
    replay = _bad_replay(tmp_path / "bad-replay")
    build = [*CLI, "snapshot", "build", str(spec), "--replay", str(replay), "--no-resume"]
    refused = subprocess.run(build, capture_output=True, text=True, check=False)
    assert refused.returncode == 3 and "Traceback" not in refused.stderr
    assert refused.stderr.splitlines()[-2] == (
        f"error: 2 requests failed (pubtator3 1, crossref 1): no snapshot of {spec.parent / 'demo'}"
        " was sealed"
    )
    done = subprocess.run([*build, "--allow-partial"], capture_output=True, text=True, check=False)
    assert "Traceback" not in done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == [
        "warning: pubtator3: annotations: expected PubTator3 BioC JSON but the JSON is nested "
        "deeper than 64 levels",
        f"warning: crossref: {BATCH_STEP}: {_unplaceable('bad-replay')}crossref: message must "
        "be an object, got a list",
        "warning: europepmc: refused 1 record(s) that cannot be cited: pmid must be 1 to 10 "
        "digits without a leading zero",
        f"warning: openfda: refused 1 record(s) that cannot be cited: {VERSION_RULE}",
    ]
    assert "built " in done.stdout  # the build went on and sealed a partial snapshot


EMAIL = "alice@example.org"
API_KEY = "k3yS3cr3tValue0123"
ECHOED = (
    "Crossref answered with an error: [{'value': '[REDACTED]', 'message': 'mailto [REDACTED] is "
    "not allowed'}]",
    "openFDA answered with an error: API_KEY_INVALID: api_key [REDACTED] is not valid",
)


def _echoing_replay(folder: Path) -> Path:
    """The demo's recorded answers where Crossref (one DOI) echoes the contact e-mail and
    openFDA the API key, each inside an error answered with 200."""
    replay = Path(shutil.copytree(DEMO_REPLAY, folder))
    crossref = replay / NOTICES_0004
    echo = [{"value": EMAIL, "message": f"mailto {EMAIL} is not allowed"}]
    _rewrite(crossref, json.dumps({"status": "failed", "message": echo}))
    [label] = (replay / "openfda").glob("*.json")
    error = {"code": "API_KEY_INVALID", "message": f"api_key {API_KEY} is not valid"}
    _rewrite(label, json.dumps({"error": error}))
    return replay


def test_an_error_that_echoes_the_email_or_an_api_key_is_recorded_redacted(
    tmp_path: Path,
) -> None:
    spec = copy_demo_spec(tmp_path / "corpus")
    replay = _echoing_replay(tmp_path / "echo-replay")
    built = build_snapshot(
        spec,
        keyring=TEST_KEYRING,
        replay=[replay],
        settings=Settings(email=EMAIL, openfda_api_key=API_KEY),
        resume=False,
        allow_partial=True,
    )
    failed = [(f.source, f.step, f.error) for f in built.manifest.failed_requests]
    assert failed == [
        ("crossref", BATCH_STEP, _unplaceable("echo-replay") + ECHOED[0]),
        ("openfda", "fetch", ECHOED[1]),
    ]
    manifest = built.manifest_path.read_text(encoding="utf-8")
    con = duckdb.connect(str(built.path), read_only=True)
    try:
        logged = con.execute(
            "SELECT detail FROM harvest_log WHERE NOT ok AND step <> 'refused' ORDER BY source"
        ).fetchall()
        details = con.execute("SELECT coalesce(detail, '') FROM sources").fetchall()
    finally:
        con.close()
    assert logged == [(_unplaceable("echo-replay") + ECHOED[0],), (ECHOED[1],)]
    for text in [manifest, *(d for (d,) in details)]:
        assert EMAIL not in text and API_KEY not in text


def test_snapshot_build_prints_an_echoed_secret_redacted(tmp_path: Path) -> None:
    spec = copy_demo_spec(tmp_path / "corpus")
    replay = _echoing_replay(tmp_path / "echo-replay")
    env = {**os.environ, "CITESEAL_EMAIL": EMAIL, "OPENFDA_API_KEY": API_KEY}
    build = [*CLI, "snapshot", "build", str(spec), "--replay", str(replay), "--no-resume"]
    done = subprocess.run(
        [*build, "--allow-partial"], capture_output=True, text=True, check=False, env=env
    )
    assert "built " in done.stdout and "Traceback" not in done.stderr
    assert EMAIL not in done.stderr + done.stdout and API_KEY not in done.stderr + done.stdout
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == [
        f"warning: crossref: {BATCH_STEP}: {_unplaceable('echo-replay')}{ECHOED[0]}",
        f"warning: openfda: fetch: {ECHOED[1]}",
    ]
