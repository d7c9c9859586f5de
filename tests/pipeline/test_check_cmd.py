"""``citeseal check`` through the CLI's error boundary: reports, exit codes, usage errors."""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

import pytest

from pipeline.cli import main
from tests.audit.references.check_golden import DATA, golden_path, normalised
from tests.audit.references.works import write_works
from tests.conftest import TEST_KEY_HEX

CLEAN = b"# References\n\n1. Doe J, Roe R. Vitamin Y and sleep quality in older adults. 2021. "
CLEAN += b"PMID: 99100002\n"


@pytest.fixture(scope="module")
def works(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_works(tmp_path_factory.mktemp("works") / "works.duckdb")


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder holding the fixture document, with the test key configured."""
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(DATA / "check.md", folder / "check.md")
    monkeypatch.chdir(folder)
    monkeypatch.setenv("CITESEAL_KEY", TEST_KEY_HEX)
    return folder


def run(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *args: str,
    stdin: bytes | None = None,
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["citeseal", *args])
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = 0
    try:
        main()
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def sha256_of(works: Path) -> str:
    return json.loads(works.with_suffix(".manifest.json").read_text())["sha256"]


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_each_format_prints_its_golden_report(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    works: Path,
    here: Path,
    fmt: str,
) -> None:
    code, out, err = run(monkeypatch, capsys, "check", "check.md", "-s", str(works), "-f", fmt)
    assert err == ""
    assert code == 0
    expected = golden_path(fmt).read_text(encoding="utf-8").replace('"works-1"', '"works"')
    got = normalised(out, sha256_of(works)).replace('"works-1"', '"works"')
    assert got == expected


def test_fail_on_fabrication_exits_1_when_any_reference_is_hallucinated(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], works: Path, here: Path
) -> None:
    args = ("check", "check.md", "-s", str(works), "--fail-on-fabrication")
    code, out, _ = run(monkeypatch, capsys, *args)
    assert code == 1
    assert "hallucinated: doi:10.5555/ref.0003 is pmid:99100003, a different work" in out


def test_fail_on_fabrication_exits_0_on_a_document_without_fabrication(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], works: Path, here: Path
) -> None:
    args = ("check", "-", "--input-format", "markdown", "-s", str(works), "--fail-on-fabrication")
    code, out, err = run(monkeypatch, capsys, *args, stdin=CLEAN)
    assert (code, err) == (0, "")
    assert "[1] verified [retracted]: pmid:99100002 is pmid:99100002" in out


@pytest.mark.parametrize(
    ("items", "code"),
    [("retracted", 1), ("unresolved,needs_review", 0), ("mismatch", 0), ("verified", 1)],
)
def test_fail_on_takes_tiers_and_flags(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    works: Path,
    here: Path,
    items: str,
    code: int,
) -> None:
    args = ("check", "-", "--input-format", "markdown", "-s", str(works), "--fail-on", items)
    assert run(monkeypatch, capsys, *args, stdin=CLEAN)[0] == code


def test_an_unknown_fail_on_item_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], works: Path, here: Path
) -> None:
    code, out, err = run(
        monkeypatch, capsys, "check", "check.md", "-s", str(works), "--fail-on", "fabricated"
    )
    assert (code, out) == (2, "")
    assert err == (
        "error: --fail-on: unknown item 'fabricated', expected one of verified, mismatch, "
        "hallucinated, needs_review, unresolved, retracted, expression_of_concern, preprint\n"
    )


def test_stdin_needs_an_input_format(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], works: Path, here: Path
) -> None:
    code, out, err = run(monkeypatch, capsys, "check", "-", "-s", str(works), stdin=CLEAN)
    assert (code, out, err) == (2, "", "error: reading stdin ('-') needs --input-format\n")


def test_a_missing_file_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], works: Path, here: Path
) -> None:
    code, out, err = run(monkeypatch, capsys, "check", "nope.md", "-s", str(works))
    assert (code, out, err) == (2, "", "error: nope.md: no such file or directory\n")


def test_a_bad_input_is_reported_and_the_others_still_checked(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], works: Path, here: Path
) -> None:
    (here / "broken.bib").write_text("@article{x, title = {unclosed\n", encoding="utf-8")
    code, out, err = run(
        monkeypatch, capsys, "check", "broken.bib", "check.md", "-s", str(works), "-f", "json"
    )
    assert code == 2
    assert err.startswith("error: broken.bib: ")
    assert err.count("\n") == 1
    report = json.loads(out)
    assert [d["file"] for d in report["documents"]] == ["check.md"]


def test_a_folder_is_checked_file_by_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], works: Path, here: Path
) -> None:
    sub = here / "chapters"
    sub.mkdir()
    (sub / "one.md").write_bytes(CLEAN)
    (sub / "data.json").write_text("{}", encoding="utf-8")  # not taken from a folder
    (here / ".hidden").mkdir()
    (here / ".hidden" / "skip.md").write_bytes(CLEAN)
    code, out, err = run(monkeypatch, capsys, "check", ".", "-s", str(works), "-f", "json")
    assert (code, err) == (0, "")
    assert [d["file"] for d in json.loads(out)["documents"]] == ["chapters/one.md", "check.md"]


def test_out_writes_the_report_and_prints_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], works: Path, here: Path
) -> None:
    target = here / "report.sarif"
    args = ("check", "check.md", "-s", str(works), "-f", "sarif", "-o", str(target))
    assert run(monkeypatch, capsys, *args) == (0, "", "")
    assert json.loads(target.read_text(encoding="utf-8"))["version"] == "2.1.0"


def test_a_snapshot_sealed_by_another_key_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], works: Path, here: Path
) -> None:
    monkeypatch.setenv("CITESEAL_KEY", "ab" * 32)
    code, out, err = run(monkeypatch, capsys, "check", "check.md", "-s", str(works))
    assert (code, out) == (1, "")
    assert err.startswith("error: ")
    assert "seal" in err
