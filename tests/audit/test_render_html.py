"""The report page and the standalone page's strict policy (segments: test_segments.py)."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import pytest

from audit.citations import parse_answer
from audit.engine import audit_answer
from audit.render_html import TemplatesMissingError, make_environment, render_report_html
from audit.support.model import EvidenceSpan, SupportResult
from audit.support.run import with_support
from pipeline.bench.bench_site import make_report
from tests.audit.planted import KEYRING, h, make_corpus, stale_corpus


def test_standalone_page_inlines_the_stylesheet_allowed_by_its_hash() -> None:
    html = render_report_html(make_report(3), publish="full")
    css = re.search(r"<style>(.*?)</style>", html, re.S)
    assert css is not None
    digest = base64.b64encode(hashlib.sha256(css.group(1).encode()).digest()).decode()
    assert (
        '<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; '
        f"style-src &#39;sha256-{digest}&#39;; img-src &#39;self&#39;; base-uri &#39;none&#39;; "
        'form-action &#39;none&#39;">'
    ) in html
    assert "<script" not in html and "<link" not in html
    assert 'id="s5c2"' in html and "<del>240</del><ins>236</ins>" in html
    assert "Demo key." in html


def test_missing_templates_are_named(tmp_path: Path) -> None:
    with pytest.raises(TemplatesMissingError) as caught:
        make_environment(tmp_path)
    assert caught.value.message == f"site templates not found in {tmp_path}"


def test_the_page_shows_a_citation_of_a_record_the_snapshot_did_not_refresh() -> None:
    corpus = stale_corpus({"pmid:99000001": "planted-0"}, crossref="partial")
    answer = parse_answer(f"Risk was low [{h('pmid:99000001/abstract.3')}].\n")
    report = audit_answer(answer, corpus, KEYRING, source_label="answer.md")
    html = render_report_html(report)
    assert (
        '<li class="flag flag-not_refreshed"><span class="flag-name">not refreshed</span>: '
        "this snapshot&#39;s harvest could not refresh the record; it is as snapshot planted-0 "
        "had it</li>"
    ) in html
    assert "<li>warn: 1 citation of a record this snapshot did not refresh</li>" in html
    assert "<strong>Warning:</strong> partial snapshot (crossref partial)" in html


class _ScriptJudge:
    name = "<b>judge</b>"
    version = "1"

    def judge(self, claim: str, evidence: object) -> SupportResult:
        return SupportResult(
            label="contradicted",
            reason="<script>alert(1)</script> says otherwise",
            evidence=EvidenceSpan(start=19, end=36, text="does not increase"),
            judge=self.name,
            judge_version=self.version,
        )


def test_support_is_shown_escaped_with_the_evidence_span_marked() -> None:
    corpus = make_corpus()
    answer = f"Zentravir raises the risk [{h('pmid:99000001/abstract.4')}]."
    plain = audit_answer(parse_answer(answer), corpus, KEYRING)
    page = render_report_html(with_support(plain, corpus, _ScriptJudge()))
    assert "<script>alert" not in page and "<b>judge" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; says otherwise" in page
    assert "(judge &lt;b&gt;judge&lt;/b&gt; 1)" in page
    assert "contradicted: the passage says otherwise" in page
    assert "Zentravir exposure <mark>does not increase</mark> the risk of Farrow syndrome." in page
    assert "characters 19–36 of the passage as issued highlighted" in page
    assert "support-not_checked" not in page


NOT_CHECKED_HTML = (
    '<section class="support support-not_checked" aria-label="Claim support">\n'
    '<p class="support-head">Claim support: <span class="badge badge-not_checked">not_checked'
    '</span> <span class="support-reason">not judged: this audit ran without claim support, so '
    "ok means the handle, passage and quote hold, not that the passage supports the sentence."
    "</span></p>\n</section>"
)


def test_without_support_every_ok_citation_says_not_checked_and_no_other_does() -> None:
    corpus = make_corpus()
    answer = (
        f"Zentravir raises the risk [{h('pmid:99000001/abstract.4')}]. "
        f"It is safe [{h('pmid:99000001/abstract.3')}; {h('pmid:99000001/abstract.9')}]."
    )
    page = render_report_html(audit_answer(parse_answer(answer), corpus, KEYRING))
    assert page.count(NOT_CHECKED_HTML) == 2  # the two ok citations, not the withdrawn one
    assert page.count('aria-label="Claim support"') == 2


def test_an_incomplete_report_has_its_own_badge() -> None:
    corpus = make_corpus(openfda="failed")
    label = h("setid:5eed0001-0000-4000-8000-000000000999@4/label.boxed_warning.1")
    answer = f"Zentravir is safe [{h('pmid:99000001/abstract.3')}]. Labels agree [{label}]."
    report = audit_answer(parse_answer(answer), corpus, KEYRING)
    page = render_report_html(report)
    assert report.verdict == "incomplete"
    assert '<span class="badge badge-incomplete">INCOMPLETE</span>' in page
    assert "<li>incomplete: 1 unavailable citation</li>" in page
    assert ".badge-incomplete {" in page  # the inlined stylesheet styles it
