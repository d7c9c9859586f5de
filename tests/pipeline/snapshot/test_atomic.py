"""Atomic builds: a killed or interrupted build leaves no visible snapshot and the parent
untouched; the rerun resumes from the responses already fetched."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import httpx
import pytest

from pipeline import harvest
from pipeline.bench.bench_snapshot import generate_pubmed_replay
from pipeline.errors import PartialHarvestError, SnapshotError
from pipeline.settings import Settings
from pipeline.snapshot.build import build_snapshot, clean_leftovers, corpus_lock
from pipeline.snapshot.locate import snapshots_in
from pipeline.snapshot.manifest import manifest_path
from pipeline.snapshot.resume import (
    MAX_AGE_SECONDS,
    RESUME_DIR,
    ResumeTransport,
    drop_if_stale,
    resume_folder,
)
from pipeline.snapshot.spec import load_spec
from pipeline.snapshot.verify import verify_snapshot
from pipeline.sources import pubmed
from tests.conftest import ROOT, TEST_KEYRING, TRUST
from tests.pipeline.snapshot.conftest import DEMO_REPLAY, copy_demo_spec

RECORDS = 1_500  # three efetch batches of 500

BUILD = """
import sys
from pathlib import Path
from pipeline.settings import Settings
from pipeline.snapshot.build import build_snapshot
from tests.conftest import TEST_KEYRING
build_snapshot(
    Path(sys.argv[1]), keyring=TEST_KEYRING, replay=[Path(sys.argv[2])], settings=Settings()
)
"""

CONTENT = (  # what a snapshot holds, with its own and its parent's ids replaced by names
    "SELECT record_id, version, seq, content_hash, first_seen, last_seen, origin "
    "FROM record_versions ORDER BY ALL",
    "SELECT * FROM record_state ORDER BY ALL",
    "SELECT * FROM records ORDER BY ALL",
    "SELECT * FROM relations ORDER BY ALL",
    "SELECT * FROM annotations ORDER BY ALL",
    "SELECT * FROM sources ORDER BY ALL",
    # the large tables as a count and an order-independent sum of row hashes
    "SELECT count(*), sum(hash(record_id, version, path, seq, section, text, folded)) "
    "FROM passages",
    "SELECT count(*), sum(hash(d.record_id, d.version, d.path, v.term, t.tf)) "
    "FROM search_terms t JOIN search_docs d USING (docid) JOIN search_vocab v USING (term_id)",
)


def content(path: Path, parent: Path) -> list[list[tuple[object, ...]]]:
    names = {path.stem: "SELF", parent.stem: "PARENT"}
    con = duckdb.connect(str(path), read_only=True)
    try:
        return [
            [tuple(names.get(v, v) if isinstance(v, str) else v for v in row) for row in rows]
            for rows in (con.execute(sql).fetchall() for sql in CONTENT)
        ]
    finally:
        con.close()


def hashes(path: Path) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(
            "SELECT record_id, content_hash FROM record_versions ORDER BY record_id"
        ).fetchall()
    finally:
        con.close()


def visible(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))


def revised(replay: Path, target: Path) -> Path:
    """A copy of a generated replay in which every other efetch batch says something new."""
    shutil.copytree(replay, target)
    for path in sorted(target.rglob("efetch-*.json"))[::2]:
        text = path.read_text(encoding="utf-8")
        path.write_text(
            text.replace("(synthetic bench record)", "(synthetic bench record, revised)"),
            encoding="utf-8",
        )
    return target


@pytest.mark.timeout(240)
def test_a_killed_build_leaves_the_parent_intact_and_the_rerun_equals_an_uninterrupted_one(
    tmp_path: Path,
) -> None:
    spec = generate_pubmed_replay(tmp_path, RECORDS, name="big")
    corpus = tmp_path / "big"
    parent = build_snapshot(spec, keyring=TEST_KEYRING, settings=Settings(), resume=False)
    before = visible(corpus)
    assert before == [parent.path.name, manifest_path(parent.path).name]
    update = revised(tmp_path / "big-replay", tmp_path / "update")  # upstream moved on
    twin = tmp_path / "twin"
    shutil.copytree(corpus, twin / "big")
    twin_spec = Path(shutil.copy(spec, twin / "big.toml"))

    child = subprocess.Popen(
        [sys.executable, "-c", BUILD, str(spec), str(update)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 180
    cached: list[Path] = []
    while time.monotonic() < deadline and child.poll() is None:
        cached = list((corpus / RESUME_DIR).rglob("efetch-*.json"))
        if len(cached) >= 1:
            break
        time.sleep(0.01)
    assert child.poll() is None, "the build finished before it could be killed"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert len(cached) >= 1

    assert visible(corpus) == before  # no partial snapshot, no stray manifest
    assert any(p.name.startswith(".build-2") for p in corpus.iterdir())  # hidden leftovers
    verify_snapshot(parent.path, TRUST)  # the parent is untouched
    assert hashes(parent.path) == hashes(twin / "big" / parent.path.name)

    rerun = build_snapshot(  # no --parent: latest
        spec, keyring=TEST_KEYRING, replay=[update], settings=Settings()
    )
    assert rerun.resumed_requests >= 2  # the esearch page and the cached efetch batch(es)
    assert rerun.manifest.parent is not None
    assert rerun.manifest.parent.snapshot_id == parent.manifest.snapshot_id
    uninterrupted = build_snapshot(
        twin_spec, keyring=TEST_KEYRING, replay=[update], settings=Settings(), resume=False
    )
    assert content(rerun.path, parent.path) == content(uninterrupted.path, parent.path)
    new_versions = sum(s.new_versions for s in rerun.manifest.sources.values())
    assert new_versions == sum(s.new_versions for s in uninterrupted.manifest.sources.values())
    assert 0 < new_versions < RECORDS  # the revised batches, and only those
    assert (rerun.manifest.records, rerun.manifest.partial) == (RECORDS, False)
    assert visible(corpus) == sorted([*before, rerun.path.name, manifest_path(rerun.path).name])
    assert not any(p.name.startswith(".build-2") for p in corpus.iterdir())
    assert not (corpus / RESUME_DIR).exists()  # cleared after the successful build
    verify_snapshot(rerun.path, TRUST)


def test_ctrl_c_removes_the_temp_file_and_keeps_the_fetched_responses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(harvest, "CHUNK", 400)  # two chunks: 400 + 300
    spec = generate_pubmed_replay(tmp_path, 700, name="cc")
    corpus = tmp_path / "cc"
    real = pubmed.fetch_records
    calls: list[int] = []

    def interrupted(client: object, pmids: list[str]) -> object:
        calls.append(len(pmids))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(client, pmids)  # type: ignore[arg-type]

    monkeypatch.setattr(pubmed, "fetch_records", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_snapshot(spec, keyring=TEST_KEYRING, settings=Settings())
    assert visible(corpus) == []
    assert sorted(p.name for p in corpus.iterdir()) == [".build-lock", RESUME_DIR]
    monkeypatch.setattr(pubmed, "fetch_records", real)
    done = build_snapshot(spec, keyring=TEST_KEYRING, settings=Settings())
    assert done.resumed_requests >= 2  # the esearch page and the first efetch batch
    assert done.manifest.records == 700


def test_leftovers_of_killed_builds_are_removed(tmp_path: Path) -> None:
    for name in (".build-20250101T000000Z.duckdb", ".build-20250101T000000Z.duckdb.wal"):
        (tmp_path / name).write_bytes(b"partial")
    (tmp_path / ".build-20250101T000000Z.tmp").mkdir()
    (tmp_path / "c-20250101T000000Z.manifest.json").write_text("{}")  # its file never landed
    (tmp_path / "c-20240101T000000Z.duckdb").write_bytes(b"kept")
    (tmp_path / "c-20240101T000000Z.manifest.json").write_text("{}")
    clean_leftovers(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "c-20240101T000000Z.duckdb",
        "c-20240101T000000Z.manifest.json",
    ]


def test_one_build_per_corpus_at_a_time(tmp_path: Path) -> None:
    spec = tmp_path / "lock.toml"
    spec.write_text('name = "lock"\n[clinicaltrials]\nids = ["NCT99000001"]\n')
    (tmp_path / "lock").mkdir()
    with corpus_lock(tmp_path / "lock"), pytest.raises(SnapshotError) as caught:
        build_snapshot(spec, keyring=TEST_KEYRING, settings=Settings())
    lock = tmp_path / "lock" / ".build-lock"
    assert str(caught.value) == f"another build of {tmp_path / 'lock'} is running (lock {lock})"
    assert snapshots_in(tmp_path / "lock") == []


def test_a_resume_cache_older_than_a_day_is_dropped_not_served(tmp_path: Path) -> None:
    folder = tmp_path / RESUME_DIR / "abc"
    folder.mkdir(parents=True)
    (folder / "x.json").write_text("{}")
    now = folder.stat().st_mtime
    assert drop_if_stale(folder, now=now + MAX_AGE_SECONDS - 60) is False
    assert folder.is_dir()
    assert drop_if_stale(folder, now=now + MAX_AGE_SECONDS + 60) is True
    assert not (tmp_path / RESUME_DIR).exists()


NOTICE_0002 = "crossref/works-f3c631259611.json"  # Crossref's notices of 10.5555/demo.0002


def rejected_notices(tmp_path: Path) -> Path:
    """The demo replay in which Crossref answers the notices of 10.5555/demo.0002 with an
    error body its parser rejects."""
    folder = Path(shutil.copytree(DEMO_REPLAY, tmp_path / "replay"))
    path = folder / NOTICE_0002
    wrapper = json.loads(path.read_text(encoding="utf-8"))
    wrapper["body"] = '{"status": "failed", "message": "Internal trouble"}'
    path.write_text(json.dumps(wrapper), encoding="utf-8")
    return folder


def test_a_rejected_answer_is_never_served_again_from_the_resume_cache(tmp_path: Path) -> None:
    spec = copy_demo_spec(tmp_path / "spec")
    replay = rejected_notices(tmp_path)
    with pytest.raises(PartialHarvestError):  # exit 3: nothing sealed, the cache kept
        build_snapshot(spec, keyring=TEST_KEYRING, replay=[replay], settings=Settings())
    corpus = spec.parent / "demo"
    cache = resume_folder(corpus, load_spec(spec).spec_hash(), [replay])
    assert visible(corpus) == []
    # Crossref's notices are two batched requests: the six PubMed DOIs' (rejected: one of
    # its DOIs' answer is an error, dropped at once) and the preprint's (answered, kept)
    [kept] = (cache / "crossref").glob("*.json")
    assert "demo.preprint.0001" in json.loads(kept.read_text(encoding="utf-8"))["url"]

    shutil.copy(DEMO_REPLAY / NOTICE_0002, replay / NOTICE_0002)  # upstream recovers
    done = build_snapshot(spec, keyring=TEST_KEYRING, replay=[replay], settings=Settings())
    assert done.manifest.failed_requests == []
    assert done.manifest.partial is False
    others = [p for p in DEMO_REPLAY.rglob("*.json") if p.parent.name != "crossref"]
    assert done.resumed_requests == len(others) + 1  # every answer but the rejected batch
    assert not (corpus / RESUME_DIR).exists()  # sealed: the cache is cleared


def test_a_partial_build_clears_the_resume_cache_once_it_is_sealed(tmp_path: Path) -> None:
    spec = copy_demo_spec(tmp_path / "spec")
    replay = rejected_notices(tmp_path)
    done = build_snapshot(
        spec, keyring=TEST_KEYRING, replay=[replay], settings=Settings(), allow_partial=True
    )
    assert done.manifest.partial is True
    assert [(f.source, f.error) for f in done.manifest.failed_requests] == [
        (
            "crossref",
            f"the recorded exchange replay/{NOTICE_0002} cannot answer the Crossref notices of "
            "10.5555/demo.0002: its body does not parse: Crossref answered with an error: "
            "Internal trouble",
        )
    ]
    assert not (spec.parent / "demo" / RESUME_DIR).exists()


def test_a_dropped_answer_is_deleted_and_asked_upstream_the_next_time(tmp_path: Path) -> None:
    url = "https://api.example.org/works?id=1"
    asked: list[str] = []

    def upstream(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        return httpx.Response(200, text=f"answer {len(asked)}")

    folder = tmp_path / "cache"
    first = ResumeTransport(httpx.MockTransport(upstream), folder)
    assert first.handle_request(httpx.Request("GET", url)).read() == b"answer 1"
    first.settle()  # the harvest took it: cached for the rerun
    rerun = ResumeTransport(httpx.MockTransport(upstream), folder)
    assert rerun.handle_request(httpx.Request("GET", url)).read() == b"answer 1"  # served
    rerun.drop_unsettled()  # the step it served failed
    assert list(folder.rglob("*.json")) == []
    assert rerun.handle_request(httpx.Request("GET", url)).read() == b"answer 2"  # asked again
    assert (rerun.served, asked) == (1, [url, url])
