"""``citeseal check`` on the demo references document prints exactly its golden report in
every format (``make golden-references`` rewrites them: tests/pipeline/check_demo_golden.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from tests.conftest import TEST_KEY_HEX
from tests.pipeline.check_demo_golden import DOCUMENT, FORMATS, golden_path, normalised, outputs


@pytest.mark.parametrize("fmt", FORMATS)
def test_check_prints_the_golden_report_of_the_demo_document(
    demo_pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    snapshot = demo_pair[0]
    monkeypatch.chdir(DOCUMENT.parent)  # the report names the file relative to here
    monkeypatch.setenv("CITESEAL_KEY", TEST_KEY_HEX)
    result = CliRunner().invoke(
        app, ["check", DOCUMENT.name, "--snapshot", str(snapshot), "--format", fmt]
    )
    assert (result.exit_code, result.stderr) == (0, "")
    assert normalised(result.stdout, snapshot) == golden_path(fmt).read_text(encoding="utf-8")


def test_the_golden_generator_makes_what_the_cli_prints(demo_pair: tuple[Path, Path]) -> None:
    made = outputs(demo_pair[0])
    assert made == {fmt: golden_path(fmt).read_text(encoding="utf-8") for fmt in FORMATS}


def test_the_demo_goldens_cover_every_tier() -> None:
    counts = json.loads(golden_path("json").read_text(encoding="utf-8"))["counts"]
    assert counts == {
        "verified": 5,
        "mismatch": 1,
        "hallucinated": 2,
        "needs_review": 2,
        "unresolved": 1,
    }
