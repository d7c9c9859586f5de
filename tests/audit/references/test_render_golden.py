"""The check report of data/check.md as Markdown and HTML, against its golden files
(``python -m tests.audit.references.render_golden`` rewrites them)."""

from __future__ import annotations

import pytest

from audit.references.check import CheckReport
from tests.audit.fixture_scope import per_module
from tests.audit.references.check_golden import report
from tests.audit.references.render_golden import FORMATS, golden_path, render
from tests.audit.references.works import write_works


@pytest.fixture(scope=per_module)
def made(tmp_path_factory: pytest.TempPathFactory) -> CheckReport:
    return report(write_works(tmp_path_factory.mktemp("works") / "works.duckdb"))


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_check_report_renders_as_its_golden_file(made: CheckReport, fmt: str) -> None:
    assert render(made, fmt) == golden_path(fmt).read_text(encoding="utf-8")
