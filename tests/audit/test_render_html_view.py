"""The report page's view and environment in detail: which passage is marked, what an excerpt
page shows of the claim-support evidence, the record line, counts and the page's facts, and
the environment's template settings (whole pages: test_render_golden.py)."""

from __future__ import annotations

import re
from pathlib import Path

import jinja2
import pytest

import audit.render_html as render_html
from audit.citations import parse_answer
from audit.corpus import InMemoryCorpus
from audit.engine import audit_answer
from audit.render_html import (
    MISSING_ADVICE,
    TemplatesMissingError,
    make_environment,
    render_report_html,
    report_view,
    stylesheet_text,
)
from audit.report import CitationResult, Report
from audit.support.model import EvidenceSpan, SupportResult
from audit.support.run import with_support
from tests.audit.planted import KEYRING, h, make_corpus

FILLER = "Context sentence number {} about zentravir and Farrow syndrome. "
EVIDENCE = "zentravir exposure does not increase the risk of Farrow syndrome"
LONG = (
    "".join(FILLER.format(n) for n in range(5))
    + f"In the cohort, {EVIDENCE}. "
    + "".join(FILLER.format(n) for n in range(5, 10))
)


def _corpus() -> InMemoryCorpus:
    corpus = make_corpus()
    corpus.add_record("pmid:99000031", "pubmed", {"1": {"abstract.1": LONG}})
    corpus.add_record(
        "pmid:99000032",
        "pubmed",
        {"1": {"abstract.1": "Same words in both."}, "2": {"abstract.1": "Same words in both."}},
    )
    corpus.add_record("pmid:99000033", "pubmed", {"1": {"abstract.1": "a" + "b" * 296 + "cdef"}})
    corpus.add_record(
        "nct:NCT99000034",
        "clinicaltrials",
        {"2024-01-01": {"trial.brief_summary.1": "A trial summary."}},
        status="WITHDRAWN",
        journal="",
        doi="",
    )
    return corpus


def audited(answer: str) -> Report:
    return audit_answer(parse_answer(answer), _corpus(), KEYRING, source_label="answer.md")


def only_citation(report: Report) -> CitationResult:
    (citation,) = report.citations()
    return citation


def with_citation(report: Report, **update: object) -> Report:
    """``report`` (one citation) with that citation's fields replaced, as a report file could
    state them."""
    (sentence,) = report.sentences
    citation = sentence.citations[0].model_copy(update=update)
    return report.model_copy(
        update={"sentences": [sentence.model_copy(update={"citations": [citation]})]}
    )


def blocks(page: str) -> list[tuple[str, str]]:
    """(heading, shown text with its marks) of every passage figure on a page."""
    found = re.findall(
        r'<span class="passage-heading">([^<]*)</span>.*?<blockquote><p>(.*?)</p></blockquote>',
        page,
        re.S,
    )
    return [(heading, text) for heading, text in found]


# --- which passage is marked -------------------------------------------------------------------


def test_a_misquote_closest_to_the_current_version_is_marked_there_only() -> None:
    report = audited(f'Now [{h("pmid:99000020@1/abstract.1")} "Version two says 42 patients"].\n')
    citation = only_citation(report)
    assert (citation.verdict, citation.closest_match) == (
        "quote_mismatch",
        "Version two says 41 patients.",
    )
    page = render_report_html(report, publish="full")
    assert blocks(page) == [
        ("As issued", "Version one says 40 patients."),
        ("As it is now", "<mark>Version two says 41 patients.</mark>"),
        (
            "What changed since the handle was issued",
            "Version <del>one</del><ins>two</ins> says <del>40</del><ins>41</ins> patients.",
        ),
    ]
    assert page.count("— closest match to the quote highlighted") == 1


def test_the_quote_is_marked_where_the_report_says_it_was_found() -> None:
    report = audited(f'Now [{h("pmid:99000020@1/abstract.1")} "says"].\n')
    assert only_citation(report).checked_against == "issued"
    issued = blocks(render_report_html(report, publish="full"))
    assert issued[:2] == [
        ("As issued", "Version one <mark>says</mark> 40 patients."),
        ("As it is now", "Version two says 41 patients."),
    ]
    current = render_report_html(with_citation(report, checked_against="current"), publish="full")
    assert blocks(current)[:2] == [
        ("As issued", "Version one says 40 patients."),
        ("As it is now", "Version two <mark>says</mark> 41 patients."),
    ]
    assert "(found in the text as it is now)" in current


def test_a_current_version_with_the_same_words_is_not_shown_again() -> None:
    report = audited(f"Same [{h('pmid:99000032@1/abstract.1')}].\n")
    citation = only_citation(report)
    assert citation.current_passage is not None and citation.passage is not None
    assert citation.current_passage.text == citation.passage.text
    page = render_report_html(report, publish="full")
    assert blocks(page) == [("As issued", "Same words in both.")]


