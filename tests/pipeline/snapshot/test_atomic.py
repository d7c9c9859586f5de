"""Atomic builds: a killed or interrupted build leaves no visible snapshot and the parent
untouched; the rerun resumes from the responses already fetched."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from pipeline import harvest
from pipeline.bench.bench_snapshot import generate_pubmed_replay
from pipeline.errors import SnapshotError
from pipeline.settings import Settings
from pipeline.snapshot.build import build_snapshot, clean_leftovers, corpus_lock
from pipeline.snapshot.locate import snapshots_in
from pipeline.snapshot.manifest import manifest_path
from pipeline.snapshot.resume import MAX_AGE_SECONDS, RESUME_DIR, drop_if_stale
from pipeline.snapshot.verify import verify_snapshot
from pipeline.sources import pubmed
from tests.conftest import ROOT, TEST_KEYRING, TRUST

RECORDS = 1_500  # three efetch batches of 500

BUILD = """
import sys
from pathlib import Path
from pipeline.settings import Settings
from pipeline.snapshot.build import build_snapshot
from tests.conftest import TEST_KEYRING
build_snapshot(Path(sys.argv[1]), keyring=TEST_KEYRING, parent="latest", settings=Settings())
"""


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


@pytest.mark.timeout(240)
def test_a_killed_build_leaves_the_parent_intact_and_the_rerun_resumes(tmp_path: Path) -> None:
    spec = generate_pubmed_replay(tmp_path, RECORDS, name="big")
    corpus = tmp_path / "big"
    parent = build_snapshot(spec, keyring=TEST_KEYRING, settings=Settings(), resume=False)
    before = visible(corpus)
    assert before == [parent.path.name, manifest_path(parent.path).name]

    child = subprocess.Popen(
        [sys.executable, "-c", BUILD, str(spec)],
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

    rerun = build_snapshot(spec, keyring=TEST_KEYRING, parent="latest", settings=Settings())
    assert rerun.resumed_requests >= 2  # the esearch page and the cached efetch batch(es)
    assert rerun.manifest.records == RECORDS
    assert sum(s.new_versions for s in rerun.manifest.sources.values()) == 0
    assert hashes(rerun.path) == hashes(parent.path)
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
