"""The demo corpus built twice from replay: both versions kept, diff, verify, tampering."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from audit.keys import DEMO_KEY, Keyring
from pipeline.errors import TamperedSnapshotError
from pipeline.settings import Settings
from pipeline.snapshot import build
from pipeline.snapshot.build import build_snapshot
from pipeline.snapshot.diff import diff_snapshots
from pipeline.snapshot.locate import snapshots_in
from pipeline.snapshot.manifest import (
    manifest_path,
    read_manifest,
    sealed_with,
    sha256_file,
    write_manifest,
)
from pipeline.snapshot.rebuild import rebuild_snapshot
from pipeline.snapshot.schema import MIGRATIONS, SCHEMA_VERSION
from pipeline.snapshot.store import RECORD_ID_INDEXED, TABLES
from pipeline.snapshot.verify import verify_snapshot
from tests.cli import citeseal
from tests.conftest import TEST_KEY_HEX, TEST_KEYRING, TRUST
from tests.pipeline.snapshot.conftest import DEMO_REPLAY, copy_demo_spec, index_terms_as_text

TRIAL = "nct:NCT99000001"
LABEL = "setid:5eed0001-0000-4000-8000-000000000001"


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI, holding the key that sealed the snapshots these tests build."""
    return citeseal(*args, cwd=cwd, env={**os.environ, "CITESEAL_KEY": TEST_KEY_HEX})


def query(path: Path, sql: str, params: list[object] | None = None) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def test_the_second_snapshot_holds_both_versions_of_the_trial_and_the_label(
    demo_pair: tuple[Path, Path],
) -> None:
    first, second = demo_pair
    got = query(
        second,
        "SELECT record_id, version, seq, origin FROM record_versions "
        "WHERE record_id IN (?, ?) ORDER BY record_id, seq",
        [TRIAL, LABEL],
    )
    assert got == [
        (TRIAL, "2025-01-15", 1, "carried"),
        (TRIAL, "2025-06-02", 2, "harvest"),
        (LABEL, "3", 1, "carried"),
        (LABEL, "4", 2, "harvest"),
    ]
    summaries = query(
        second,
        "SELECT version, text FROM passages WHERE record_id = ? "
        "AND path = 'trial.brief_summary.1' ORDER BY version",
        [TRIAL],
    )
    assert len(summaries) == 2
    assert summaries[0][1] != summaries[1][1]
    state = query(
        second,
        "SELECT record_id, current_version FROM record_state WHERE record_id IN (?, ?) ORDER BY 1",
        [TRIAL, LABEL],
    )
    assert state == [(TRIAL, "2025-06-02"), (LABEL, "4")]
    assert query(first, "SELECT count(*) FROM record_versions WHERE record_id = ?", [TRIAL]) == [
        (1,)
    ]


def test_the_demo_snapshot_holds_every_source_and_the_planted_signals(
    demo_pair: tuple[Path, Path],
) -> None:
    first, _ = demo_pair
    m = read_manifest(first)
    assert {s: v.status for s, v in m.sources.items()} == {
        **dict.fromkeys(
            ("pubmed", "europepmc", "pubtator3", "crossref", "clinicaltrials", "openfda"), "ok"
        ),
        "arxiv": "not_harvested",  # the sources of check --online: no corpus table names them
        "openalex": "not_harvested",
        "local": "not_harvested",  # the demo spec has no [local] folder
    }
    assert m.failed_requests == []
    assert m.schema_version == SCHEMA_VERSION
    assert m.segmentation_version == "1"
    assert m.mode == "replay"
    ids = [r[0] for r in query(first, "SELECT record_id FROM record_state ORDER BY 1")]
    for expected in ("pmid:99000002", "ppr:PPR990001", "pmcid:PMC99000001", TRIAL, LABEL):
        assert expected in ids
    flags = query(
        first,
        "SELECT record_id, retracted, expression_of_concern, preprint FROM records "
        "WHERE record_id IN ('pmid:99000002', 'pmid:99000004', 'ppr:PPR990001') ORDER BY 1",
    )
    assert flags == [
        ("pmid:99000002", True, False, False),
        ("pmid:99000004", False, True, False),
        ("ppr:PPR990001", False, False, True),
    ]
    assert query(first, "SELECT count(*) > 0 FROM annotations") == [(True,)]
    assert query(first, "SELECT count(*) > 0 FROM responses") == [(True,)]
    assert query(first, "SELECT id, name FROM schema_migrations ORDER BY id") == [
        (m.id, m.name) for m in MIGRATIONS
    ]


