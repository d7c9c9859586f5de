"""An answer's reference section: one definition of its heading (audit.reference_sections),
shared by the sentence splitter and the reference extractor; its entries are listed, never
claims, and a handle written in them is audited as before."""

from __future__ import annotations

import json

import pytest

from audit.citations import parse_answer
from audit.claims import parse_claims
from audit.engine import audit_answer
from audit.errors import NothingToAudit
from audit.reference_sections import reference_sections
from audit.references.entries import references_in_prose
from audit.references.inputs import SourceText
from audit.render_html import render_report_html
from audit.render_text import render_markdown, render_text
from audit.report import Report
from tests.audit.planted import KEYRING, h, make_corpus

GOOD = h("pmid:99000001/abstract.3")
FORGED = GOOD[:-1] + ("0" if GOOD[-1] != "0" else "1")

# The evaluate finding: a cited answer ending with a plain three-entry reference list.
WITH_REFERENCES = f"""Zentravir is well tolerated in children [{GOOD}].

## References

1. Smith J, Doe A. Zentravir in children. Lancet. 2020;395:1-9. doi:10.1016/S0140-6736(20)30001-1
2. Roe B, et al. "Farrow syndrome outcomes." N Engl J Med. 2019;380:2-8.
   A continuation line of the second entry. It has two sentences.
3. Poe C. Antiviral safety. BMJ. 2018. https://example.org/antiviral
"""


def _audit(answer: str) -> Report:
    return audit_answer(parse_answer(answer), make_corpus(), KEYRING)


def _kinds(answer: str) -> list[tuple[str, str]]:
    return [(s.kind, s.text) for s in parse_answer(answer).sentences]


def test_a_reference_list_is_not_uncited_sentences() -> None:
    report = _audit(WITH_REFERENCES)
    assert [(s.kind, s.status) for s in report.sentences] == [
        ("sentence", "cited"),
        ("heading", "uncited"),
        ("reference_entry", "uncited"),
        ("reference_entry", "uncited"),
        ("reference_entry", "uncited"),
    ]
    assert (report.metrics.sentences, report.metrics.cited_sentences) == (1, 1)
    assert report.metrics.by_status.uncited == 0
    assert (report.verdict, report.verdict_reasons) == ("pass", [])
    # without the heading the entries are list items split into sentences: 11 uncited claims
    plain = _audit(WITH_REFERENCES.replace("## References\n", ""))
    assert (plain.verdict, plain.metrics.by_status.uncited) == ("warn", 11)


def test_an_entry_is_one_sentence_shown_whole() -> None:
    entries = [text for kind, text in _kinds(WITH_REFERENCES) if kind == "reference_entry"]
    assert entries[1] == (
        'Roe B, et al. "Farrow syndrome outcomes." N Engl J Med. 2019;380:2-8. '
        "A continuation line of the second entry. It has two sentences."
    )


def test_a_forged_handle_inside_the_section_still_fails_the_answer() -> None:
    report = _audit(WITH_REFERENCES.replace("3. Poe C.", f"3. {FORGED} Poe C."))
    entry = report.sentences[4]
    assert (entry.kind, entry.status) == ("reference_entry", "invalid_only")
    assert [c.verdict for c in entry.citations] == ["forged"]
    assert report.verdict == "fail"
    assert report.metrics.sentences == 2  # an entry that cites is a claim, as a citing heading
    assert report.metrics.by_status.invalid_only == 1


def test_an_entry_that_cites_a_genuine_handle_is_a_cited_claim() -> None:
    report = _audit(WITH_REFERENCES.replace("3. Poe C.", f"3. {GOOD} Poe C."))
    (entry,) = report.sentences[4:]
    assert (entry.kind, entry.status, entry.text) == (
        "reference_entry",
        "cited",
        "Poe C. Antiviral safety. BMJ. 2018. https://example.org/antiviral",
    )
    assert [(c.handle, c.verdict) for c in entry.citations] == [(GOOD, "ok")]
    assert (report.metrics.sentences, report.metrics.cited_sentences) == (2, 2)
    assert report.verdict == "pass"


@pytest.mark.parametrize(
    "heading",
    [
        "References\n----------",
        "Bibliography\n============",
        "**References**",
        "__Works cited__:",
        "Sources:",
        "### Notes and references",
        "  Citations",
    ],
)
def test_setext_bold_and_plain_headings_open_a_section(heading: str) -> None:
    answer = (
        f"A claim [{GOOD}].\n\n{heading}\n\n- Smith J. A title. 2020.\n- Doe A. Another. 2019.\n"
    )
    kinds = _kinds(answer)
    assert [kind for kind, _ in kinds] == [
        "sentence",
        "heading",
        "reference_entry",
        "reference_entry",
    ]
    assert kinds[1][1].rstrip(":") in {
        "References",
        "Bibliography",
        "Works cited",
        "Sources",
        "Notes and references",
        "Citations",
    }
    assert _audit(answer).verdict == "pass"


