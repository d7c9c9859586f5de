"""audit.references.render_md and render_html: tables per tier, hostile text kept inert."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from audit.references import extract_bytes
from audit.references.check import SnapshotRef, check_document, make_report
from audit.references.render_html import render_check_html
from audit.references.render_md import render_markdown
from audit.references.resolve import SnapshotResolver
from audit.render_html import inline_style_csp, stylesheet_text
from tests.audit.fixture_scope import per_module
from tests.audit.references.works import COHORT, WORKS, write_works

SCRIPT = "<script>alert(1)</script>"
BREAK = '" onmouseover="alert(2)'
HOSTILE_RECORD = {
    **COHORT,
    "record_id": "pmid:99100009",
    "doi": "10.5555/ref.hostile",
    "pmid": "99100009",
    "pmcid": None,
    "title": f"Hostile {SCRIPT} record{BREAK} | pipe",
    "authors": [f"Evil {SCRIPT}"],
}
PAGE_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "a",
    "header",
    "p",
    "main",
    "h1",
    "h2",
    "h3",
    "small",
    "dl",
    "dt",
    "dd",
    "code",
    "section",
    "span",
    "div",
    "table",
    "caption",
    "thead",
    "tr",
    "th",
    "tbody",
    "td",
    "cite",
    "br",
    "footer",
}
"""The elements of a check page: our templates' own, nothing else."""
HOSTILE_DOCUMENT = (
    "# Notes\n\nSee [the paper](javascript:alert(3)) and <img src=x onerror=alert(4)>.\n\n"
    "## References\n\n"
    f"1. Evil A{BREAK}. A title {SCRIPT} | with a pipe. J Synth Med. 2020. "
    "doi:10.5555/ref.hostile\n"
    "2. Nobody N. [Click](javascript:alert(5)) <b>bold</b> `tick` | x. 2020. PMID: 99100777\n"
).encode()


@pytest.fixture(scope=per_module)
def hostile_report(tmp_path_factory: pytest.TempPathFactory):
    works = write_works(
        tmp_path_factory.mktemp("hostile") / "works.duckdb", (*WORKS, HOSTILE_RECORD)
    )
    resolver = SnapshotResolver.open(works)
    try:
        checked = check_document(extract_bytes(HOSTILE_DOCUMENT, f"x{SCRIPT}.md"), resolver)
    finally:
        resolver.close()
    ref = SnapshotRef(name=f"works{SCRIPT}", sha256="0" * 64, snapshot_id=f"id{BREAK}")
    return make_report([checked], ref, "citeseal test")


class _Markup(HTMLParser):
    """Every tag and attribute of a page, as a browser would parse them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attributes: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes.extend(attrs)
        if ("http-equiv", "Content-Security-Policy") in attrs:
            self.csp = dict(attrs)["content"]


def test_the_html_page_escapes_every_hostile_string(hostile_report) -> None:
    page = render_check_html(hostile_report)
    parsed = _Markup()
    parsed.feed(page)
    assert parsed.tags <= PAGE_TAGS  # no script, img or b from the document or the record
    names = {name for name, _ in parsed.attributes}
    assert names == {
        "charset",
        "class",
        "content",
        "href",
        "http-equiv",
        "id",
        "lang",
        "name",
        "scope",
        "tabindex",
    }
    assert [v for n, v in parsed.attributes if n == "href"] == ["#main"]  # no document link
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # shown, as text


def test_the_html_page_has_the_sites_csp_allowing_only_its_inlined_stylesheet(
    hostile_report,
) -> None:
    parsed = _Markup()
    parsed.feed(render_check_html(hostile_report))
    csp = inline_style_csp(stylesheet_text())
    assert parsed.csp == csp
    assert csp.startswith("default-src 'none'; style-src 'sha256-")


def test_the_markdown_report_keeps_every_row_one_row_of_seven_cells(hostile_report) -> None:
    text = render_markdown(hostile_report)
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    for row in rows:
        assert len(re.findall(r"(?<!\\)\|", row)) == 8, row  # every | inside a cell is escaped
    prose = re.sub(r"`[^`]*`", "", text)  # a code span shows its text as it is, inert
    assert "<script>" not in prose and "](javascript" not in prose and "<b>" not in prose
    assert r"\<script\>alert\(1\)\</script\>" in text


def test_the_markdown_report_has_a_table_per_tier_with_seen_vs_expected(hostile_report) -> None:
    text = render_markdown(hostile_report)
    headings = re.findall(r"^### (\S+) \((\d+)\)$", text, flags=re.M)
    assert headings == [("hallucinated", "1"), ("unresolved", "1")]
    row = next(line for line in text.splitlines() if "doi:10.5555/ref.hostile" in line)
    expected = (
        r"expected “Hostile \<script\>alert\(1\)\</script\> record"
        r'" onmouseover="alert\(2\) \| pipe”'
    )
    assert expected in row
