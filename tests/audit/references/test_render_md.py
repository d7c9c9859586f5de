"""audit.references.render_md in detail: a report without references, online, without a
snapshot id; a row with several identifiers and a field the document leaves out (whole
reports: test_render_golden.py)."""

from __future__ import annotations

import re

import pytest

from audit.references.check import CheckReport, DocumentCheck, FieldDiff, SnapshotRef, make_report
from audit.references.render_html import references_view
from audit.references.render_md import diff_text, references_markdown, render_markdown, summary
from tests.audit.fixture_scope import per_module
from tests.audit.references.check_golden import report
from tests.audit.references.works import write_works


@pytest.fixture(scope=per_module)
def made(tmp_path_factory: pytest.TempPathFactory) -> CheckReport:
    return report(write_works(tmp_path_factory.mktemp("works") / "works.duckdb"))


def test_an_online_check_of_a_document_without_references() -> None:
    empty = DocumentCheck(file="notes.md", format="markdown", references=(), counts={})
    ref = SnapshotRef(name="works", sha256="ab" * 32, snapshot_id=None)
    checked = make_report([empty], ref, "citeseal test", online=True)
    assert render_markdown(checked) == (
        "# Reference check: no references\n"
        "\n"
        f"Snapshot `works` (sha256 `{'ab' * 32}`), online; citeseal test. Offline, an identifier "
        "missing from the snapshot is `unresolved`, never evidence of fabrication.\n"
        "\n"
        "## notes.md (markdown): no references\n"
    )
    assert summary({}) == summary({"verified": 0}) == "no references"
    assert references_view((), {}).summary == "no references"


def test_a_row_joins_its_identifiers_and_shows_a_missing_value_as_a_dash(
    made: CheckReport,
) -> None:
    first = made.documents[0].references[0]
    check = first.model_copy(
        update={
            "tier": "mismatch",
            "identifiers": ("doi:10.5555/ref.0001", "pmid:99100001"),
            "diffs": (
                FieldDiff(field="year", seen=None, expected="2020"),
                FieldDiff(field="doi", seen="10.5555/x", expected=None),
            ),
        }
    )
    assert diff_text(check) == [
        "year: seen —, expected “2020”",
        "doi: seen “10.5555/x”, expected —",
    ]
    (row,) = [line for line in references_markdown([check], level=2) if line.startswith("| 3:")]
    assert "| `doi:10.5555/ref.0001`<br>`pmid:99100001` |" in row
    assert "| year: seen —, expected “2020”; doi: seen “10.5555/x”, expected — |" in row
    assert references_markdown([check], level=2)[1] == "## mismatch (1)"


def test_a_pipe_in_an_identifier_does_not_split_its_row(made: CheckReport) -> None:
    """GFM splits a table row at every pipe not escaped, inside code spans too."""
    check = (
        made.documents[0]
        .references[0]
        .model_copy(update={"identifiers": ("doi:10.5555/a|b", "doi:10.5555/`|`")})
    )
    (row,) = [line for line in references_markdown([check]) if line.startswith("| 3:")]
    assert "| `doi:10.5555/a\\|b`<br>`` doi:10.5555/`\\|` `` |" in row
    assert len(re.findall(r"(?<!\\)\|", row)) == 8  # the seven cells' borders only
