"""Text and Markdown reports: the compact shape, and untrusted text made inert."""

from __future__ import annotations

from audit.citations import parse_answer
from audit.engine import AnswerInput, CitationInput, SentenceInput, audit_answer
from audit.render_text import clean_text, md_code, md_text, render_markdown, render_text
from audit.report import Report
from audit.support.model import EvidenceSpan, SupportResult
from audit.support.run import with_support
from tests.audit.planted import KEYRING, h, make_corpus, stale_corpus

CORPUS = stale_corpus({"setid:5eed0001-0000-4000-8000-000000000001": "s-0"}, openfda="failed")
GOOD = h("pmid:99000001/abstract.3")
OLD_TRIAL = h("nct:NCT99000001@2025-01-15/trial.brief_summary.1")
LABEL = h("setid:5eed0001-0000-4000-8000-000000000001@4/label.boxed_warning.1")
OTHER_LABEL = h("setid:5eed0001-0000-4000-8000-000000000999@1/label.boxed_warning.1")


def report(*sentences: tuple[str, str, tuple[tuple[str, str | None], ...]]) -> Report:
    answer = AnswerInput(
        tuple(
            SentenceInput(i, text, kind, tuple(CitationInput.from_text(c, q) for c, q in citations))
            for i, (kind, text, citations) in enumerate(sentences, start=1)
        )
    )
    return audit_answer(answer, CORPUS, KEYRING, source_label="answer.md")


def test_text_lines_under_citations() -> None:
    text = render_text(
        report(
            ("heading", "Results", ()),
            ("sentence", "Mismatch.", ((GOOD, "312 adults were diagnosed"),)),
            ("sentence", "Gone.", ((h("pmid:99000001/abstract.9"), None),)),
            ("sentence", "Down.", ((LABEL, None),)),
            ("sentence", "Now only.", ((OLD_TRIAL, "10 mg daily"),)),
            ("sentence", "Elsewhere.", ((OTHER_LABEL, None),)),
        )
    )
    lines = text.splitlines()
    assert text.endswith("\n")
    assert lines[0] == (
        "verdict: INCOMPLETE  (5 citations: 1 unavailable, 1 withdrawn, 1 quote_mismatch, 2 ok)"
    )
    assert lines[3:] == [
        "warning: partial snapshot (openfda failed): records whose refresh failed are as an "
        "earlier snapshot of the lineage had them",
        "[1] heading: Results",
        "[2] invalid_only: Mismatch.",
        f'    quote_mismatch {GOOD} "312 adults were diagnosed"',
        '                   closest: "312 children were diagnosed" (0.7200)',
        "[3] invalid_only: Gone.",
        f"    withdrawn      {h('pmid:99000001/abstract.9')}",
        "                   no passage abstract.9 in pmid:99000001",
        "[4] cited: Down.",
        f"    ok             {LABEL} [not_refreshed]",
        "                   not refreshed: this snapshot's harvest could not refresh the record; "
        "it is as snapshot s-0 had it",
        "                   support: not_checked",
        "[5] cited: Now only.",
        f'    ok             {OLD_TRIAL} "10 mg daily" [version_changed]',
        "                   quote found in the current version only, not as issued",
        "                   support: not_checked",
        "[6] invalid_only: Elsewhere.",
        f"    unavailable    {OTHER_LABEL}",
        "                   the openfda harvest failed in this snapshot",
    ]


def test_identity_line_without_the_demo_key() -> None:
    data = report(("sentence", "A.", ((GOOD, None),))).model_dump()
    data["key"] = {"fingerprint": "abcdef012345", "demo": False}
    line = render_text(Report.model_validate(data)).splitlines()[2]
    assert line.endswith("key: abcdef012345")
    assert "DEMO" not in line


def test_no_citations() -> None:
    text = render_text(report(("sentence", "Nothing.", ())))
    assert text.splitlines()[0] == "verdict: WARN  (0 citations)"


def test_control_and_bidi_characters_are_shown_escaped() -> None:
    assert clean_text("red \x1b[31mX\x1b[0m\nnext\u202eevil") == (
        "red \\u001b[31mX\\u001b[0m next\\u202eevil"
    )
    text = render_text(report(("sentence", "Evil \x1b]0;title\x07 here.", ((GOOD, "a\x1bb"),))))
    assert "\x1b" not in text and "\x07" not in text
    assert "Evil \\u001b]0;title\\u0007 here." in text


