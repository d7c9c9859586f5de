"""Trust before use: every command refuses a snapshot that does not match its sealed manifest."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from audit.citations import parse_answer
from audit.duckdb_corpus import DuckDBCorpus
from audit.engine import audit_answer
from audit.handles import mint, parse_locator
from audit.keys import DEMO_FINGERPRINT, Keyring
from pipeline.errors import TamperedSnapshotError
from pipeline.settings import Settings
from pipeline.snapshot.build import build_snapshot
from pipeline.snapshot.manifest import (
    manifest_path,
    read_manifest,
    seal_message,
    sha256_file,
    write_manifest,
)
from pipeline.snapshot.trust import SealPolicy, trust_snapshot
from tests.cli import citeseal
from tests.conftest import ROOT, TEST_KEY, TEST_KEY_HEX, TEST_KEYRING, TRUST
from tests.pipeline.snapshot.conftest import DEMO_REPLAY, copy_demo_spec

DEMO = Keyring.demo_keyring()
OTHER_KEY = b"another installation's key, 32+ bytes long"
OTHER = Keyring([OTHER_KEY])
CONCLUSIONS = "pmid:99000001/abstract.4"
MISQUOTE = "Zentravir exposure strongly increases the risk of Farrow syndrome"


def cli(*args: str, key: str | None = TEST_KEY_HEX) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CITESEAL_KEY"}
    if key is not None:
        env["CITESEAL_KEY"] = key
    return citeseal(*args, env=env, cwd=ROOT)


def copy_of(snapshot: Path, folder: Path) -> Path:
    """The snapshot and its manifest copied into ``folder`` (a corpus folder of its own)."""
    folder.mkdir(parents=True, exist_ok=True)
    copy = Path(shutil.copy(snapshot, folder / snapshot.name))
    shutil.copy(manifest_path(snapshot), manifest_path(copy))
    return copy


def plant_misquote(snapshot: Path) -> None:
    """Edit the passage text by hand so that the planted misquote is in it."""
    con = duckdb.connect(str(snapshot))
    try:
        con.execute(
            "UPDATE passages SET text = $1, folded = NULL WHERE record_id = 'pmid:99000001' "
            "AND path = 'abstract.4'",
            [MISQUOTE + "."],
        )
    finally:
        con.close()


def restamp(snapshot: Path) -> None:
    """Write the file's real sha256 and size into its manifest (keeping the old seal)."""
    document = json.loads(manifest_path(snapshot).read_text(encoding="utf-8"))
    document.update(sha256=sha256_file(snapshot), size=snapshot.stat().st_size)
    manifest_path(snapshot).write_text(json.dumps(document), encoding="utf-8")


@pytest.fixture
def edited(demo_pair: tuple[Path, Path], tmp_path: Path) -> Path:
    copy = copy_of(demo_pair[1], tmp_path / "demo")
    plant_misquote(copy)
    return copy


def test_the_edited_passage_would_turn_a_misquote_ok_if_read_unchecked(edited: Path) -> None:
    handle = mint(DEMO, parse_locator(CONCLUSIONS))
    with DuckDBCorpus(edited) as corpus:  # the audit's corpus itself does no trust checks
        report = audit_answer(parse_answer(f'It does [{handle} "{MISQUOTE}"].'), corpus, DEMO)
    assert report.citations()[0].verdict == "ok"  # why every command checks first


@pytest.mark.parametrize(
    "command",
    [
        ["audit", "{answer}", "--snapshot", "{snapshot}", "--demo-key"],
        ["search", "zentravir", "--snapshot", "{snapshot}", "--demo-key"],
        ["cite", "pmid:99000001", "--snapshot", "{snapshot}", "--demo-key"],
        ["snapshot", "info", "{snapshot}"],
        ["snapshot", "diff", "{snapshot}", "{snapshot}"],
        ["snapshot", "export", "{snapshot}", "--parquet", "{out}"],
        ["snapshot", "rebuild", "{snapshot}"],
        ["snapshot", "build", "{spec}", "--parent", "{snapshot}"],
    ],
    ids=["audit", "search", "cite", "info", "diff", "export", "rebuild", "build-parent"],
)
def test_every_command_refuses_a_snapshot_whose_passage_text_was_edited(
    edited: Path, tmp_path: Path, command: list[str]
) -> None:
    handle = mint(DEMO, parse_locator(CONCLUSIONS))
    answer = tmp_path / "answer.md"
    answer.write_text(f'It does [{handle} "{MISQUOTE}"].\n', encoding="utf-8")
    spec = copy_demo_spec(tmp_path / "spec")
    values = {"answer": answer, "snapshot": edited, "out": tmp_path / "parquet", "spec": spec}
    before = sorted(p.name for p in edited.parent.iterdir())
    done = cli(*(part.format(**values) for part in command))
    parent = command[1] == "build"
    what = "parent snapshot" if parent else "snapshot"
    more = "; or build from another one with --parent FILE, or start a new lineage with "
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"error: {what} {edited} failed its digest check: the file is "
        f"{edited.stat().st_size:,} bytes, its manifest says {read_manifest(edited).size:,}\n"
        "hint: the file was changed after it was built; restore a copy or rebuild it"
        + (f"{more}--new-lineage" if parent else "")
        + "\n"
    )
    assert sorted(p.name for p in edited.parent.iterdir()) == before  # nothing written
    assert not (tmp_path / "parquet").exists()


