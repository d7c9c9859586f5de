"""``snapshot backfill``: a pinned trial version the demo snapshot lacks, fetched from the
(replayed) ClinicalTrials.gov history into a child snapshot, then verified by the audit."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from audit.duckdb_corpus import DuckDBCorpus
from audit.engine import CitationInput, judge_citations
from audit.errors import InputError
from audit.handles import mint, parse_locator
from audit.keys import Keyring
from audit.report import CitationResult
from pipeline.settings import Settings
from pipeline.snapshot.backfill import BackfillResult, backfill_snapshot
from pipeline.snapshot.build import build_snapshot
from pipeline.snapshot.manifest import manifest_path, read_manifest, sha256_file
from pipeline.snapshot.store import RECORD_ID_INDEXED
from pipeline.snapshot.verify import verify_snapshot
from tests.cli import citeseal
from tests.conftest import ROOT, TEST_KEY_HEX, TEST_KEYRING, TRUST
from tests.pipeline.snapshot.conftest import DEMO_REPLAY, copy_demo_spec

HISTORY = ROOT / "tests" / "fixtures" / "history"  # C's fixtures (NCT99000001, the label)
OLDER = ROOT / "tests" / "fixtures" / "backfill"  # ours: an older version of NCT99000003
KEYRING = Keyring.demo_keyring()
TRIAL = "nct:NCT99000003"
OLD = "2023-05-02"  # in the replayed history only (tests/fixtures/history/clinicaltrials)
CURRENT = "2024-09-10"  # what the demo harvest holds
LOCATOR = f"{TRIAL}@{OLD}/trial.brief_summary.1"
OLD_ONLY = "compares zentravir with placebo for 8 weeks in adolescents"
SETID = "5eed0001-0000-4000-8000-000000000001"
ON = Settings(history_backfill=True)


def handle(locator: str = LOCATOR) -> str:
    return mint(KEYRING, parse_locator(locator))


def judge(snapshot: Path, text: str, quote: str | None) -> CitationResult:
    with DuckDBCorpus(snapshot) as corpus:
        (result,) = judge_citations([CitationInput.from_text(text, quote)], corpus, KEYRING)
    return result


def query(path: Path, sql: str, params: list[object] | None = None) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def cli(*args: str, backfill: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CITESEAL_HISTORY_BACKFILL"}
    env["CITESEAL_KEY"] = TEST_KEY_HEX
    if backfill:
        env["CITESEAL_HISTORY_BACKFILL"] = "1"
    return citeseal("snapshot", *args, env=env, cwd=ROOT)


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo corpus harvested once from replay: it holds NCT99000003 @2024-09-10 only."""
    spec = copy_demo_spec(tmp_path_factory.mktemp("backfill-demo"))
    return build_snapshot(
        spec, keyring=TEST_KEYRING, replay=[DEMO_REPLAY], settings=Settings(), resume=False
    ).path


@pytest.fixture(scope="module")
def backfilled(parent: Path) -> BackfillResult:
    return backfill_snapshot(
        parent, [handle()], keyring=TEST_KEYRING, replay=[OLDER, HISTORY], settings=ON
    )


@pytest.fixture
def fresh(parent: Path, tmp_path: Path) -> Path:
    """A private copy of the parent (file and manifest) in its own corpus folder."""
    folder = tmp_path / "demo"
    folder.mkdir()
    shutil.copy(manifest_path(parent), folder)
    return Path(shutil.copy(parent, folder))


def test_before_backfill_the_pinned_old_version_is_withdrawn_not_retained(parent: Path) -> None:
    result = judge(parent, handle(), OLD_ONLY)
    assert (result.verdict, result.detail) == (
        "withdrawn",
        f"version not retained: {OLD} (current version {CURRENT})",
    )


def test_the_child_holds_the_old_version_as_backfill_and_keeps_the_current_one(
    parent: Path, backfilled: BackfillResult
) -> None:
    assert [(i.status, i.record_id, i.version) for i in backfilled.items] == [
        ("backfilled", TRIAL, OLD)
    ]
    assert backfilled.build is not None
    child = backfilled.build.path
    assert child.parent == parent.parent and child != parent
    assert query(
        child,
        "SELECT version, seq, origin FROM record_versions WHERE record_id = ? ORDER BY seq",
        [TRIAL],
    ) == [(OLD, 1, "backfill"), (CURRENT, 2, "carried")]
    assert query(
        child, "SELECT current_version, withdrawn FROM record_state WHERE record_id = ?", [TRIAL]
    ) == [(CURRENT, False)]
    assert query(
        child, "SELECT status FROM records WHERE record_id = ? ORDER BY version", [TRIAL]
    ) == [("RECRUITING",), ("COMPLETED",)]
    manifest = read_manifest(child)
    assert manifest.parent is not None
    assert (manifest.parent.sha256, manifest.parent.path) == (sha256_file(parent), parent.name)
    assert manifest.mode == "backfill"
    assert manifest.versions == read_manifest(parent).versions + 1
    assert manifest.sources["clinicaltrials"].new_versions == 1
    assert verify_snapshot(parent, TRUST).ok  # the parent is untouched


