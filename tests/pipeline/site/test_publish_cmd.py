"""``citeseal site build --publish``: the option reaches the pages; a bad mode is one line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pipeline.cli import main
from tests.audit.test_publish import CLOSED_TEXT, OPEN_TEXT, blockquotes, policy_report
from tests.conftest import TEST_KEY_HEX


def run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["citeseal", *args])
    code = 0
    try:
        main()
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def _inputs(tmp_path: Path) -> list[str]:
    reports, snapshots = tmp_path / "reports", tmp_path / "snapshots"
    reports.mkdir()
    snapshots.mkdir()
    (reports / "answer.json").write_text(policy_report().model_dump_json(), encoding="utf-8")
    return ["site", "build", "--reports", str(reports), "--snapshots", str(snapshots)]


def test_site_build_publish_excerpt_shows_only_excerpts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CITESEAL_KEY", TEST_KEY_HEX)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1750000000")
    out = tmp_path / "public"
    code, _, _ = run(
        monkeypatch, capsys, *_inputs(tmp_path), "--out", str(out), "--publish", "excerpt"
    )
    assert code == 0
    (page,) = (out / "reports").glob("*.html")
    shown = blockquotes(page.read_text(encoding="utf-8"))
    assert OPEN_TEXT not in shown and CLOSED_TEXT not in shown
    assert page.read_text(encoding="utf-8").count("(this page shows excerpts only)") == 3


def test_site_build_refuses_an_unknown_publish_mode_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(monkeypatch, capsys, *_inputs(tmp_path), "--publish", "everything")
    assert code == 2
    assert (
        "Invalid value for '--publish': 'everything' is not one of 'policy', 'full', 'excerpt'."
        in err
    )
    assert not (tmp_path / "site").exists()
