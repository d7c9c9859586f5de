"""audit.publish's rules in exact values: where an excerpt starts and ends, the bound of a cut
text, the link to a record's source page and what a published report leaves out (the policy
on every surface: test_publish.py)."""

from __future__ import annotations

import pytest

from audit.citations import parse_answer
from audit.engine import audit_answer
from audit.publish import (
    EXCERPT_CHARS,
    bounded,
    excerpt_bounds,
    focus,
    published_report,
    source_url,
)
from audit.report import PassageView, Report
from audit.segments import Segment
from audit.support.model import EvidenceSpan, SupportResult
from tests.audit.planted import KEYRING, OTHER, h, make_corpus

# --- excerpt_bounds ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("length", "span", "text", "bounds"),
    [
        (300, (10, 20), "", (0, 300)),  # a passage of exactly the bound: whole
        (1000, (10, 20), "", (0, 300)),  # a span near the start: from the start
        (1000, (500, 510), "", (355, 655)),  # the spare 290 split evenly around the span
        (1000, (800, 800), "", (0, 300)),  # an empty span is no span: the beginning
        (1000, (990, 1000), "", (700, 1000)),  # a span at the end: the last 300
        (1000, (100, 600), "", (100, 400)),  # a span longer than the bound: its first 300
    ],
)
def test_an_excerpt_holds_the_span_with_the_context_that_fits(
    length: int, span: tuple[int, int], text: str, bounds: tuple[int, int]
) -> None:
    assert excerpt_bounds(length, span, text) == bounds
    assert excerpt_bounds(length, span) == bounds  # without the text: no word to keep whole


def test_an_excerpt_cut_inside_a_word_moves_inward_to_a_space_but_never_into_the_span() -> None:
    # the start: a space after the cut and before the span
    assert excerpt_bounds(1000, (146, 156), "ab " + "c" * 997) == (3, 301)
    # no space between the cut and the span: the cut stays, even with a space inside the span
    text = "x" * 500 + "yyyyy yyyy" + "z" * 490
    assert excerpt_bounds(1000, (500, 510), text) == (355, 655)
    # the end: the last space before the cut
    assert excerpt_bounds(402, None, "a " + "b" * 400) == (0, 1)
    # a space only at the excerpt's start is no place to end it
    assert excerpt_bounds(501, None, " " + "b" * 500) == (0, EXCERPT_CHARS)


@pytest.mark.parametrize("blank", ["\n", "\t", "\u00a0", "\u2009", "\u3000"])
def test_an_excerpt_is_cut_at_any_blank_not_only_a_space(blank: str) -> None:
    assert excerpt_bounds(1000, (146, 156), "ab" + blank + "c" * 997) == (3, 301)
    assert excerpt_bounds(402, None, "a" + blank + "b" * 400) == (0, 1)
    assert excerpt_bounds(402, None, "a" + "b" * 401) == (0, EXCERPT_CHARS)  # no blank: no move


def test_the_focus_is_the_offset_of_the_first_mark() -> None:
    parts = [Segment("same", "abc"), Segment("same", "de"), Segment("mark", "f")]
    assert focus(parts) == (5, 6)
    assert focus([*parts, Segment("mark", "gh")]) == (5, 6)
    assert focus(parts[:2]) is None


def test_a_cut_text_is_bounded_with_an_ellipsis() -> None:
    assert bounded("x" * EXCERPT_CHARS) == "x" * EXCERPT_CHARS
    assert bounded("x" * (EXCERPT_CHARS + 1)) == "x" * (EXCERPT_CHARS - 1) + "…"
    assert bounded(None) is None


# --- source_url ----------------------------------------------------------------------------------


def test_a_source_link_keeps_the_record_id_inside_its_sites_path() -> None:
    assert source_url("pmid:../../x?y") == "https://pubmed.ncbi.nlm.nih.gov/..%2F..%2Fx%3Fy/"
    assert source_url("nct:NCT1/../2") == "https://clinicaltrials.gov/study/NCT1%2F..%2F2"
    assert source_url("doi:10.5555/a:b?c") == "https://doi.org/10.5555/a%3Ab%3Fc"


# --- published_report ----------------------------------------------------------------------------

LONG_TEXT = "y" * (EXCERPT_CHARS + 20)


def _report() -> Report:
    """One closed-licence citation (abstract.3 of the planted cohort) and a forged one."""
    answer = (
        f"Zentravir is safe [{h('pmid:99000001/abstract.3')}]. "
        f"Forged [{h('pmid:99000001/abstract.3', OTHER)}].\n"
    )
    return audit_answer(parse_answer(answer), make_corpus(), KEYRING)


def _with(report: Report, **update: object) -> Report:
    first, second = report.sentences
    citation = first.citations[0].model_copy(update=update)
    cited = first.model_copy(update={"citations": [citation]})
    return report.model_copy(update={"sentences": [cited, second]})


def _support(text: str) -> SupportResult:
    return SupportResult(
        label="supported",
        reason="says so",
        evidence=EvidenceSpan(start=0, end=len(text), text=text),
        judge="j",
        judge_version="1",
    )


def test_a_published_excerpt_citation_leaves_out_both_passages_and_cuts_long_texts() -> None:
    report = _report()
    issued = report.sentences[0].citations[0].passage
    assert issued is not None
    current = PassageView(**{**issued.model_dump(), "version": "2", "text": "changed"})
    full = _with(
        report,
        current_passage=current,
        closest_match=LONG_TEXT,
        support=_support(LONG_TEXT),
    )
    published = published_report(full, "policy")
    cited, forged = (s.citations[0] for s in published.sentences)
    assert (cited.passage, cited.current_passage) == (None, None)
    assert cited.closest_match == bounded(LONG_TEXT)
    assert cited.support is not None and cited.support.evidence is not None
    assert cited.support.evidence.text == bounded(LONG_TEXT)
    assert cited.support.evidence.start == 0  # the offsets still say where it was
    assert (cited.support.label, cited.support.reason) == ("supported", "says so")
    assert forged == full.sentences[1].citations[0]  # no record, nothing to withhold
    assert published_report(full, "full") == full


def test_evidence_within_the_bound_is_published_whole() -> None:
    text = "z" * EXCERPT_CHARS
    published = published_report(_with(_report(), support=_support(text)), "excerpt")
    support = published.sentences[0].citations[0].support
    assert support is not None and support.evidence is not None
    assert support.evidence.text == text
    without = _support(text).model_copy(update={"evidence": None})
    published = published_report(_with(_report(), support=without), "excerpt")
    assert published.sentences[0].citations[0].support == without
