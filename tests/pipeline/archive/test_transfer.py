"""Push, pull and prune against a folder archive: checked on the way out and on the way in."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from audit.errors import InputError
from pipeline.archive import ArchivedSnapshot, SnapshotFiles
from pipeline.archive.folder import FolderArchive
from pipeline.archive.transfer import choose, cited_snapshots, plan_prune, pull, push
from pipeline.errors import ArchiveError, TamperedSnapshotError
from pipeline.snapshot.manifest import manifest_path, read_manifest, sha256_file
from pipeline.snapshot.trust import trust_snapshot
from tests.cli import citeseal
from tests.conftest import ROOT, TEST_KEY_HEX, TRUST


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return citeseal(*args, env={**os.environ, "CITESEAL_KEY": TEST_KEY_HEX}, cwd=ROOT)


def entries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.fixture
def archive(tmp_path: Path, demo_pair: tuple[Path, Path]) -> FolderArchive:
    """A folder archive holding both demo snapshots."""
    archive = FolderArchive(tmp_path / "archive")
    for snapshot in demo_pair:
        push(snapshot, archive, TRUST)
    return archive


def test_a_pushed_snapshot_is_pulled_into_a_fresh_folder_checked(
    archive: FolderArchive, demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    first, second = demo_pair
    assert entries(archive.root / "demo") == sorted(
        p.name for s in demo_pair for p in SnapshotFiles(s.with_name(s.name)).all()
    )
    checksum = (archive.root / "demo" / f"{second.stem}.sha256").read_text(encoding="ascii")
    assert checksum == f"{sha256_file(second)}  {second.name}\n"  # sha256sum -c checks it
    [latest] = choose(archive, "demo", "latest")
    assert latest.snapshot_id == second.stem
    done = pull(latest, archive, tmp_path / "runner" / "demo", TRUST)
    assert (done.status, done.path.name) == ("pulled", second.name)
    assert trust_snapshot(done.path, TRUST).sha256 == sha256_file(second)
    assert entries(tmp_path / "runner" / "demo") == [
        f"{second.stem}.duckdb",
        f"{second.stem}.manifest.json",
        f"{second.stem}.sha256",
    ]
    again = pull(latest, archive, tmp_path / "runner" / "demo", TRUST)
    assert again.status == "already here"
    assert [i.snapshot_id for i in choose(archive, "demo", "all")] == [first.stem, second.stem]


def test_pushing_a_snapshot_twice_stores_it_once(
    archive: FolderArchive, demo_pair: tuple[Path, Path]
) -> None:
    before = {p: p.stat().st_mtime_ns for p in (archive.root / "demo").iterdir()}
    assert push(demo_pair[1], archive, TRUST).status == "already archived"
    assert {p: p.stat().st_mtime_ns for p in (archive.root / "demo").iterdir()} == before


def test_another_snapshot_under_an_archived_id_is_refused(
    archive: FolderArchive, demo_pair: tuple[Path, Path]
) -> None:
    held = archive.root / "demo" / f"{demo_pair[1].stem}.sha256"
    held.write_text(f"{'0' * 64}  {demo_pair[1].name}\n", encoding="ascii")
    with pytest.raises(ArchiveError) as caught:
        push(demo_pair[1], archive, TRUST)
    assert caught.value.message == (
        f"{archive.label} already holds another {demo_pair[1].stem} (archived snapshots never "
        "change)"
    )


def test_a_snapshot_that_fails_its_checks_is_never_pushed(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    folder = tmp_path / "local" / "demo"
    folder.mkdir(parents=True)
    copy = Path(shutil.copy(demo_pair[1], folder))
    shutil.copy(manifest_path(demo_pair[1]), manifest_path(copy))
    flip_a_byte(copy)
    archive = FolderArchive(tmp_path / "archive")
    with pytest.raises(TamperedSnapshotError) as caught:
        push(copy, archive, TRUST)
    assert caught.value.message.startswith(f"snapshot {copy} failed its digest check: ")
    assert entries(archive.root) == []


def test_a_corrupted_download_is_refused_and_leaves_nothing(
    archive: FolderArchive, tmp_path: Path
) -> None:
    [latest] = choose(archive, "demo", "latest")
    flip_a_byte(archive.root / "demo" / f"{latest.snapshot_id}.duckdb")
    runner = tmp_path / "runner" / "demo"
    with pytest.raises(TamperedSnapshotError) as caught:
        pull(latest, archive, runner, TRUST)
    assert caught.value.message.startswith(
        f"{latest.snapshot_id} from {archive.label} failed its digest check: the file's sha256 is "
    )
    assert caught.value.advice is not None and caught.value.advice.startswith(
        "the download was discarded"
    )
    assert entries(runner) == []  # no snapshot, no manifest, no hidden download folder


def test_a_download_whose_manifest_was_rewritten_to_match_fails_its_seal(
    archive: FolderArchive, tmp_path: Path
) -> None:
    [latest] = choose(archive, "demo", "latest")
    stored = archive.root / "demo" / f"{latest.snapshot_id}.duckdb"
    flip_a_byte(stored)
    document = json.loads(manifest_path(stored).read_text(encoding="utf-8"))
    document["sha256"] = sha256_file(stored)  # the attacker restamps manifest and checksum
    manifest_path(stored).write_text(json.dumps(document), encoding="utf-8")
    stored.with_suffix(".sha256").write_text(f"{document['sha256']}  {stored.name}\n", "ascii")
    runner = tmp_path / "runner" / "demo"
    with pytest.raises(TamperedSnapshotError) as caught:
        pull(latest, archive, runner, TRUST)
    assert caught.value.message.startswith(
        f"{latest.snapshot_id} from {archive.label} failed its seal check: its manifest was "
        "changed after it was sealed"
    )
    assert entries(runner) == []


def test_a_checksum_file_that_disagrees_with_the_manifest_is_refused(
    archive: FolderArchive, tmp_path: Path
) -> None:
    [latest] = choose(archive, "demo", "latest")
    checksum = archive.root / "demo" / f"{latest.snapshot_id}.sha256"
    checksum.write_text(f"{'1' * 64}  {latest.snapshot_id}.duckdb\n", encoding="ascii")
    with pytest.raises(TamperedSnapshotError) as caught:
        pull(latest, archive, tmp_path / "runner" / "demo", TRUST)
    recorded = read_manifest(checksum.with_suffix(".duckdb")).sha256
    assert caught.value.message == (
        f"{latest.snapshot_id} from {archive.label} failed its checksum check: its checksum "
        f"file says {'1' * 64}, its manifest says {recorded}"
    )


def test_an_archive_without_the_lineage_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError) as caught:
        choose(FolderArchive(tmp_path / "empty"), "demo", "latest")
    assert caught.value.message == f"{tmp_path / 'empty'} holds no snapshot of corpus 'demo'"
    assert caught.value.exit_code == 3


def test_the_cli_pushes_pulls_and_refuses_a_missing_lineage(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    archive, runner = tmp_path / "archive", tmp_path / "runner"
    pushed = cli("snapshot", "push", str(demo_pair[1]), "--to", str(archive))
    assert (pushed.returncode, pushed.stdout) == (
        0,
        f"pushed: {demo_pair[1].stem} → {archive / 'demo' / demo_pair[1].name}\n",
    )
    pulled = cli("snapshot", "pull", "demo", "--from", str(archive), "--into", str(runner))
    assert (pulled.returncode, pulled.stdout) == (
        0,
        f"pulled: {demo_pair[1].stem} → {runner / 'demo' / demo_pair[1].name}\n",
    )
    missing = cli("snapshot", "pull", "trials", "--from", str(archive), "--into", str(runner))
    assert (missing.returncode, missing.stdout) == (3, "")
    assert (
        missing.stderr.splitlines()[0] == f"error: {archive} holds no snapshot of corpus 'trials'"
    )
    both = cli("snapshot", "pull", "demo", "--from", str(archive), "--all", "--latest")
    assert (both.returncode, both.stderr) == (
        2,
        "error: give at most one of --latest, --all and --id\n",
    )


# -- pruning --------------------------------------------------------------------------------------


def item(stamp: str) -> ArchivedSnapshot:
    return ArchivedSnapshot("demo", f"demo-{stamp}", 1, stamp)


def test_pruning_keeps_the_newest_and_every_snapshot_a_report_cites() -> None:
    items = [item(f"2025010{n}T000000Z") for n in range(1, 7)]
    plan = plan_prune(items, 2, {"demo-20250102T000000Z": "reports/answer.json"})
    assert [i.snapshot_id for i in plan.keep] == [
        "demo-20250102T000000Z",
        "demo-20250105T000000Z",
        "demo-20250106T000000Z",
    ]
    assert [i.snapshot_id for i in plan.drop] == [
        "demo-20250101T000000Z",
        "demo-20250103T000000Z",
        "demo-20250104T000000Z",
    ]
    assert plan.reasons["demo-20250102T000000Z"] == (
        "report reports/answer.json was audited against it"
    )


def test_cited_snapshots_come_from_the_reports_in_every_subfolder(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "r.json").write_text(
        json.dumps({"snapshot": {"snapshot_id": "demo-20250102T000000Z"}}), "utf-8"
    )
    (tmp_path / "README.md").write_text("not JSON, not read", "utf-8")
    assert cited_snapshots(tmp_path) == {"demo-20250102T000000Z": "a/r.json"}


@pytest.mark.parametrize("body", ["[" * 50_000, "{not json", '{"snapshot": {}}', "[]"])
def test_a_json_file_that_names_no_snapshot_stops_the_prune(tmp_path: Path, body: str) -> None:
    (tmp_path / "junk.json").write_text(body, "utf-8")
    with pytest.raises(InputError) as caught:
        cited_snapshots(tmp_path)
    assert caught.value.message == (
        "junk.json in --reports names no snapshot, so what it protects is unknown"
    )


def test_a_reports_folder_that_does_not_exist_stops_the_prune(
    archive: FolderArchive, demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    typo = tmp_path / "reprots"
    done = cli(
        "snapshot",
        "prune",
        "demo",
        "--from",
        str(archive.root),
        "--keep",
        "1",
        "--reports",
        str(typo),
        "--dry-run",
    )
    assert done.returncode == 2
    assert done.stderr == f"error: --reports {typo}: no such folder\n"
    assert len(archive.list("demo")) == 2


def test_the_cli_prunes_all_but_the_newest_unless_a_report_cites_it(
    archive: FolderArchive, demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    first, second = demo_pair
    reports = tmp_path / "reports"
    reports.mkdir()
    dry = cli("snapshot", "prune", "demo", "--from", str(archive.root), "--keep", "1", "--dry-run")
    assert dry.stdout == (
        f"keep    {second.stem}  (one of the 1 newest)\nwould delete {first.stem}\n"
    )
    assert len(archive.list("demo")) == 2
    (reports / "answer.json").write_text(
        json.dumps({"snapshot": {"snapshot_id": first.stem}}), encoding="utf-8"
    )
    kept = cli(
        "snapshot",
        "prune",
        "demo",
        "--from",
        str(archive.root),
        "--keep",
        "1",
        "--reports",
        str(reports),
    )
    assert kept.stdout.splitlines()[0] == (
        f"keep    {first.stem}  (report answer.json was audited against it)"
    )
    (reports / "answer.json").unlink()
    done = cli("snapshot", "prune", "demo", "--from", str(archive.root), "--keep", "1")
    assert done.stdout.splitlines()[-1] == f"deleted {first.stem}"
    assert [i.snapshot_id for i in archive.list("demo")] == [second.stem]
    assert entries(archive.root / "demo") == [
        f"{second.stem}.duckdb",
        f"{second.stem}.manifest.json",
        f"{second.stem}.sha256",
    ]