def test_an_ok_citation_marks_its_quote_even_when_a_report_file_names_a_closest_match() -> None:
    report = audited(f'Low [{h("pmid:99000001/abstract.4")} "does not increase"].\n')
    page = render_report_html(with_citation(report, closest_match="Zentravir"), publish="full")
    shown = "Zentravir exposure <mark>does not increase</mark> the risk of Farrow syndrome."
    assert blocks(page) == [("As issued", shown)]
    assert "— the quote highlighted" in page


def test_only_an_ok_citation_has_its_quote_marked() -> None:
    report = audited(f'Low [{h("pmid:99000001/abstract.4")} "does not increase"].\n')
    mismatch = with_citation(report, verdict="quote_mismatch", closest_match=None)
    page = render_report_html(mismatch, publish="full")
    assert blocks(page) == [
        ("As issued", "Zentravir exposure does not increase the risk of Farrow syndrome.")
    ]
    assert "highlighted" not in page


def test_an_excerpt_missing_only_the_first_character_says_it_is_cut() -> None:
    report = audited(f'Cut [{h("pmid:99000033/abstract.1")} "cdef"].\n')
    page = render_report_html(report)
    ((_, shown),) = blocks(page)
    assert shown == "[…] " + "b" * 296 + "<mark>cdef</mark>"
    assert "excerpt: characters 2–301 of 301 (the record&#39;s licence is unknown)" in page


# --- claim-support evidence --------------------------------------------------------------------


class _SpanJudge:
    """A judge that supports every claim with a fixed span (``text`` as it says)."""

    name = "span"
    version = "1"

    def __init__(self, start: int, end: int, text: str) -> None:
        self.span = EvidenceSpan(start=start, end=end, text=text)

    def judge(self, claim: str, evidence: object) -> SupportResult:
        return SupportResult(
            label="supported",
            reason="the passage says so",
            evidence=self.span,
            judge=self.name,
            judge_version=self.version,
        )


def _judged(judge: _SpanJudge) -> Report:
    corpus = _corpus()
    answer = f"It is safe [{h('pmid:99000031/abstract.1')}].\n"
    report = audit_answer(parse_answer(answer), corpus, KEYRING, source_label="answer.md")
    return with_support(report, corpus, judge)


def _evidence(page: str) -> str | None:
    found = re.search(r'<figure class="passage evidence">.*?<blockquote><p>(.*?)</p>', page, re.S)
    return None if found is None else found.group(1)


def test_an_excerpt_page_shows_the_evidence_within_an_excerpt_around_it() -> None:
    start = LONG.index(EVIDENCE)
    report = _judged(_SpanJudge(start, start + len(EVIDENCE), EVIDENCE))
    excerpt = _evidence(render_report_html(report))
    assert excerpt == (
        "[…] 3 about zentravir and Farrow syndrome. Context sentence number 4 about zentravir and "
        f"Farrow syndrome. In the cohort, <mark>{EVIDENCE}</mark>. Context sentence number 5 "
        "about zentravir and Farrow syndrome. Context sentence number 6 about zentravir and Farrow"
        " […]"
    )  # characters 214–511 of 711: the 300 around the evidence, cut inward to spaces
    assert excerpt is not None
    shown = excerpt.removeprefix("[…] ").removesuffix(" […]")
    assert len(re.sub("<[^>]+>", "", shown)) <= 300
    whole = _evidence(render_report_html(report, publish="full"))
    assert whole == LONG.replace(EVIDENCE, f"<mark>{EVIDENCE}</mark>")


def test_evidence_whose_offsets_do_not_hold_its_text_is_not_shown() -> None:
    start = LONG.index(EVIDENCE)
    report = _judged(_SpanJudge(start + 1, start + 1 + len(EVIDENCE), EVIDENCE))
    page = render_report_html(report, publish="full")
    assert _evidence(page) is None
    span = f"{start + 1}–{start + 1 + len(EVIDENCE)}"
    support = report_view(report).sentences[0].citations[0].support
    assert support is not None and support.span == span
    assert "supported: the passage says so" in page


# --- the record line, counts, facts ------------------------------------------------------------


def test_the_record_line_names_the_status_and_leaves_out_empty_fields() -> None:
    report = audited(f"Trial [{h('nct:NCT99000034@2024-01-01/trial.brief_summary.1')}].\n")
    record = report_view(report).sentences[0].citations[0].record
    assert record is not None
    assert record.details == (
        "source clinicaltrials",
        "current version 2024-01-01",
        "status WITHDRAWN",
        "licence unknown",
        "retracted: unknown",
        "expression of concern: unknown",
        "preprint: unknown",
    )


