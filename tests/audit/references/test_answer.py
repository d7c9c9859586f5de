"""audit.references.answer and the references section of an audit: what is read from an
answer, how the tiers feed the verdict, re-audits and claim support keeping them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from audit.citations import parse_answer
from audit.claims import parse_claims
from audit.engine import AuditInput, audit_answer, audit_many, reaudit
from audit.errors import InputError
from audit.overall import overall
from audit.references.answer import answer_references, answer_references_of, blank_spans
from audit.references.check import Flags, ReferenceCheck, Tier
from audit.references.model import Span
from audit.references.resolve import SnapshotResolver
from audit.report import FailOnItem, Report
from audit.support.rules import RulesJudge
from audit.support.run import with_support
from tests.audit.fixture_scope import per_module
from tests.audit.planted import KEYRING, h, make_corpus
from tests.audit.references.works import WORKS, write_works

NOW = datetime(2099, 1, 1, tzinfo=UTC)
CITED = f"Zentravir is safe [{h('pmid:99000001/abstract.3')}]."
ANSWER = (
    "Zentravir is safe, as the cohort doi:10.5555/ref.0001 agrees (see NCT9900001) [1].\n\n"
    "## References\n\n"
    f"1. {h('pmid:99000001/abstract.3')}\n"
    "2. Doe J, Roe R. Vitamin Y and sleep quality in older adults: a randomised trial. "
    "Synthetic Reviews in Geriatrics. 2015. PMID: 99100002\n"
    "3. Nobody N. Zentravir dosing in neonates. 2024. PMID: 99100777\n"
    "4. Selkirk J. The Farrow Syndrome Handbook. Demo Medical Press; 2021. "
    "ISBN 978-9-99999-001-1\n"
)


@pytest.fixture(scope=per_module)
def works(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_works(tmp_path_factory.mktemp("works") / "works.duckdb")


@pytest.fixture
def resolver(works: Path) -> Iterator[SnapshotResolver]:
    opened = SnapshotResolver.open(works)
    yield opened
    opened.close()


def audited(text: str, resolver: SnapshotResolver | None, fail_on=()) -> Report:
    return audit_answer(
        parse_answer(text),
        make_corpus(),
        KEYRING,
        fail_on=fail_on,
        source_label="answer.md",
        now=NOW,
        text=text,
        references=resolver,
    )


def spans_of(text: str) -> list[tuple[int, int]]:
    return [c.handle_span for c in parse_answer(text).citations if c.handle_span is not None]


def test_blank_spans_keeps_every_position_and_line_break() -> None:
    assert blank_spans("ab\ncd\nef", [(1, 7)]) == "a \n  \n f"


def test_handles_are_citations_never_also_ordinary_references() -> None:
    found = answer_references(ANSWER, "answer.md", spans_of(ANSWER))
    idents = [
        (r.kind, r.label, [f"{i.scheme}:{i.value}" for i in r.identifiers])
        for r in found.references
    ]
    assert idents == [
        ("running_text", None, ["doi:10.5555/ref.0001"]),
        ("running_text", None, ["nct:NCT9900001"]),
        ("entry", "2", ["pmid:99100002"]),
        ("entry", "3", ["pmid:99100777"]),
        ("entry", "4", ["isbn:9789999990011"]),
    ]  # entry 1 is the handle's: not an ordinary reference
    doi = found.references[0].identifiers[0].span
    line = ANSWER.splitlines()[doi.line - 1]
    assert line[doi.column - 1 : doi.end_column - 1] == "doi:10.5555/ref.0001"


def test_the_audit_checks_the_references_and_a_hallucinated_one_fails_it(
    resolver: SnapshotResolver,
) -> None:
    report = audited(ANSWER, resolver)
    assert report.references is not None
    assert report.references.counts == {
        "verified": 1,
        "mismatch": 1,
        "hallucinated": 1,
        "needs_review": 1,
        "unresolved": 1,
    }
    assert (report.verdict, report.verdict_reasons) == (
        "fail",
        [
            "fail: 1 hallucinated reference",
            "incomplete: 1 unresolved reference",
            "warn: 1 reference that disagrees with its record",
            "warn: 1 reference to a retracted record",
        ],
    )
    mismatch = next(c for c in report.references.checks() if c.tier == "mismatch")
    assert [(d.field, d.seen, d.expected) for d in mismatch.diffs] == [("year", "2015", "2021")]


def test_a_handle_only_answer_has_no_references_section_and_the_same_report(
    resolver: SnapshotResolver,
) -> None:
    with_check = audited(CITED, resolver)
    without = audited(CITED, None)
    assert with_check.references is None
    assert with_check.model_dump_json() == without.model_dump_json()
    assert "references" not in json.loads(with_check.model_dump_json())


def _check(tier: Tier, *, retracted: bool = False, preprint: bool = False) -> ReferenceCheck:
    span = Span(file="a.md", line=1, column=1, end_line=1, end_column=2)
    return ReferenceCheck(
        label=None,
        kind="running_text",
        span=span,
        location=span,
        identifiers=(),
        title=None,
        tier=tier,
        reason="r",
        flags=Flags(retracted=retracted, preprint=preprint),
    )


@pytest.mark.parametrize(
    ("tier", "fail_on", "expected"),
    [
        ("hallucinated", (), ("fail", ["fail: 1 hallucinated reference"])),
        ("unresolved", (), ("incomplete", ["incomplete: 1 unresolved reference"])),
        ("unresolved", ("incomplete",), ("fail", ["fail: 1 unresolved reference"])),
        ("unresolved", ("unresolved",), ("fail", ["fail: 1 unresolved reference"])),
        ("mismatch", (), ("warn", ["warn: 1 reference that disagrees with its record"])),
        ("mismatch", ("mismatch",), ("fail", ["fail: 1 reference that disagrees with its record"])),
        ("needs_review", (), ("pass", [])),
        ("needs_review", ("mismatch", "unresolved", "incomplete"), ("pass", [])),
        ("verified", (), ("pass", [])),
    ],
)
def test_each_reference_tier_feeds_the_overall_verdict(
    tier: Tier, fail_on: tuple[FailOnItem, ...], expected: tuple[str, list[str]]
) -> None:
    assert overall([], fail_on, [_check(tier)]) == expected


def test_reference_flags_count_as_the_same_fail_on_items_as_citation_flags() -> None:
    retracted = _check("verified", retracted=True)
    assert overall([], (), [retracted]) == ("warn", ["warn: 1 reference to a retracted record"])
    assert overall([], ("retracted",), [retracted]) == (
        "fail",
        ["fail: 1 reference to a retracted record"],
    )
    preprint = _check("verified", preprint=True)
    assert overall([], (), [preprint]) == ("pass", [])
    assert overall([], ("preprint",), [preprint])[0] == "fail"


def test_reaudit_checks_the_references_again_against_the_new_snapshot(
    resolver: SnapshotResolver, tmp_path: Path
) -> None:
    published = audited(ANSWER, resolver)
    fewer = write_works(
        tmp_path / "fewer.duckdb", tuple(w for w in WORKS if w.get("pmid") != "99100002")
    )
    newer = SnapshotResolver.open(fewer)
    try:
        again = reaudit(published, make_corpus(), KEYRING, now=NOW, references=newer)
    finally:
        newer.close()
    assert again.references is not None
    assert again.references.counts["unresolved"] == 2  # the mismatched work left the snapshot
    assert again.references.counts["mismatch"] == 0
    assert again.verdict == "fail"  # decided again with the references, not the citations alone
    assert again.verdict_reasons == [
        "fail: 1 hallucinated reference",
        "incomplete: 2 unresolved references",
    ]


def test_reaudit_without_a_resolver_refuses_a_report_with_references(
    resolver: SnapshotResolver,
) -> None:
    published = audited(ANSWER, resolver)
    with pytest.raises(InputError) as raised:
        reaudit(published, make_corpus(), KEYRING, now=NOW)
    assert raised.value.message == (
        "answer.md: the report has ordinary references to check again and no reference "
        "resolver was given"
    )


def test_claim_support_decides_the_verdict_again_with_the_references(
    resolver: SnapshotResolver,
) -> None:
    report = audited(ANSWER, resolver)
    judged = with_support(report, make_corpus(), RulesJudge())
    assert judged.verdict == "fail"
    assert judged.verdict_reasons[0] == "fail: 1 hallucinated reference"
    assert judged.references == report.references


def test_every_audit_format_shows_the_references(resolver: SnapshotResolver) -> None:
    from audit.render_html import render_report_html
    from audit.render_text import render_markdown, render_text

    report = audited(ANSWER, resolver)
    text = render_text(report)
    assert text.splitlines()[0] == (
        "verdict: FAIL  (1 citation: 1 ok; 5 references: 1 hallucinated, 1 mismatch, "
        "1 unresolved, 1 needs_review, 1 verified)"
    )
    block = text[text.index("references (") :].splitlines()
    assert block[0] == (
        "references (5: 1 hallucinated, 1 mismatch, 1 unresolved, 1 needs_review, 1 verified):"
    )
    assert (
        "    1:67 hallucinated: NCT9900001 is not a valid nct: an NCT number has 8 digits, got 7"
        in block
    )
    markdown = render_markdown(report)
    assert (
        "## References (5: 1 hallucinated, 1 mismatch, 1 unresolved, 1 needs\\_review, 1 verified)"
        in markdown
    )
    assert "### mismatch (1)" in markdown
    page = render_report_html(report)
    assert '<h2 id="references">References: 1 hallucinated' in page
    assert page.count('<table class="references') == 5


def test_a_handle_only_report_renders_as_before(resolver: SnapshotResolver) -> None:
    from audit.render_html import render_report_html
    from audit.render_text import render_markdown, render_text

    checked, unchecked = audited(CITED, resolver), audited(CITED, None)
    for render in (render_text, render_markdown, render_report_html):
        assert render(checked) == render(unchecked)
    assert "references" not in render_text(checked)


def test_the_references_of_a_chunk_of_answers_are_looked_up_in_one_batch(
    resolver: SnapshotResolver,
) -> None:

    calls: list[int] = []
    by_identifiers = resolver.by_identifiers

    def counted(keys):
        calls.append(len(keys))
        return by_identifiers(keys)

    resolver.by_identifiers = counted  # type: ignore[method-assign]
    items = [AuditInput(f"a{i}.md", parse_answer(ANSWER), ANSWER) for i in range(3)]
    reports = list(audit_many(items, make_corpus(), KEYRING, now=NOW, references=resolver))
    assert calls == [4]  # one look-up of the 4 distinct identifiers of all three answers
    assert [r.verdict for r in reports] == ["fail"] * 3
    one = audited(ANSWER, resolver).references
    assert one is not None and reports[2].references is not None
    assert [c.reason for c in reports[2].references.checks()] == [c.reason for c in one.checks()]


@pytest.mark.parametrize(
    ("text", "spans", "blanked"),
    [
        ("pmid:1 x", [(0, 6)], "       x"),  # a span from the first character
        ("aXYb\r\nc", [(0, 7)], "    \r\n "),  # every character but the line breaks
        ("abc", [(-2, 9)], "   "),  # a span past either end is cut to the text
    ],
)
def test_blank_spans_blanks_every_character_of_a_span_but_line_breaks(
    text: str, spans: list[tuple[int, int]], blanked: str
) -> None:
    assert blank_spans(text, spans) == blanked


BOOK = "Selkirk J. The Farrow Syndrome Handbook. Demo Medical Press; 2021."
HANDLE = h("pmid:99000001/abstract.3")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # an author-year entry that is a bare handle at the start of its line is the handle's
        (f"## References\n\n{HANDLE}\n\n{BOOK}\n", [("entry", None, 5, [])]),
        # a handle at the start of a line does not take the entry on the line above
        (f"## References\n\n- {BOOK}\n{HANDLE}\n", [("entry", None, 3, [])]),
        # a handle on the first line does not take the footnote entry below it
        (f"Zentravir is safe [{HANDLE}] [^1].\n[^1]: {BOOK}\n", [("entry", "1", 2, [])]),
        # an entry that held a handle and an identifier of its own is an ordinary reference
        (
            f"Zentravir is safe [^1].\n\n[^1]: {HANDLE} PMID: 99100002\n",
            [("entry", "1", 3, ["pmid:99100002"])],
        ),
    ],
)
def test_only_an_entry_that_held_nothing_but_a_handle_is_left_out(
    text: str, expected: list[tuple[str, str | None, int, list[str]]]
) -> None:
    found = answer_references(text, "answer.md", spans_of(text)).references
    assert [
        (r.kind, r.label, r.span.line, [f"{i.scheme}:{i.value}" for i in r.identifiers])
        for r in found
    ] == expected


CLAIMS = [
    "The cohort\nagrees, doi:10.5555/ref.0001.",
    f"Zentravir is safe [{HANDLE}], as PMID: 99100002 found.",
]


def test_claims_references_are_read_one_sentence_a_line_without_their_handles() -> None:
    found = answer_references_of(None, CLAIMS, [], "claims.json")
    assert [
        (f"{i.scheme}:{i.value}", i.span.line, i.span.column, i.span.end_column)
        for r in found
        for i in r.identifiers
    ] == [("doi:10.5555/ref.0001", 1, 20, 40), ("pmid:99100002", 2, 56, 70)]
    # the handle written in the second claim is its citation, never also PMID 99000001


def test_a_claims_audit_checks_the_ordinary_references_and_not_the_handles(
    resolver: SnapshotResolver,
) -> None:
    claims = {"claims": [{"sentence": s} for s in CLAIMS]}
    report = audit_answer(
        parse_claims(json.dumps(claims)),
        make_corpus(),
        KEYRING,
        source_label="claims.json",
        now=NOW,
        references=resolver,
    )
    assert report.references is not None
    assert [(c.identifiers, c.tier) for c in report.references.checks()] == [
        (("doi:10.5555/ref.0001",), "verified"),
        (("pmid:99100002",), "verified"),
    ]  # no unresolved PMID 99000001 read from the handle to make the audit incomplete
    assert report.verdict_reasons == [
        "warn: 1 reference to a retracted record",
        "warn: 1 uncited sentence",
    ]


def test_an_answer_without_references_leaves_the_next_answer_its_own_section(
    resolver: SnapshotResolver,
) -> None:

    items = [
        AuditInput("cited.md", parse_answer(CITED), CITED),
        AuditInput("answer.md", parse_answer(ANSWER), ANSWER),
    ]
    reports = list(audit_many(items, make_corpus(), KEYRING, now=NOW, references=resolver))
    assert reports[0].references is None
    assert reports[1].references == audited(ANSWER, resolver).references