def test_markdown_escapes_untrusted_text() -> None:
    assert md_text("*bold* [link](x) <b>") == "\\*bold\\* \\[link\\]\\(x\\) \\<b\\>"
    assert md_code("a`b") == "``a`b``"
    assert md_code("`x") == "`` `x ``"
    md = render_markdown(
        report(("sentence", "A <script>x</script> claim.", ((GOOD, "312 children"),)))
    )
    assert "<script>" not in md
    assert "1. **cited**: A \\<script\\>x\\</script\\> claim." in md
    assert f"   - **ok** `{GOOD}` “312 children”" in md
    assert "     - quote checked against the text as issued" in md
    assert md.startswith("# Audit of answer.md: PASS\n")


def test_markdown_lists_flags_details_and_closest() -> None:
    md = render_markdown(
        report(
            ("sentence", "Retracted.", ((h("pmid:99000002/abstract.1"), None),)),
            ("sentence", "Mismatch.", ((GOOD, "312 adults were diagnosed"),)),
        )
    )
    assert (
        "     - flag **retracted**: retraction notices doi:10.5555/demo.0003, pmid:99000003" in md
    )
    assert "     - closest: “312 children were diagnosed” (0.7200)" in md
    assert "- warn: 1 quote\\_mismatch citation" in md


def test_a_registry_withdrawn_trial_and_other_record_statuses_show_in_text_and_markdown() -> None:
    corpus = make_corpus()
    corpus.add_record(
        "nct:NCT99000002",
        "clinicaltrials",
        {"2024-11-20": {"trial.brief_summary.1": "An extended-release study, never enrolled."}},
        status="WITHDRAWN",
    )
    trial = h("nct:NCT99000002@2024-11-20/trial.brief_summary.1")
    gone = h("pmid:99000010/abstract.1")
    retracted = h("pmid:99000002/abstract.1")
    answer = AnswerInput(
        (
            SentenceInput(1, "Never enrolled.", "sentence", (CitationInput.from_text(trial),)),
            SentenceInput(2, "Gone.", "sentence", (CitationInput.from_text(gone),)),
            SentenceInput(
                3, "Misquoted.", "sentence", (CitationInput.from_text(retracted, "not there"),)
            ),
        )
    )
    result = audit_answer(answer, corpus, KEYRING, source_label="answer.md")
    assert [c.record.status if c.record else None for c in result.citations()] == [
        "WITHDRAWN",
        None,
        None,
    ]
    lines = render_text(result).splitlines()[3:]
    assert lines[:2] == [
        "[1] cited: Never enrolled.",
        f"    ok             {trial}",
    ]
    assert lines[2] == "                   record: status WITHDRAWN"
    assert "                   record: withdrawn upstream" in lines
    # a retraction the citation carries no flag for (it is not ok) is said on the record line
    assert "                   record: retracted" in lines
    md = render_markdown(result)
    assert "     - record: status WITHDRAWN" in md
    assert "     - record: withdrawn upstream" in md
    assert "     - record: retracted" in md


def test_an_ok_citation_flagged_retracted_does_not_repeat_it_on_the_record_line() -> None:
    text = render_text(report(("sentence", "Retracted.", ((h("pmid:99000002/abstract.1"), None),))))
    assert "[retracted]" in text
    assert "record:" not in text


def test_markdown_and_json_show_a_record_the_snapshot_did_not_refresh() -> None:
    audited = report(("sentence", "Down.", ((LABEL, None),)))
    detail = "this snapshot's harvest could not refresh the record; it is as snapshot s-0 had it"
    assert f"     - flag **not_refreshed**: {md_text(detail)}" in render_markdown(audited)
    (citation,) = audited.model_dump(mode="json")["sentences"][0]["citations"]
    assert citation["flags"] == [{"name": "not_refreshed", "detail": detail}]
    assert audited.verdict_reasons == ["warn: 1 citation of a record this snapshot did not refresh"]


FORGED = GOOD[:-1] + ("1" if GOOD[-1] != "1" else "2")  # one character of the check changed


