"""``citeseal reaudit``: a reader re-audits a published report against a downloaded snapshot."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from audit.citations import parse_answer
from audit.duckdb_corpus import DuckDBCorpus
from audit.engine import audit_answer
from audit.handles import mint, parse_locator
from audit.keys import Keyring
from pipeline.snapshot.manifest import manifest_path
from tests.cli import citeseal
from tests.conftest import ROOT, TEST_KEY_HEX, TEST_KEYRING

DEMO = Keyring.demo_keyring()
OTHER = Keyring([b"the key of the installation that published it"])
OUTCOME = "nct:NCT99000001@2025-01-15/trial.primary_outcome.1"
QUOTE = "Number of Farrow flares per participant"


def cli(*args: str, key: str | None = TEST_KEY_HEX) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CITESEAL_KEY"}
    if key is not None:
        env["CITESEAL_KEY"] = key
    return citeseal(*args, env={**env, "SOURCE_DATE_EPOCH": "1750000000"}, cwd=ROOT)


def published(first: Path, folder: Path, keyring: Keyring, *, forged: bool = False) -> Path:
    """A report audited against ``first`` (as published then), written as JSON."""
    handle = mint(keyring, parse_locator(OUTCOME))
    if forged:
        handle = handle[:-1] + ("0" if handle[-1] != "0" else "1")
    answer = f'The trial counts flares [{handle} "{QUOTE}"].\n'
    with DuckDBCorpus(first) as corpus:
        report = audit_answer(parse_answer(answer), corpus, keyring, source_label="answer.md")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "answer.json"
    path.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    return path


def test_a_report_re_audited_against_a_newer_snapshot_lists_what_changed(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    first, second = demo_pair
    report = published(first, tmp_path, DEMO)
    done = cli("reaudit", str(report), "--snapshot", str(second), "--demo-key")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"answer.json: pass → pass against {second.stem}; check codes verified again with the "
        "public demo key",
        f"  [1.1] {mint(DEMO, parse_locator(OUTCOME))}: ok → ok [version_changed] (current "
        "version 2025-06-02 (this passage changed))",
    ]
    same = cli("reaudit", str(report), "--snapshot", str(first), "--demo-key", "--format", "json")
    lines = same.stdout.splitlines()
    assert lines[1] == "  no citation changed status since publication"
    assert json.loads("\n".join(lines[2:]))["verdict"] == "pass"


def test_a_reader_without_the_key_re_audits_with_the_check_codes_as_published(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    first, second = demo_pair
    report = published(first, tmp_path, OTHER)
    done = cli("reaudit", str(report), "--snapshot", str(second), key=None)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        f"answer.json: pass → pass against {second.stem}; check codes taken as published (the "
        f"key {OTHER.fingerprint} is not available to this build)"
    )
    assert "[version_changed]" in done.stdout  # the corpus side is checked again all the same
    assert done.stderr == (
        f"note: the seal of {second} was not checked: no key here (its file matches its manifest)\n"
    )


def test_a_re_audit_that_fails_exits_1(demo_pair: tuple[Path, Path], tmp_path: Path) -> None:
    report = published(demo_pair[0], tmp_path, DEMO, forged=True)
    done = cli("reaudit", str(report), "--snapshot", str(demo_pair[1]), "--demo-key")
    assert done.returncode == 1
    assert done.stdout.splitlines()[0].startswith("answer.json: fail → fail against ")


def test_an_edited_snapshot_is_refused_even_without_the_key(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    report = published(demo_pair[0], tmp_path, DEMO)
    folder = tmp_path / "download"
    folder.mkdir()
    copy = Path(shutil.copy(demo_pair[1], folder))
    shutil.copy(manifest_path(demo_pair[1]), manifest_path(copy))
    with copy.open("r+b") as handle:
        handle.seek(copy.stat().st_size // 2)
        byte = handle.read(1)
        handle.seek(-1, 1)
        handle.write(bytes([byte[0] ^ 0xFF]))
    done = cli("reaudit", str(report), "--snapshot", str(copy), "--demo-key", key=None)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith(f"error: snapshot {copy} failed its digest check: ")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "error: malformed report bad.json: not valid JSON"),
        (
            '{"verdict": "pass"}',
            "error: malformed report bad.json: contract_version: Field required",
        ),
    ],
    ids=["not-json", "not-a-report"],
)
def test_a_file_that_is_not_a_report_is_a_one_line_error(
    demo_pair: tuple[Path, Path], tmp_path: Path, content: str, message: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    done = cli("reaudit", str(bad), "--snapshot", str(demo_pair[1]))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(message) and "Traceback" not in done.stderr
    assert TEST_KEYRING.fingerprint not in done.stderr