def test_a_build_and_its_child_index_record_id_in_every_table_the_audit_reads_by_it(
    demo_pair: tuple[Path, Path],
) -> None:
    """The audit's look-ups are index scans only where the build wrote the indexes
    (``pipeline.snapshot.store.index_record_ids``; ``record_state``'s key indexes it)."""
    for path in demo_pair:
        rows = query(path, "SELECT table_name, expressions FROM duckdb_indexes() ORDER BY 1")
        assert rows == sorted((t, "[record_id]") for t in RECORD_ID_INDEXED)


def test_reopening_the_database_after_every_batch_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_pair: tuple[Path, Path]
) -> None:
    monkeypatch.setattr(build, "REOPEN_EVERY", 1)
    spec = copy_demo_spec(tmp_path)
    path = build_snapshot(
        spec, keyring=TEST_KEYRING, replay=[DEMO_REPLAY], settings=Settings(), resume=False
    ).path
    same = (
        "SELECT record_id, version, content_hash FROM record_versions ORDER BY ALL",
        "SELECT record_id, version, path, text, folded FROM passages ORDER BY ALL",
        "SELECT d.record_id, d.version, d.path, v.term, t.tf FROM search_terms t "
        "JOIN search_docs d USING (docid) JOIN search_vocab v USING (term_id) ORDER BY ALL",
    )
    for sql in same:
        assert query(path, sql) == query(demo_pair[0], sql)
    tables = query(path, "SELECT table_name FROM duckdb_tables() ORDER BY 1")
    assert [t[0] for t in tables] == sorted(TABLES)  # the build's scratch table is gone


def test_snapshots_hold_no_api_keys_no_handles_and_no_signing_key(tmp_path: Path) -> None:
    secrets = ("NCBIKEY0123456789abcdef", "FDAKEY0123456789abcdef", "someone@example.org")
    settings = Settings(ncbi_api_key=secrets[0], openfda_api_key=secrets[1], email=secrets[2])
    spec = copy_demo_spec(tmp_path)
    path = build_snapshot(
        spec, keyring=TEST_KEYRING, replay=[DEMO_REPLAY], settings=settings, resume=False
    ).path
    texts = query(
        path,
        "SELECT url || coalesce(request_body, '') FROM responses "
        "UNION ALL SELECT coalesce(url, '') || coalesce(detail, '') FROM harvest_log "
        "UNION ALL SELECT coalesce(value, '') FROM meta",
    )
    assert texts
    for (text,) in texts:
        assert isinstance(text, str)
        assert not any(secret in text for secret in secrets)
    columns = {r[0] for r in query(path, "SELECT column_name FROM information_schema.columns")}
    assert not columns & {"handle", "check", "check_code", "hmac", "signing_key"}
    raw = path.read_bytes()
    assert DEMO_KEY not in raw
    assert not any(secret.encode() in raw for secret in secrets)