def test_the_verdict_line_names_a_fail_on_item_that_failed_the_answer() -> None:
    answer = AnswerInput(
        (
            SentenceInput(1, "Cited.", "sentence", (CitationInput.from_text(GOOD, None),)),
            SentenceInput(2, "Uncited.", "sentence", ()),
            SentenceInput(3, "Forged.", "sentence", (CitationInput.from_text(FORGED, None),)),
        )
    )
    failed = audit_answer(answer, CORPUS, KEYRING, fail_on=["uncited"])
    assert render_text(failed).splitlines()[0] == (
        "verdict: FAIL  (2 citations: 1 forged, 1 ok)  --fail-on: 1 uncited sentence"
    )
    default = audit_answer(answer, CORPUS, KEYRING)  # forged: the counts say why
    assert render_text(default).splitlines()[0] == "verdict: FAIL  (2 citations: 1 forged, 1 ok)"


class _HostileJudge:
    """A judge whose reason and evidence carry terminal and Markdown control text."""

    name = "hostile\x1b[31m"
    version = "1"

    def judge(self, claim: str, evidence: object) -> SupportResult:
        return SupportResult(
            label="contradicted",
            reason="Red \x1b[31malert\u202e *bold* [link](x)",
            evidence=EvidenceSpan(start=19, end=36, text="does not increase"),
            judge=self.name,
            judge_version=self.version,
        )


def _supported_report() -> Report:
    corpus = make_corpus()
    answer = f"Zentravir raises the risk [{h('pmid:99000001/abstract.4')}]."
    report = audit_answer(parse_answer(answer), corpus, KEYRING)
    return with_support(report, corpus, _HostileJudge())


def test_support_shows_label_judge_reason_and_evidence_escaped_in_text() -> None:
    lines = render_text(_supported_report()).splitlines()
    assert lines[-2:] == [
        "                   support: contradicted (hostile\\u001b[31m 1): Red "
        "\\u001b[31malert\\u202e *bold* [link](x)",
        '                   evidence [19:36]: "does not increase"',
    ]


def test_support_is_escaped_in_markdown() -> None:
    line = render_markdown(_supported_report()).splitlines()[-1]
    assert line == (
        "     - support **contradicted** (judge `hostile\\u001b[31m` `1`): Red \\\\u001b\\[31malert"
        "\\\\u202e \\*bold\\* \\[link\\]\\(x\\) Evidence \\[19:36\\]: “does not increase”"
    )


def test_a_report_without_support_says_not_checked_under_each_ok_citation_only() -> None:
    corpus = make_corpus()
    answer = (
        f"Zentravir raises the risk [{h('pmid:99000001/abstract.4')}]. "
        f"It was withdrawn [{h('pmid:99000001/abstract.9')}]."
    )
    report = audit_answer(parse_answer(answer), corpus, KEYRING)
    assert report.support_checked is False
    text = render_text(report).splitlines()
    assert text[3:] == [
        "[1] cited: Zentravir raises the risk.",
        f"    ok             {h('pmid:99000001/abstract.4')}",
        "                   support: not_checked",
        "[2] invalid_only: It was withdrawn.",
        f"    withdrawn      {h('pmid:99000001/abstract.9')}",
        "                   no passage abstract.9 in pmid:99000001",
    ]
    markdown = render_markdown(report)
    assert markdown.count("not\\_checked") == 1
    assert (
        f"   - **ok** `{h('pmid:99000001/abstract.4')}`\n"
        "     - support **not\\_checked**: claim support was not judged\n"
    ) in markdown


def test_markdown_nests_each_citation_under_its_sentence_from_the_tenth_on() -> None:
    """CommonMark nests a sub-list at the column after the item's marker: three spaces under
    ``9. ``, four under ``10. ``, five under ``100. `` (three under ``10. `` ended the list)."""
    sentences: list[tuple[str, str, tuple[tuple[str, str | None], ...]]] = [
        ("sentence", f"S{n}.", ()) for n in range(1, 100)
    ]
    sentences[8] = sentences[9] = sentences[98] = ("sentence", "Cited.", ((GOOD, None),))
    lines = render_markdown(report(*sentences, ("sentence", "Last.", ((GOOD, None),)))).splitlines()
    for marker in ("9. ", "10. ", "99. ", "100. "):
        at = lines.index(f"{marker}**cited**: {'Last' if marker == '100. ' else 'Cited'}.")
        pad = " " * len(marker)
        assert lines[at + 1 : at + 3] == [
            f"{pad}- **ok** `{GOOD}`",
            f"{pad}  - support **not\\_checked**: claim support was not judged",
        ]
