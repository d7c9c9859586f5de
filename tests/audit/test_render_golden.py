"""Whole reports rendered as text, Markdown and HTML, against their golden files
(``python -m tests.audit.golden_reports`` rewrites them; tests/audit/golden_reports.py says
what each report holds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.audit.fixture_scope import per_module
from tests.audit.golden_reports import GOLDENS, build, golden_path, rendered
from tests.audit.references.works import write_works

CASES = [(name, fmt) for name, formats in GOLDENS.items() for fmt in formats]


@pytest.fixture(scope=per_module)
def works(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_works(tmp_path_factory.mktemp("works") / "works.duckdb")


@pytest.mark.parametrize(("name", "fmt"), CASES, ids=[f"{n}.{f}" for n, f in CASES])
def test_the_report_renders_as_its_golden_file(
    name: str, fmt: str, request: pytest.FixtureRequest
) -> None:
    works = request.getfixturevalue("works") if name == "support" else None
    assert rendered(build(name, works), fmt) == golden_path(name, fmt).read_text(encoding="utf-8")


def test_every_golden_file_is_checked() -> None:
    on_disk = {p.name for p in golden_path("x", "y").parent.iterdir()}
    assert on_disk == {golden_path(n, f).name for n, f in CASES}
