"""The golden Markdown and HTML check reports of data/check.md against the works snapshot:
``python -m tests.audit.references.render_golden`` rewrites them; test_render_golden.py in
this folder checks them. Review every changed line of ``git diff`` before committing a rewrite.

The same report as the text, JSON and SARIF goldens (:mod:`tests.audit.references.check_golden`),
the HTML with the inlined stylesheet and the tool's version as placeholders
(:func:`tests.audit.golden_reports.normalised`)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from audit.references.check import CheckReport
from audit.references.render_html import render_check_html
from audit.references.render_md import render_markdown
from tests.audit.golden_reports import normalised
from tests.audit.references.check_golden import DATA, INPUT, report
from tests.audit.references.works import write_works

FORMATS = ("md", "html")


def golden_path(fmt: str) -> Path:
    return DATA / f"{INPUT}.check.golden.{fmt}"


def render(made: CheckReport, fmt: str) -> str:
    return normalised(render_markdown(made) if fmt == "md" else render_check_html(made))


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        made = report(write_works(Path(folder) / "works.duckdb"))
    for fmt in FORMATS:
        golden_path(fmt).write_text(render(made, fmt), encoding="utf-8")
        print(f"wrote {golden_path(fmt).relative_to(Path.cwd())}")
