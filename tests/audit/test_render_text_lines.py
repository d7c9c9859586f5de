"""The single lines of the text report in detail: ``citeseal support``'s output, the one-line
summary per input, the references' counts and code spans (whole reports:
test_render_golden.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.citations import parse_answer
from audit.corpus import InMemoryCorpus
from audit.engine import audit_answer
from audit.references.resolve import SnapshotResolver
from audit.render_text import (
    counts_line,
    md_code,
    record_standing,
    render_markdown,
    render_support_check,
    render_text,
    summary_line,
)
from audit.report import Flag, Report
from audit.support.model import EvidenceSpan, SupportResult
from audit.support.run import check_support
from tests.audit.fixture_scope import per_module
from tests.audit.golden_reports import NOW, ladder_report
from tests.audit.planted import KEYRING, OTHER, h, make_corpus, stale_corpus
from tests.audit.references.works import write_works


class _Judge:
    """Contradicted with evidence first, then supported without any; hostile names."""

    name = "j\x1bx"
    version = "2\n3"

    def __init__(self) -> None:
        self.calls = 0

    def judge(self, claim: str, evidence: object) -> SupportResult:
        self.calls += 1
        text = getattr(evidence, "text", "")
        first = self.calls == 1
        return SupportResult(
            label="contradicted" if first else "supported",
            reason="r\x1b",
            evidence=EvidenceSpan(start=0, end=9, text=text[:9]) if first else None,
            judge=self.name,
            judge_version=self.version,
        )


def test_the_support_check_lists_each_handle_with_its_judgment_or_why_not() -> None:
    handles = [
        h("pmid:99000001/abstract.4"),
        h("pmid:99000001/abstract.3"),
        h("pmid:99000001/abstract.3", OTHER),
        h("pmid:99000001/abstract.9"),
        "nonsense",
    ]
    check = check_support("Zentravir \x1b raises risk.", handles, make_corpus(), KEYRING, _Judge())
    assert render_support_check(check) == (
        "claim: Zentravir \\u001b raises risk.\n"
        "judge: j\\u001bx 2 3\n"
        f"ok             {handles[0]}\n"
        "               support: contradicted (j\\u001bx 2 3): r\\u001b\n"
        '               evidence [0:9]: "Zentravir"\n'
        f"ok             {handles[1]}\n"
        "               support: supported (j\\u001bx 2 3): r\\u001b\n"
        f"forged         {handles[2]}\n"
        "               not judged: check code 'rqsan' does not verify under any key of the "
        "keyring\n"
        f"withdrawn      {handles[3]}\n"
        "               not judged: no passage abstract.9 in pmid:99000001\n"
        "malformed      nonsense\n"
        "               not judged: unknown scheme 'nonsense' (expected one of pmid, pmcid, "
        "ppr, nct, setid, local)\n"
    )
    no_detail = check.model_copy(
        update={"results": [check.results[2].model_copy(update={"detail": None})]}
    )
    assert render_support_check(no_detail).splitlines()[-1] == "               not judged"


def test_the_summary_line_names_the_input_as_given_or_the_reports_source() -> None:
    report = ladder_report()
    counts = (
        "17 citations: 1 malformed, 2 forged, 1 unavailable, 3 withdrawn, 1 quote_mismatch, 9 ok"
    )
    assert counts_line(report) == counts
    assert summary_line(report) == f"answer <1>.md: FAIL  ({counts})"
    assert summary_line(report, "in\x1bput\n.md") == f"in\\u001bput .md: FAIL  ({counts})"


def test_a_code_span_is_fenced_longer_than_any_backtick_run_and_padded_when_it_must_be() -> None:
    assert [md_code(x) for x in ("x", "a``b", "``", " ", "", "a\nb")] == [
        "`x`",
        "```a``b```",
        "``` `` ```",
        "`   `",
        "`  `",
        "`a b`",
    ]


# --- flags, details and the record line ----------------------------------------------------------


def _one(report: Report, **update: object) -> Report:
    (sentence,) = report.sentences
    citation = sentence.citations[0].model_copy(update=update)
    return report.model_copy(
        update={"sentences": [sentence.model_copy(update={"citations": [citation]})]}
    )


def _audited(answer: str, corpus: InMemoryCorpus | None = None) -> Report:
    return audit_answer(parse_answer(answer), corpus or make_corpus(), KEYRING, now=NOW)


def test_a_citation_with_two_flags_lists_both() -> None:
    corpus = stale_corpus({"pmid:99000002": "s-0"}, pubmed="partial")
    report = _audited(f"Retracted [{h('pmid:99000002/abstract.1')}].\n", corpus)
    assert [f.name for f in report.citations()[0].flags] == ["retracted", "not_refreshed"]
    assert f"    ok             {h('pmid:99000002/abstract.1')} [retracted, not_refreshed]" in (
        render_text(report).splitlines()
    )


def test_only_a_misquote_shows_a_closest_match_and_only_a_non_ok_citation_its_detail() -> None:
    """As a report file could hold them: an ok citation with a closest match and a detail."""
    report = _one(
        _audited(f"Low [{h('pmid:99000001/abstract.4')}].\n"),
        closest_match="Zentravir",
        similarity=0.5,
        detail="a detail",
        flags=[Flag(name="preprint")],
    )
    assert "closest" not in render_text(report)
    markdown = render_markdown(report)
    assert "a detail" not in markdown
    assert "     - flag **preprint**\n" in markdown
    undetailed = _one(report, verdict="withdrawn", detail=None, closest_match=None, flags=[])
    assert "     - \n" not in render_markdown(undetailed)


def test_the_record_line_joins_what_it_says_with_semicolons() -> None:
    report = _audited(f"Gone [{h('pmid:99000010/abstract.1')}].\n")  # withdrawn upstream
    citation = report.citations()[0]
    assert citation.record is not None
    record = citation.record.model_copy(update={"status": "WITHDRAWN", "retracted": True})
    assert record_standing(citation.model_copy(update={"record": record})) == (
        "status WITHDRAWN; withdrawn upstream; retracted"
    )


def test_markdown_without_the_demo_key_does_not_call_it_one() -> None:
    data = _audited("Nothing cited.\n").model_dump()
    data["key"] = {"fingerprint": "abcdef012345", "demo": False}
    markdown = render_markdown(Report.model_validate(data))
    assert "key `abcdef012345`. citeseal " in markdown
    assert "demo" not in markdown


# --- one reference and two -----------------------------------------------------------------------


@pytest.fixture(scope=per_module)
def works(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_works(tmp_path_factory.mktemp("works") / "works.duckdb")


def _with_references(text: str, works: Path) -> Report:
    resolver = SnapshotResolver.open(works)
    try:
        return audit_answer(
            parse_answer(text), make_corpus(), KEYRING, now=NOW, text=text, references=resolver
        )
    finally:
        resolver.close()


def test_one_reference_is_counted_in_the_singular_and_two_in_the_plural(works: Path) -> None:
    one = _with_references("The cohort doi:10.5555/ref.0001 agrees.\n", works)
    assert counts_line(one) == "0 citations; 1 reference: 1 verified"
    assert "references (1: 1 verified):" in render_text(one).splitlines()
    assert "## References (1: 1 verified)" in render_markdown(one).splitlines()
    two = _with_references("The cohort doi:10.5555/ref.0001 and PMC99100001 agree.\n", works)
    assert counts_line(two) == "0 citations; 2 references: 2 verified"
    assert "references (2: 2 verified):" in render_text(two).splitlines()