def test_diff_lists_the_changed_trial_and_label(demo_pair: tuple[Path, Path]) -> None:
    first, second = demo_pair
    diff = diff_snapshots(first, second)
    assert [(c.record_id, c.old_version, c.new_version) for c in diff.changed] == [
        (TRIAL, "2025-01-15", "2025-06-02"),
        (LABEL, "3", "4"),
    ]
    assert diff.new_records == [] and diff.withdrawn == [] and diff.new_flags == []
    done = cli("snapshot", "diff", str(first), str(second), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [c["record_id"] for c in data["changed"]] == [TRIAL, LABEL]
    text = cli("snapshot", "diff", str(first), str(second)).stdout.splitlines()
    assert text[1:4] == [
        "  changed (2)",
        f"    {TRIAL} @2025-01-15 → @2025-06-02  "
        "Zentravir for Children With Farrow Syndrome (ZEN-FARROW-1)",
        f"    {LABEL} @3 → @4  ZENTRAVIR",
    ]


def test_diff_against_an_empty_lineage_lists_new_records_and_flags(
    demo_pair: tuple[Path, Path],
) -> None:
    first, second = demo_pair
    reverse = diff_snapshots(second, first)  # comparing the other way: nothing is new
    assert reverse.new_records == []
    fresh = diff_snapshots(second, second)
    assert fresh.empty


def test_verify_passes_then_fails_after_one_byte_changes(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    _, second = demo_pair
    report = verify_snapshot(second, TRUST)
    assert report.parent == "ok"
    size = second.stat().st_size
    assert [c.name for c in report.checks] == [
        "manifest",
        "file",
        "digest",
        "seal",
        "schema",
        "snapshot id",
        "counts",
        "unique keys",
        "search index",
    ]
    assert (
        report.checks[2].detail
        == f"sha256 {sha256_file(second)} ({size:,} bytes) as in the manifest"
    )
    assert report.checks[3].detail == f"sealed with key {TEST_KEYRING.fingerprint}"
    done = cli("snapshot", "verify", str(second))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"ok {second}\n")

    copy = tmp_path / second.name
    shutil.copy(second, copy)
    shutil.copy(manifest_path(second), manifest_path(copy))
    verify_snapshot(copy, TRUST)
    data = bytearray(copy.read_bytes())
    data[len(data) // 3] ^= 0x01
    copy.write_bytes(bytes(data))
    with pytest.raises(TamperedSnapshotError):
        verify_snapshot(copy, TRUST)
    done = cli("snapshot", "verify", str(copy))
    assert done.returncode == 1
    manifest = read_manifest(copy)
    assert f"  FAILED  digest        the file's sha256 is {sha256_file(copy)}" in done.stdout
    assert f"  ok      seal          sealed with key {TEST_KEYRING.fingerprint}\n" in done.stdout
    assert done.stderr.splitlines() == [
        f"error: snapshot {copy} failed its digest check: the file's sha256 is "
        f"{sha256_file(copy)}, its manifest says {manifest.sha256}",
        "hint: the file was changed after it was built; restore a copy or rebuild it",
    ]


def test_verify_without_a_manifest_is_a_one_line_error(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    first, _ = demo_pair
    copy = Path(shutil.copy(first, tmp_path / first.name))
    done = cli("snapshot", "verify", str(copy))
    assert done.returncode == 1
    assert done.stderr == (
        f"error: snapshot {copy} failed its manifest check: its manifest "
        f"{manifest_path(copy).name} is missing\n"
        "hint: restore the manifest from where the snapshot came from, or rebuild it\n"
    )


def test_info_and_list_describe_the_corpus(demo_pair: tuple[Path, Path]) -> None:
    first, second = demo_pair
    done = cli("snapshot", "info", str(second.parent), "--json")
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["path"] == str(second)
    assert info["meta"]["parent_snapshot_id"] == first.stem
    assert info["lineage"]["clinicaltrials"] == {
        "records": 3,
        "withdrawn": 0,
        "versions": 4,
        "passages": info["lineage"]["clinicaltrials"]["passages"],
    }
    assert (info["partial"], info["partial_detail"]) == (False, None)
    text = cli("snapshot", "info", str(second.parent)).stdout.splitlines()
    assert text[6] == "  harvest   complete"
    listing = cli("snapshot", "list", str(second.parent.parent), "--json")
    rows = json.loads(listing.stdout)
    assert [r["path"] for r in rows] == [str(first), str(second)]
    assert rows[1]["parent"] == first.stem
    assert [r["partial"] for r in rows] == [False, False]


def test_rebuild_reparses_stored_responses_into_a_child(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    _, second = demo_pair
    folder = tmp_path / "demo"
    folder.mkdir()
    copy = Path(shutil.copy(second, folder / second.name))
    shutil.copy(manifest_path(second), manifest_path(copy))
    shutil.copy(
        second.parent / read_manifest(second).parent.path,  # type: ignore[union-attr]
        folder,
    )
    result = rebuild_snapshot(copy, keyring=TEST_KEYRING)
    m = result.manifest
    assert m.mode == "rebuild"
    assert m.rebuilt_from is not None and m.rebuilt_from.sha256 == read_manifest(copy).sha256
    assert m.parent is not None and m.parent.snapshot_id == copy.stem
    assert sum(s.new_versions for s in m.sources.values()) == 0  # same parsers, same content
    assert (m.records, m.versions) == (read_manifest(copy).records, read_manifest(copy).versions)
    assert m.failed_requests == []
    verify_snapshot(result.path, TRUST)


def _as_schema_3(path: Path, folder: Path) -> Path:
    """A copy of snapshot ``path`` in ``folder``, in the layout of schema 3 (index terms held
    as text), with its manifest sealed again (as a snapshot of that schema would be)."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / path.name
    shutil.copyfile(path, target)
    con = duckdb.connect(str(target))
    try:
        index_terms_as_text(con)
        con.execute("DELETE FROM schema_migrations WHERE id = 4")
        con.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    finally:
        con.close()
    manifest = read_manifest(path)
    old = manifest.model_copy(
        update={
            "sha256": sha256_file(target),
            "size": target.stat().st_size,
            "schema_version": 3,
        }
    )
    write_manifest(target, sealed_with(old, TEST_KEYRING))
    return target


def test_a_parent_of_schema_3_is_carried_with_its_index_terms_numbered(
    tmp_path: Path, demo_pair: tuple[Path, Path]
) -> None:
    from pipeline.snapshot.search import open_snapshot, search_passages
    from tests.pipeline.snapshot.conftest import DEMO_UPDATE

    old = _as_schema_3(demo_pair[0], tmp_path / "old")
    spec = copy_demo_spec(tmp_path / "spec")
    child = build_snapshot(
        spec,
        keyring=TEST_KEYRING,
        parent=old,
        replay=[DEMO_UPDATE, DEMO_REPLAY],
        settings=Settings(),
        resume=False,
    ).path
    index = (
        "SELECT d.record_id, d.version, d.path, v.term, t.tf FROM search_terms t "
        "JOIN search_docs d USING (docid) JOIN search_vocab v USING (term_id) ORDER BY ALL"
    )
    assert query(child, index) == query(demo_pair[1], index)
    assert query(child, "SELECT count(*), count(DISTINCT term) FROM search_vocab") == query(
        demo_pair[1], "SELECT count(*), count(*) FROM search_vocab"
    )
    keyring = Keyring.demo_keyring()
    rankings = []
    for path in (old, demo_pair[0]):  # the old layout is still searched, with equal results
        con = open_snapshot(path)
        try:
            hits = search_passages(con, "zentravir flares in children", keyring, limit=5)
        finally:
            con.close()
        rankings.append([(h.record_id, h.path, h.score) for h in hits])
    assert rankings[0] == rankings[1]
    assert rankings[0]


# -- failed requests: exit 3, or a snapshot marked partial ---------------------------------------

NOTICE_0002 = "crossref/works-f3c631259611.json"  # the Crossref notices of 10.5555/demo.0002


def without_notices(tmp_path: Path) -> Path:
    """The demo replay with the Crossref notices of the retracted paper missing (an outage)."""
    folder = Path(shutil.copytree(DEMO_REPLAY, tmp_path / "replay-outage"))
    (folder / NOTICE_0002).unlink()
    return folder


def test_the_cli_exits_3_and_seals_nothing_when_a_request_failed(tmp_path: Path) -> None:
    spec = copy_demo_spec(tmp_path)
    first = build_snapshot(
        spec, keyring=TEST_KEYRING, replay=[DEMO_REPLAY], settings=Settings(), resume=False
    )
    outage = without_notices(tmp_path)
    done = cli("snapshot", "build", str(spec), "--replay", str(outage))
    assert done.returncode == 3, done.stderr
    dois = [f"10.5555/demo.000{i}" for i in range(1, 7)]  # one batched request
    url = "https://api.crossref.org/works?filter=" + "%2C".join(
        f"updates%3A{d.replace('/', '%2F')}" for d in dois
    )
    lines = done.stderr.splitlines()
    assert (
        f"crossref: updates {', '.join(dois)} failed: {outage.name} holds no recorded crossref "
        f"answer for 1 of the 6 DOI(s) asked by GET {url}&rows=100&cursor=%2A: 10.5555/demo.0002"
    ) in lines  # outside the working folder: its name, never a local path
    assert lines[-2:] == [
        f"error: 1 request failed (crossref 1): no snapshot of {tmp_path / 'demo'} was sealed",
        "hint: build again to retry only those (the answers already fetched are reused), or "
        "pass --allow-partial to seal a snapshot marked partial in which the records they "
        "concern keep their parent state",
    ]
    assert [s.path for s in snapshots_in(tmp_path / "demo")] == [first.path]


def test_allow_partial_seals_a_snapshot_that_says_it_is_partial(tmp_path: Path) -> None:
    spec = copy_demo_spec(tmp_path)
    first = build_snapshot(
        spec, keyring=TEST_KEYRING, replay=[DEMO_REPLAY], settings=Settings(), resume=False
    )
    outage = without_notices(tmp_path)
    done = cli("snapshot", "build", str(spec), "--replay", str(outage), "--allow-partial")
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    newest = snapshots_in(tmp_path / "demo")[-1].path
    assert out[0] == f"built {newest}  (PARTIAL)"
    assert out[1] == f"  parent    {first.path.name}"  # continued without --parent
    assert out[3] == (  # the six PubMed records and the full text with their DOIs
        "  partial   1 failed request (crossref partial); 7 records kept their parent state"
    )
    m = read_manifest(newest)
    assert (m.partial, m.carried, len(m.failed_requests)) == (True, 7, 1)
    # the paper keeps version 1 with its retraction; nothing is withdrawn
    assert query(
        newest,
        "SELECT s.record_id, s.current_version, r.retracted, v.origin FROM record_state s "
        "JOIN records r ON r.record_id = s.record_id AND r.version = s.current_version "
        "JOIN record_versions v ON v.record_id = s.record_id AND v.version = s.current_version "
        "WHERE s.record_id = 'pmid:99000002'",
    ) == [("pmid:99000002", "1", True, "carried")]
    assert m.withdrawn == 0
    info = cli("snapshot", "info", str(newest))
    assert (
        "  harvest   PARTIAL: 1 failed request (crossref partial); 7 records kept their parent "
        "state"
    ) in info.stdout.splitlines()
    data = json.loads(cli("snapshot", "info", str(newest), "--json").stdout)
    assert data["partial"] is True and data["manifest"]["partial"] is True
    listing = cli("snapshot", "list", str(tmp_path / "demo")).stdout.splitlines()
    assert listing[0].endswith(" MB")  # complete, no parent
    assert listing[1].endswith(f"parent {first.path.stem}  PARTIAL (1 failed request)")
    rows = json.loads(cli("snapshot", "list", str(tmp_path / "demo"), "--json").stdout)
    assert [(r["partial"], r["failed_requests"]) for r in rows] == [(False, 0), (True, 1)]


def test_parent_and_new_lineage_together_are_a_one_line_error(tmp_path: Path) -> None:
    spec = copy_demo_spec(tmp_path)
    done = cli("snapshot", "build", str(spec), "--parent", "latest", "--new-lineage")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: --parent and --new-lineage cannot be combined: a new lineage has no parent",
        "hint: drop --new-lineage to continue a lineage, or --parent to start one",
    ]
    assert not (tmp_path / "demo").exists()


def test_the_writer_takes_its_memory_limit_from_the_settings_not_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Settings.build_memory is the one source: the writer process no longer re-reads the
    # variable (this value would have stopped it), the value the build was given is used
    monkeypatch.setenv("CITESEAL_BUILD_MEMORY", "lots")
    spec = copy_demo_spec(tmp_path)
    built = build_snapshot(
        spec,
        keyring=TEST_KEYRING,
        replay=[DEMO_REPLAY],
        settings=Settings(build_memory="96MB"),
        resume=False,
    )
    assert built.manifest.partial is False
