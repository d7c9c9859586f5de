"""``citeseal evaluate``: the table, --json-out, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli import citeseal


def test_evaluate_on_the_generated_world_writes_the_full_report(tmp_path: Path) -> None:
    out = tmp_path / "evaluation.json"
    done = citeseal("evaluate", "--generated-only", "--per-category", "2", "--json-out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "failures: none" in done.stdout
    assert "run time" in done.stdout
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["ok"] is True
    assert data["worlds"] == ["generated"]
    assert len(data["categories"]) >= 48
    assert data["confusion"]["ok"]["ok"] > 0


def test_evaluate_refuses_contradictory_options() -> None:
    done = citeseal("evaluate", "--generated-only", "--snapshot", "x.duckdb")
    assert done.returncode == 2
    assert done.stderr == "error: --generated-only and --snapshot exclude each other\n"


def test_evaluate_refuses_zero_cases_per_category() -> None:
    done = citeseal("evaluate", "--per-category", "0")
    assert done.returncode == 2
    assert done.stderr.startswith("error: Invalid value for '--per-category'")
    assert "Traceback" not in done.stderr


def test_evaluate_on_a_missing_snapshot_is_a_one_line_error(tmp_path: Path) -> None:
    done = citeseal("evaluate", "--snapshot", str(tmp_path / "nope.duckdb"), "--demo-key")
    assert done.returncode != 0
    assert done.stderr.startswith("error: ")
    assert "Traceback" not in done.stderr