def test_after_backfill_a_quote_from_the_old_text_is_ok_with_version_changed(
    parent: Path, backfilled: BackfillResult
) -> None:
    assert backfilled.build is not None
    result = judge(backfilled.build.path, handle(), OLD_ONLY)
    assert (result.verdict, result.checked_against) == ("ok", "issued")
    assert [(f.name, f.detail) for f in result.flags] == [
        ("version_changed", f"current version {CURRENT} (this passage changed)")
    ]
    assert result.passage is not None and OLD_ONLY in result.passage.text
    assert result.current_passage is not None
    assert result.current_passage.version == CURRENT
    assert OLD_ONLY not in result.current_passage.text


def test_the_backfilled_child_indexes_record_id_as_a_build_does(
    backfilled: BackfillResult,
) -> None:
    assert backfilled.build is not None
    con = duckdb.connect(str(backfilled.build.path), read_only=True)
    try:
        rows = con.execute("SELECT table_name FROM duckdb_indexes() ORDER BY 1").fetchall()
    finally:
        con.close()
    assert rows == sorted((t,) for t in RECORD_ID_INDEXED)


def test_snapshot_verify_passes_on_the_child(backfilled: BackfillResult) -> None:
    assert backfilled.build is not None
    run = cli("verify", str(backfilled.build.path))
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == f"ok {backfilled.build.path}"
    assert run.stdout.splitlines()[-1] == "  parent: ok"


def test_cli_reports_every_outcome_and_writes_one_child(fresh: Path) -> None:
    forged = handle()[:-5] + "00000"  # the check code is not verified by a backfill
    run = cli(
        "backfill",
        str(fresh),
        forged,
        f"{TRIAL}@{CURRENT}/trial.brief_summary.1",
        f"{TRIAL}@2020-01-01/trial.brief_summary.1",
        f"setid:{SETID}@1/label.boxed_warning.1",
        "nct:NCT99000002@2023-01-01/trial.brief_summary.1",
        "--replay",
        str(OLDER),
        "--replay",
        str(HISTORY),
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    children = sorted(p for p in fresh.parent.glob("*.duckdb") if p != fresh)
    assert len(children) == 1
    assert lines[:5] == [
        f"{forged}: backfilled",
        f"{TRIAL}@{CURRENT}/trial.brief_summary.1: already present",
        f"{TRIAL}@2020-01-01/trial.brief_summary.1: not retained (the ClinicalTrials.gov "
        "history of NCT99000003 has no version last updated on 2020-01-01)",
        f"setid:{SETID}@1/label.boxed_warning.1: unfetchable (DailyMed lists version 1 of set "
        f"id {SETID} (published 2023-03-14), but citeseal cannot fetch the text of an earlier "
        "SPL version)",
        "nct:NCT99000002@2023-01-01/trial.brief_summary.1: unfetchable (no recorded exchange "
        "for GET https://clinicaltrials.gov/api/int/studies/NCT99000002/history in "
        "tests/fixtures/backfill, tests/fixtures/history)",  # relative to the cwd: no local path
    ]
    assert lines[5:] == [
        f"wrote {children[0]}",
        f"  parent    {fresh.name}",
        "  lineage   12 records, 13 versions, 103 passages; 1 version backfilled",
    ]


def test_an_unknown_version_is_not_retained_and_no_snapshot_is_written(fresh: Path) -> None:
    before = sorted(p.name for p in fresh.parent.glob("demo-*"))
    run = cli(
        "backfill",
        str(fresh),
        f"{TRIAL}@2020-01-01/trial.brief_summary.1",
        "--replay",
        str(OLDER),
        "--replay",
        str(HISTORY),
    )
    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout.splitlines() == [
        f"{TRIAL}@2020-01-01/trial.brief_summary.1: not retained (the ClinicalTrials.gov "
        "history of NCT99000003 has no version last updated on 2020-01-01)",
        "nothing backfilled: no new snapshot written",
    ]
    assert (
        sorted(p.name for p in fresh.parent.glob("demo-*"))
        == before
        == [
            fresh.name,
            manifest_path(fresh).name,
        ]
    )


def test_disabled_backfill_exits_2_with_a_hint(fresh: Path) -> None:
    run = cli("backfill", str(fresh), handle(), "--replay", str(OLDER), backfill=False)
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.splitlines() == [
        "error: version history backfill is off",
        "hint: set CITESEAL_HISTORY_BACKFILL=1 to let citeseal ask the registries' history "
        "services (unofficial or separate services)",
    ]


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (
            "pmid:99000001/abstract.1",
            "pmid:99000001/abstract.1: only nct: and setid: versions can be backfilled, got pmid:",
        ),
        (
            f"{TRIAL}/trial.brief_summary.1",
            "nct handles pin the record version: expected '@' and a version after the id, got '/'",
        ),
    ],
    ids=["literature", "unpinned"],
)
def test_bad_targets_are_refused(parent: Path, target: str, message: str) -> None:
    with pytest.raises(InputError) as caught:  # the unpinned one breaks the grammar
        backfill_snapshot(
            parent, [target], keyring=TEST_KEYRING, replay=[OLDER, HISTORY], settings=ON
        )
    assert caught.value.message == message


def test_a_malformed_handle_exits_2(fresh: Path) -> None:
    run = cli("backfill", str(fresh), "nct:NCT123@2020/x", "--replay", str(OLDER))
    assert run.returncode == 2
    assert run.stderr.startswith("error: ")
    assert run.stdout == ""
