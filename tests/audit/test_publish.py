"""The publishing policy on every surface that publishes a passage: the standalone HTML
report, the site's report page and JSON, the MCP App view — on an open-licence record, a
public-domain record and an unknown-licence record whose passage is longer than the bound."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.citations import parse_answer
from audit.corpus import InMemoryCorpus
from audit.engine import audit_answer
from audit.publish import (
    EXCERPT_CHARS,
    excerpt_bounds,
    licences_of,
    published_report,
    shows_full,
    source_url,
    with_licences,
)
from audit.render_html import render_report_html, report_view
from audit.report import Report
from tests.audit.planted import KEYRING, h

FILLER = "Invented context sentence number {} about zentravir and Farrow syndrome. "
QUOTE = "312 invented children were diagnosed with Farrow syndrome"
OPEN_TEXT = "".join(FILLER.format(n) for n in range(8)) + "The open-licence passage ends here."
PD_TEXT = "".join(FILLER.format(n) for n in range(8, 16)) + "The public-domain passage ends."
CLOSED_TEXT = (
    "".join(FILLER.format(n) for n in range(16, 24))
    + f"During follow-up, {QUOTE}. "
    + "".join(FILLER.format(n) for n in range(24, 32))
    + "The unknown-licence passage ends here."
)
assert min(len(OPEN_TEXT), len(PD_TEXT), len(CLOSED_TEXT)) > 2 * EXCERPT_CHARS


def _corpus() -> InMemoryCorpus:
    corpus = InMemoryCorpus(
        sources={"pubmed": "ok", "europepmc": "ok", "clinicaltrials": "ok"}, name="policy"
    )
    corpus.add_record(
        "pmcid:PMC99000011", "europepmc", {"1": {"body.main.p1": OPEN_TEXT}}, licence="CC-BY-4.0"
    )
    corpus.add_record(
        "nct:NCT99000011",
        "clinicaltrials",
        {"2025-01-15": {"trial.brief_summary.1": PD_TEXT}},
        licence="public-domain",
    )
    corpus.add_record("pmid:99000011", "pubmed", {"1": {"abstract.1": CLOSED_TEXT}})
    return corpus


def policy_report() -> Report:
    answer = (
        f"Open [{h('pmcid:PMC99000011/body.main.p1')}].\n\n"
        f"Registry [{h('nct:NCT99000011@2025-01-15/trial.brief_summary.1')}].\n\n"
        f'Closed [{h("pmid:99000011/abstract.1")} "{QUOTE}"].\n'
    )
    return audit_answer(parse_answer(answer), _corpus(), KEYRING, source_label="answer.md")


def blockquotes(page: str) -> list[str]:
    """The text of every passage shown on a page (tags removed)."""
    found = re.findall(r"<blockquote><p>(.*?)</p></blockquote>", page, re.S)
    return [re.sub(r"<[^>]+>", "", text) for text in found]


def _check_policy_page(page: str) -> None:
    shown = blockquotes(page)
    assert OPEN_TEXT in shown  # CC-BY-4.0: in full
    assert PD_TEXT in shown  # public domain: in full
    assert CLOSED_TEXT not in shown and not any("The unknown-licence passage" in t for t in shown)
    (excerpt,) = [t for t in shown if QUOTE in t]
    body = excerpt.removeprefix("[…] ").removesuffix(" […]")
    assert body in CLOSED_TEXT and len(body) <= EXCERPT_CHARS
    assert excerpt.startswith("[…] ") and excerpt.endswith(" […]")
    start = CLOSED_TEXT.index(body) + 1
    assert (
        f"excerpt: characters {start}–{start + len(body) - 1} of {len(CLOSED_TEXT):,} "
        "(the record&#39;s licence is unknown); "
        '<a rel="external" href="https://pubmed.ncbi.nlm.nih.gov/99000011/">'
        "read the whole passage at its source</a>."
    ) in page
    assert page.count("excerpt: ") == 1


def test_the_html_report_shows_open_and_public_domain_text_whole_else_an_excerpt() -> None:
    page = render_report_html(policy_report())
    _check_policy_page(page)
    assert "licence CC-BY-4.0" in page and "licence public-domain" in page
    assert "licence unknown" in page


def test_a_page_built_with_excerpt_shows_every_passage_as_an_excerpt() -> None:
    page = render_report_html(policy_report(), publish="excerpt")
    assert all(
        len(t.removeprefix("[…] ").removesuffix(" […]")) <= EXCERPT_CHARS for t in blockquotes(page)
    )
    assert page.count("(this page shows excerpts only)") == 3


def test_a_page_built_with_full_shows_every_passage_whole() -> None:
    page = render_report_html(policy_report(), publish="full")
    assert {OPEN_TEXT, PD_TEXT, CLOSED_TEXT} <= set(blockquotes(page))
    assert "excerpt: " not in page


def test_the_page_says_what_it_shows_of_the_passages() -> None:
    assert report_view(policy_report()).publish_note.startswith(
        "in full where the cited record's licence allows anyone to republish it"
    )
    assert report_view(policy_report(), publish="full").publish_note == (
        "in full, whatever their licence (this page was built with --publish full)"
    )


def test_the_published_json_leaves_out_the_passages_shown_as_excerpts() -> None:
    report = policy_report()
    published = published_report(report, "policy")
    passages = {c.record_id: c.passage for s in published.sentences for c in s.citations}
    assert (
        passages["pmcid:PMC99000011"] is not None
        and passages["pmcid:PMC99000011"].text == OPEN_TEXT
    )
    assert passages["nct:NCT99000011"] is not None and passages["nct:NCT99000011"].text == PD_TEXT
    assert passages["pmid:99000011"] is None
    assert CLOSED_TEXT not in published.model_dump_json()
    assert published.sentences[2].citations[0].quote == QUOTE  # a re-audit still has the quote
    assert published_report(report, "full") == report


def test_a_site_takes_licences_from_the_snapshot_never_from_the_report_file(
    tmp_path: Path,
) -> None:
    """The report claims CC BY and public domain for two records; no snapshot of it is there
    to say so, so the site publishes every passage as an excerpt (a hand-edited report cannot
    buy full text); ``--publish full`` still shows everything."""
    from pipeline.site.build import build_site
    from tests.conftest import TRUST

    reports, snapshots, out = tmp_path / "reports", tmp_path / "snapshots", tmp_path / "public"
    reports.mkdir()
    snapshots.mkdir()
    (reports / "answer.json").write_text(policy_report().model_dump_json(), encoding="utf-8")
    build_site(reports, snapshots, out, env={"SOURCE_DATE_EPOCH": "1750000000"}, trust=TRUST)
    (page,) = (out / "reports").glob("*.html")
    html = page.read_text(encoding="utf-8")
    shown = blockquotes(html)
    assert OPEN_TEXT not in shown and PD_TEXT not in shown and CLOSED_TEXT not in shown
    assert "licence CC-BY-4.0" not in html and "licence public-domain" not in html
    assert html.count("(the record&#39;s licence is unknown)") == 3
    (document,) = (out / "reports").glob("*.json")
    published = document.read_text(encoding="utf-8")
    assert OPEN_TEXT not in published and CLOSED_TEXT not in published
    build_site(
        reports,
        snapshots,
        out,
        env={"SOURCE_DATE_EPOCH": "1750000000"},
        trust=TRUST,
        publish="full",
    )
    assert CLOSED_TEXT in blockquotes(page.read_text(encoding="utf-8"))
    assert CLOSED_TEXT in document.read_text(encoding="utf-8")


def test_the_snapshots_licences_replace_what_a_report_claims() -> None:
    report = policy_report()
    claimed = licences_of(report)
    assert set(claimed.values()) >= {"CC-BY-4.0", "public-domain"}
    first = next(iter(claimed))
    trusted = with_licences(report, {first: "public-domain"})
    assert licences_of(trusted) == {
        r: "public-domain" if r == first else "unknown" for r in claimed
    }
    assert with_licences(report, claimed) == report


def test_the_mcp_app_view_follows_the_policy() -> None:
    from mcp.types import CallToolResult, TextContent

    from pipeline.serve.app import VIEW_META_KEY, with_view

    report = policy_report()
    result = CallToolResult(
        content=[TextContent(type="text", text="audit")],
        structured_content=report.model_dump(mode="json"),
    )
    _check_policy_page(with_view(result, True).meta[VIEW_META_KEY]["html"])  # type: ignore[index]


def test_an_old_report_without_licences_shows_only_excerpts() -> None:
    document = policy_report().model_dump(mode="json")
    for sentence in document["sentences"]:
        for citation in sentence["citations"]:
            citation["record"].pop("licence")
    page = render_report_html(Report.model_validate(document))
    assert page.count("(the record&#39;s licence is unknown)") == 3


@pytest.mark.parametrize(
    ("record_id", "url"),
    [
        ("pmid:99000011", "https://pubmed.ncbi.nlm.nih.gov/99000011/"),
        ("pmcid:PMC99000011", "https://pmc.ncbi.nlm.nih.gov/articles/PMC99000011/"),
        ("ppr:PPR99011", "https://europepmc.org/article/PPR/PPR99011"),
        ("nct:NCT99000011", "https://clinicaltrials.gov/study/NCT99000011"),
        (
            "setid:5eed0001-0000-4000-8000-000000000001",
            "https://dailymed.nlm.nih.gov/dailymed/lookup.cfm?setid=5eed0001-0000-4000-8000-000000000001",
        ),
        ("doi:10.5555/demo.0001", "https://doi.org/10.5555/demo.0001"),
        ("local:notes/a.pdf", None),
        ("pmid:", None),
    ],
)
def test_an_excerpt_links_the_record_at_its_source(record_id: str, url: str | None) -> None:
    assert source_url(record_id) == url


@pytest.mark.parametrize(
    ("mode", "licence", "full"),
    [
        ("policy", "CC-BY-4.0", True),
        ("policy", "public-domain", True),
        ("policy", "CC-BY-NC-4.0", False),
        ("policy", "unknown", False),
        ("policy", None, False),
        ("excerpt", "CC0-1.0", False),
        ("full", "unknown", True),
    ],
)
def test_the_mode_and_the_licence_decide_whether_a_passage_is_shown_whole(
    mode: str, licence: str | None, full: bool
) -> None:
    assert shows_full(mode, licence) is full  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet="ab ", min_size=0, max_size=900),
    st.integers(min_value=0, max_value=900),
    st.integers(min_value=1, max_value=400),
)
def test_an_excerpt_is_bounded_and_holds_the_span_that_fits(text: str, at: int, size: int) -> None:
    focus = (at, at + size) if at + size <= len(text) else None
    start, end = excerpt_bounds(len(text), focus, text)
    assert 0 <= start <= end <= len(text)
    assert end - start <= EXCERPT_CHARS
    if len(text) <= EXCERPT_CHARS:
        assert (start, end) == (0, len(text))
    elif focus is not None and size <= EXCERPT_CHARS:
        assert start <= focus[0] and focus[1] <= end
    elif focus is not None:
        assert start == focus[0]


def test_an_excerpt_page_withholds_the_word_diff_of_a_changed_passage() -> None:
    corpus = InMemoryCorpus(sources={"pubmed": "ok"})
    changed = CLOSED_TEXT.replace("ends here", "now ends there")
    corpus.add_record(
        "pmid:99000012", "pubmed", {"1": {"abstract.1": CLOSED_TEXT}, "2": {"abstract.1": changed}}
    )
    answer = parse_answer(f'Closed [{h("pmid:99000012@1/abstract.1")} "{QUOTE}"].\n')
    report = audit_answer(answer, corpus, KEYRING)
    page = render_report_html(report)
    assert "<ins>" not in page and "<del>" not in page
    assert "the change is not shown word by word" in page
    assert all(
        len(t.removeprefix("[…] ").removesuffix(" […]")) <= EXCERPT_CHARS for t in blockquotes(page)
    )
    assert "<ins>" in render_report_html(report, publish="full")


@pytest.mark.parametrize(("issued", "current"), [(300, 300), (301, 290), (290, 301)])
def test_an_excerpt_page_diffs_only_texts_its_excerpts_show_whole(
    issued: int, current: int
) -> None:
    corpus = InMemoryCorpus(sources={"pubmed": "ok"})
    first, second = ("Start " + "a" * (n - 12) + " end.".rjust(6) for n in (issued, current))
    second = second.replace("Start", "Begin")
    assert (len(first), len(second)) == (issued, current)
    corpus.add_record(
        "pmid:99000012", "pubmed", {"1": {"abstract.1": first}, "2": {"abstract.1": second}}
    )
    answer = parse_answer(f'Closed [{h("pmid:99000012@1/abstract.1")} "Start"].\n')
    page = render_report_html(audit_answer(answer, corpus, KEYRING))
    shown = max(issued, current) <= EXCERPT_CHARS
    assert ("<del>Start</del><ins>Begin</ins>" in page) is shown
    assert ("the change is not shown word by word" in page) is not shown