def test_author_year_paragraphs_under_a_bold_heading_are_entries() -> None:
    answer = (
        f"A claim [{GOOD}].\n\n**References**\nSmith, J. (2020). A title. Lancet.\n\n"
        "Doe, A. (2019). Another title. BMJ.\n"
    )
    assert _kinds(answer)[1:] == [
        ("heading", "References"),
        ("reference_entry", "Smith, J. (2020). A title. Lancet."),
        ("reference_entry", "Doe, A. (2019). Another title. BMJ."),
    ]


def test_a_heading_that_merely_contains_the_word_is_no_section() -> None:
    answer = "## References to prior work show X\n\n- Zentravir halves the risk.\n"
    assert _kinds(answer) == [
        ("heading", "References to prior work show X"),
        ("list_item", "Zentravir halves the risk."),
    ]
    assert reference_sections(answer) == []
    assert _audit(answer).metrics.by_status.uncited == 1


def test_the_section_ends_at_a_heading_of_the_same_level_and_keeps_lower_ones() -> None:
    answer = (
        f"## References\n\n1. Smith J. A title. 2020.\n\n### Books\n\n- Doe A. A book. 2019.\n\n"
        f"## Discussion\n\nZentravir is safe [{GOOD}]. It halves the risk.\n"
    )
    assert [kind for kind, _ in _kinds(answer)] == [
        "heading",
        "reference_entry",
        "heading",
        "reference_entry",
        "heading",
        "sentence",
        "sentence",
    ]
    report = _audit(answer)
    assert (report.metrics.sentences, report.metrics.by_status.uncited) == (2, 1)


def test_the_splitter_and_the_extractor_read_the_same_section() -> None:
    answer = WITH_REFERENCES + "\n## Next\n\nMore.\n"
    (section,) = reference_sections(answer)
    assert answer[section.start : section.body] == "## References\n"
    assert answer[section.end :].startswith("## Next")
    prose = references_in_prose(SourceText("a.md", "markdown", answer))
    extracted = [r for r in prose if r.kind == "entry"]
    assert [r.raw[:3] for r in extracted] == ["1. ", "2. ", "3. "]
    in_section = [s for s in parse_answer(answer).sentences if s.kind == "reference_entry"]
    assert len(in_section) == len(extracted)


def test_claims_json_is_unaffected() -> None:
    claims = json.dumps(
        {
            "claims": [
                {"sentence": "References", "kind": "heading"},
                {"sentence": "Smith J. A title. 2020."},
            ]
        }
    )
    parsed = parse_claims(claims)
    assert [(s.kind, s.text) for s in parsed.sentences] == [
        ("heading", "References"),
        ("sentence", "Smith J. A title. 2020."),
    ]
    report = audit_answer(parsed, make_corpus(), KEYRING)
    assert (report.verdict, report.metrics.by_status.uncited) == ("warn", 1)


def test_every_format_labels_an_entry_by_its_kind() -> None:
    report = _audit(WITH_REFERENCES)
    text = render_text(report)
    assert "[3] reference_entry: Smith J, Doe A. Zentravir in children." in text
    assert "[2] heading: References" in text
    assert "uncited" not in text
    markdown = render_markdown(report)
    assert "3. **reference_entry**: Smith J, Doe A. Zentravir in children." in markdown
    page = render_report_html(report)
    assert 'class="sentence sentence-uncited kind-reference_entry"' in page
    assert '<span class="status status-uncited">reference entry</span> Smith J' in page
    assert '<span class="status status-uncited">heading</span> References' in page
    assert json.loads(report.model_dump_json())["sentences"][2]["kind"] == "reference_entry"


def test_an_answer_of_only_a_reference_list_is_nothing_to_audit() -> None:
    with pytest.raises(NothingToAudit) as raised:
        parse_answer("## References\n\n1. Smith J. A title. Lancet. 2020.\n")
    assert str(raised.value) == (
        "nothing to audit: the answer holds only a reference list (citeseal check checks one)"
    )


def test_closing_hashes_make_no_section_in_either_reader() -> None:
    answer = "## References ##\n\n- Zentravir halves the risk.\n"
    assert reference_sections(answer) == []
    assert _kinds(answer) == [
        ("heading", "References"),
        ("list_item", "Zentravir halves the risk."),
    ]