def test_the_summary_counts_one_citation_and_none() -> None:
    one = audited(f"Low [{h('pmid:99000001/abstract.4')}].\n")
    assert report_view(one).summary == "1 citation: 1 ok"
    none = audited("Nothing cited here.\n")
    view = report_view(none)
    assert view.summary == "0 citations"
    assert [(m.label, m.value) for m in view.metrics][-1] == ("valid citations", "0/0 (n/a)")
    two = audited(f"Low [{h('pmid:99000001/abstract.4')}; {h('pmid:99000001/abstract.9')}].\n")
    assert report_view(two).summary == "2 citations: 1 withdrawn, 1 ok"


def test_the_page_names_the_snapshot_its_id_and_its_page() -> None:
    report = audited("Nothing cited here.\n")
    snapshot = report.snapshot.model_copy(update={"snapshot_id": "snap-<1>"})
    named = report.model_copy(update={"snapshot": snapshot})
    view = report_view(named, snapshot_href="../snapshots/memory.html")
    assert (view.source, view.snapshot_id, view.snapshot_href) == (
        "answer.md",
        "snap-<1>",
        "../snapshots/memory.html",
    )
    env = make_environment()
    page = render_html.render_report_page(
        env, view, render_html.Chrome(title=view.title), reaudit=None, json_href=None
    )
    assert (
        '<dt>Snapshot</dt><dd><a href="../snapshots/memory.html">memory</a> '
        "<code>snap-&lt;1&gt;</code></dd>"
    ) in page


# --- environment and assets --------------------------------------------------------------------


def test_the_environment_escapes_refuses_undefined_names_and_trims_block_lines(
    tmp_path: Path,
) -> None:
    (tmp_path / "base.html.j2").write_text("base", encoding="utf-8")
    (tmp_path / "page.j2").write_text(
        "<ul>\n  {% for x in items %}\n<li>{{ x }}</li>\n  {% endfor %}\n</ul>\n",
        encoding="utf-8",
    )
    (tmp_path / "typo.j2").write_text("{{ itmes }}", encoding="utf-8")
    env = make_environment(tmp_path)
    page = env.get_template("page.j2").render(items=["<b>", "&"])
    assert page == "<ul>\n<li>&lt;b&gt;</li>\n<li>&amp;</li>\n</ul>\n"
    with pytest.raises(jinja2.UndefinedError):
        env.get_template("typo.j2").render(items=[])


def test_bidi_controls_and_invisible_characters_are_shown_as_escapes(tmp_path: Path) -> None:
    (tmp_path / "base.html.j2").write_text("base", encoding="utf-8")
    (tmp_path / "page.j2").write_text('<p title="{{ x }}">{{ x }}</p>{{ n }}', encoding="utf-8")
    page = (
        make_environment(tmp_path)
        .get_template("page.j2")
        .render(x="ok \u202egnp.exe\u200b\x1b[2J é\t中\n<i>", n=3)
    )
    shown = "ok \\u202egnp.exe\\u200b\\u001b[2J é\t中\n&lt;i&gt;"
    assert page == f'<p title="{shown}">{shown}</p>3'


def test_a_report_page_never_passes_a_bidi_override_of_the_answer_to_the_browser() -> None:
    # U+202E would draw "nevig" as "given": the reader must see the character, not its effect
    report = audited(f'Dose \u202enevig [{h("pmid:99000032@1/abstract.1")} "Same\u2066 words"].\n')
    page = render_report_html(report, publish="full")
    assert not any(char in page for char in "\u202e\u2066")
    assert "Dose \\u202enevig" in page
    assert "Same\\u2066 words" in page


def test_missing_templates_and_stylesheet_say_how_to_repair_the_install(tmp_path: Path) -> None:
    with pytest.raises(TemplatesMissingError) as templates:
        make_environment(tmp_path)
    assert templates.value.advice == MISSING_ADVICE
    with pytest.raises(TemplatesMissingError) as stylesheet:
        stylesheet_text(tmp_path)
    assert (stylesheet.value.message, stylesheet.value.advice) == (
        f"site stylesheet not found: {tmp_path / 'site.css'}",
        MISSING_ADVICE,
    )


def test_a_stylesheet_that_could_close_the_style_element_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "site.css").write_text("p { color: red }\n", encoding="utf-8")
    monkeypatch.setattr(render_html, "STATIC_DIR", tmp_path)
    report = audited("Nothing cited here.\n")
    assert "<style>p { color: red }\n</style>" in render_report_html(report)
    (tmp_path / "site.css").write_text("p { color: red }</style><script>x</script>", "utf-8")
    with pytest.raises(TemplatesMissingError) as caught:
        render_report_html(report)
    assert caught.value.message == f"{tmp_path / 'site.css'} cannot be inlined (contains '</')"