def test_replacing_both_the_file_and_its_manifest_is_caught_by_the_seal(edited: Path) -> None:
    restamp(edited)  # the attacker also rewrites the manifest's sha256 and size
    with pytest.raises(TamperedSnapshotError) as caught:
        trust_snapshot(edited, TRUST)
    assert caught.value.message == (
        f"snapshot {edited} failed its seal check: its manifest was changed after it was "
        f"sealed (the seal under key {TEST_KEYRING.fingerprint} does not verify)"
    )
    done = cli("snapshot", "verify", str(edited), "--json")
    checks = {c["check"]: c["ok"] for c in json.loads(done.stdout)["checks"]}
    assert done.returncode == 1
    assert (checks["digest"], checks["seal"]) == (True, False)  # which check failed


def test_an_edited_file_keeps_a_valid_seal_and_fails_only_its_digest(edited: Path) -> None:
    done = cli("snapshot", "verify", str(edited), "--json")
    checks = {c["check"]: c["ok"] for c in json.loads(done.stdout)["checks"]}
    assert done.returncode == 1
    assert (checks["manifest"], checks["file"], checks["digest"], checks["seal"]) == (
        True,
        True,
        False,
        True,
    )


def test_a_snapshot_sealed_with_another_installations_key_is_refused(
    demo_pair: tuple[Path, Path],
) -> None:
    with pytest.raises(TamperedSnapshotError) as caught:
        trust_snapshot(demo_pair[1], SealPolicy.of(OTHER))
    assert caught.value.message == (
        f"snapshot {demo_pair[1]} failed its seal check: its manifest is sealed with key "
        f"{TEST_KEYRING.fingerprint}, which this installation does not hold (keys here: "
        f"{OTHER.fingerprint})"
    )
    assert caught.value.advice == (
        "set CITESEAL_KEY (or CITESEAL_KEY_FILE) to the key that built it"
    )


def test_a_retired_key_still_verifies_the_seals_it_made(demo_pair: tuple[Path, Path]) -> None:
    rotated = Keyring.from_keys(OTHER_KEY, [TEST_KEY])  # the test key, retired
    assert trust_snapshot(demo_pair[1], SealPolicy.of(rotated)).seal == "sealed"


def test_demo_seals_are_accepted_only_in_demo_mode(tmp_path: Path) -> None:
    spec = copy_demo_spec(tmp_path)
    built = build_snapshot(
        spec, keyring=DEMO, replay=[DEMO_REPLAY], settings=Settings(), resume=False
    )
    assert built.manifest.seal is not None and built.manifest.seal.key == DEMO_FINGERPRINT
    trusted = trust_snapshot(built.path, SealPolicy.of(TEST_KEYRING, DEMO))
    assert trusted.seal == "demo"
    with pytest.raises(TamperedSnapshotError) as caught:
        trust_snapshot(built.path, TRUST)
    assert caught.value.message == (
        f"snapshot {built.path} failed its seal check: its manifest is sealed with the public "
        f"demo key {DEMO_FINGERPRINT}, which anyone can use"
    )
    assert caught.value.advice == "demo snapshots are read only in demo mode (--demo-key)"
    done = cli("snapshot", "info", str(built.path), "--demo-key", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["seal"] == {"status": "demo", "key": DEMO_FINGERPRINT}


def test_the_seal_covers_the_manifest_as_stored_not_todays_model(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    copy = copy_of(demo_pair[1], tmp_path / "demo")
    document = json.loads(manifest_path(copy).read_text(encoding="utf-8"))
    del document["seal"], document["withdrawn"]  # as an older citeseal would have written it
    document["seal"] = {
        "algorithm": "hmac-sha256",
        "key": TEST_KEYRING.fingerprint,
        "mac": TEST_KEYRING.seal(seal_message(document)),
    }
    manifest_path(copy).write_text(json.dumps(document), encoding="utf-8")
    assert trust_snapshot(copy, TRUST).manifest.withdrawn == 0  # today's default, still sealed


def test_an_unsealed_manifest_is_refused_until_its_owner_seals_it(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    copy = copy_of(demo_pair[1], tmp_path / "demo")
    write_manifest(copy, read_manifest(copy).model_copy(update={"seal": None}))
    done = cli("search", "zentravir", "--snapshot", str(copy), "--demo-key")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"error: snapshot {copy} failed its seal check: its manifest carries no seal (written "
        "before citeseal sealed manifests, or the seal was removed)\n"
        "hint: if you trust this file, seal it with your key: citeseal snapshot seal PATH\n"
    )
    sealed = cli("snapshot", "seal", str(copy))
    assert (sealed.returncode, sealed.stdout) == (
        0,
        f"sealed {copy} with key {TEST_KEYRING.fingerprint}\n",
    )
    assert cli("search", "zentravir", "--snapshot", str(copy), "--demo-key").returncode == 0
    again = cli("snapshot", "seal", str(copy))
    assert again.stdout == (
        f"already sealed: {copy} (sealed with key {TEST_KEYRING.fingerprint} (verified))\n"
    )


def test_seal_refuses_an_unsealed_manifest_that_does_not_match_its_file(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    copy = copy_of(demo_pair[1], tmp_path / "demo")
    write_manifest(copy, read_manifest(copy).model_copy(update={"seal": None}))
    plant_misquote(copy)
    done = cli("snapshot", "seal", str(copy))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(
        f"error: refusing to seal {copy}: its digest check fails: the file is "
    )
    assert read_manifest(copy).seal is None


def test_a_sealed_manifest_under_another_key_is_never_resealed(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    copy = copy_of(demo_pair[1], tmp_path / "demo")
    done = cli("snapshot", "seal", str(copy), key=OTHER_KEY.hex())
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: refusing to seal {copy}: its seal check fails: ")
    assert read_manifest(copy).seal == read_manifest(demo_pair[1]).seal


def test_inspection_without_a_key_says_the_seal_was_not_checked(
    demo_pair: tuple[Path, Path],
) -> None:
    snapshot = demo_pair[1]
    info = cli("snapshot", "info", str(snapshot), key=None)
    assert info.returncode == 0, info.stderr
    assert info.stderr == (
        f"note: the seal of {snapshot} was not checked: no key here (its file matches its "
        "manifest)\n"
    )
    assert (
        f"  seal      sealed with key {TEST_KEYRING.fingerprint}; not checked (no key here)\n"
        in (info.stdout)
    )
    verify = cli("snapshot", "verify", str(snapshot), key=None)
    assert verify.returncode == 1
    assert verify.stderr.splitlines()[0] == (
        f"error: snapshot {snapshot} failed its seal check: no key here to check its seal "
        f"(sealed with key {TEST_KEYRING.fingerprint})"
    )


def test_list_shows_each_snapshots_check_and_exits_1_when_one_fails(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    folder = tmp_path / "demo"
    good = copy_of(demo_pair[0], folder)
    bad = copy_of(demo_pair[1], folder)
    plant_misquote(bad)
    done = cli("snapshot", "list", str(folder), "--json")
    rows = {Path(r["path"]).name: r for r in json.loads(done.stdout)}
    assert done.returncode == 1
    assert (rows[good.name]["ok"], rows[good.name]["trust"]) == (True, "ok")
    assert rows[bad.name]["ok"] is False
    assert rows[bad.name]["trust"].startswith("digest check failed: the file is ")
    text = cli("snapshot", "list", str(folder))
    assert f"{bad}  12 records" in text.stdout and "  REFUSED: digest check failed" in text.stdout


def test_a_file_replaced_after_its_check_is_refused_when_opened(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    copy = copy_of(demo_pair[1], tmp_path / "demo")
    trusted = trust_snapshot(copy, TRUST)
    swapped = tmp_path / "swapped.duckdb"
    shutil.copy(copy, swapped)
    swapped.replace(copy)  # same bytes, another file: its identity changed after the check
    with pytest.raises(TamperedSnapshotError) as caught:
        trusted.corpus()
    assert caught.value.message == f"snapshot {copy.name} changed while it was being opened"
