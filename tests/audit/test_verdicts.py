"""The audit's rules on an in-memory corpus: one test per verdict and flag (DESIGN.md §3;
sentence statuses, metrics and the overall rules: test_overall.py). The same rules run on a
real demo snapshot in test_engine_demo.py.
"""

from __future__ import annotations

import pytest

from audit.corpus import InMemoryCorpus
from audit.engine import (
    CitationInput,
    judge_citations,
)
from audit.errors import CitationSyntaxError
from audit.handles import parse_handle
from audit.keys import Keyring
from audit.report import CitationResult
from tests.audit.planted import (
    CONCLUSIONS,
    KEYRING,
    KEYRING_KEY,
    NEW_SUMMARY,
    OLD_SUMMARY,
    OTHER,
    RESULTS,
    SETID,
    WARNING,
    h,
    make_corpus,
    stale_corpus,
)

CORPUS = make_corpus()


def judge_one(handle: str, quote: str | None = None, corpus: InMemoryCorpus = CORPUS):
    (result,) = judge_citations([CitationInput.from_text(handle, quote)], corpus, KEYRING)
    return result


def flags(result: CitationResult) -> list[tuple[str, str | None]]:
    return [(f.name, f.detail) for f in result.flags]


# ---------------------------------------------------------------------------------------------
# The ladder


def test_malformed_carries_the_grammar_message() -> None:
    result = judge_one("pmid:99000001-abstract")
    with pytest.raises(CitationSyntaxError) as raised:
        parse_handle("pmid:99000001-abstract")
    assert (result.verdict, result.detail) == ("malformed", raised.value.message)
    assert result.record is None and result.passage is None and result.record_id is None


def test_forged_check_code() -> None:
    genuine = h("pmid:99000001/abstract.3")
    wrong = genuine[:-1] + ("0" if genuine[-1] != "0" else "1")
    result = judge_one(wrong)
    assert result.verdict == "forged"
    assert result.detail == (
        f"check code {wrong[-5:]!r} does not verify under any key of the keyring"
    )
    assert result.record is None and result.passage is None


def test_handle_from_another_installation_is_forged() -> None:
    assert judge_one(h("pmid:99000001/abstract.3", OTHER)).verdict == "forged"


def test_handle_signed_by_a_retired_key_still_verifies() -> None:
    rotated = Keyring.from_keys(b"the new current key, at least 32 bytes", [KEYRING_KEY])
    citation = CitationInput.from_text(h("pmid:99000001/abstract.3"))
    (result,) = judge_citations([citation], CORPUS, rotated)
    assert result.verdict == "ok"


@pytest.mark.parametrize(
    ("sources", "handle", "detail"),
    [
        (
            {"openfda": "failed"},
            "setid:5eed0001-0000-4000-8000-000000000999@4/label.boxed_warning.1",
            "the openfda harvest failed in this snapshot",
        ),
        (
            {"clinicaltrials": "not_harvested"},
            "nct:NCT99000999@2025-06-02/trial.conditions.1",
            "clinicaltrials was not harvested in this snapshot",
        ),
        (
            {"clinicaltrials": "absent"},
            "nct:NCT99000999@2025-06-02/trial.conditions.1",
            "clinicaltrials was not harvested in this snapshot",
        ),
        ({}, "pmid:99000999/abstract.1", "pmid:99000999 was never in this snapshot's lineage"),
        (
            {"pubmed": "partial"},
            "pmid:99000999/abstract.1",
            "pmid:99000999 was never in this snapshot's lineage (the pubmed harvest was partial)",
        ),
    ],
    ids=["source-failed", "not-harvested", "source-missing", "never-seen", "never-seen-partial"],
)
def test_unavailable(sources: dict[str, str], handle: str, detail: str) -> None:
    result = judge_one(h(handle), corpus=make_corpus(**sources))
    assert (result.verdict, result.detail) == ("unavailable", detail)
    assert result.passage is None


LABEL_ID = f"setid:{SETID}"
TRIAL_ID = "nct:NCT99000001"


@pytest.mark.parametrize(
    ("sources", "stale", "handle"),
    [
        ({"openfda": "failed"}, {LABEL_ID: "planted-0"}, f"{LABEL_ID}@4/label.warnings.9"),
        ({"clinicaltrials": "partial"}, {TRIAL_ID: "p-0"}, f"{TRIAL_ID}@2025-01-15/trial.arms.9"),
        ({"clinicaltrials": "not_harvested"}, {}, f"{TRIAL_ID}@2025-06-02/trial.arms.9"),
        ({"clinicaltrials": "absent"}, {}, f"{TRIAL_ID}@2025-06-02/trial.arms.9"),
    ],
    ids=["source-failed", "source-partial", "not-harvested", "source-missing"],
)
def test_a_record_the_snapshot_holds_is_judged_whatever_its_harvest_status(
    sources: dict[str, str], stale: dict[str, str], handle: str
) -> None:
    """§3 carries a record forward when its refresh fails: the snapshot holds it, so the ladder
    judges what it holds (here: withdrawn, no passage) instead of calling it unavailable."""
    corpus = stale_corpus(stale, **sources)
    result = judge_one(h(handle), corpus=corpus)
    assert result.verdict == "withdrawn"
    assert result.detail is not None and result.detail.startswith("no passage")


@pytest.mark.parametrize(
    ("sources", "stale", "handle", "detail"),
    [
        (
            {"openfda": "failed"},
            {LABEL_ID: "planted-0"},
            f"{LABEL_ID}@4/label.boxed_warning.1",
            "this snapshot's harvest could not refresh the record; it is as snapshot planted-0 "
            "had it",
        ),
        (
            {"crossref": "partial"},
            {"pmid:99000001": "planted-0"},  # its enrichment failed: pubmed itself is ok
            "pmid:99000001/abstract.3",
            "this snapshot's harvest could not refresh the record; it is as snapshot planted-0 "
            "had it",
        ),
        (
            {"clinicaltrials": "not_harvested"},
            {},
            f"{TRIAL_ID}@2025-06-02/trial.conditions.1",
            "clinicaltrials was not harvested in this snapshot; it is as an earlier snapshot "
            "had it",
        ),
        (
            {"clinicaltrials": "absent"},
            {TRIAL_ID: "planted-0"},
            f"{TRIAL_ID}@2025-06-02/trial.conditions.1",
            "clinicaltrials was not harvested in this snapshot; it is as snapshot planted-0 had it",
        ),
    ],
    ids=["source-failed", "enrichment-failed", "not-harvested", "source-missing"],
)
def test_a_record_the_harvest_did_not_refresh_is_ok_flagged_not_refreshed(
    sources: dict[str, str], stale: dict[str, str], handle: str, detail: str
) -> None:
    result = judge_one(h(handle), corpus=stale_corpus(stale, **sources))
    assert (result.verdict, flags(result)) == ("ok", [("not_refreshed", detail)])


def test_a_refreshed_record_of_a_partial_snapshot_is_not_flagged() -> None:
    corpus = stale_corpus({"pmid:99000004": "planted-0"}, crossref="partial")
    assert flags(judge_one(h("pmid:99000001/abstract.3"), corpus=corpus)) == []


def test_not_refreshed_needs_a_partial_snapshot_or_a_source_not_harvested() -> None:
    """A complete snapshot whose harvest saw a record under another id (a backfill child
    names its parent's harvest) does not flag it: only a partial harvest leaves records as
    an earlier snapshot had them."""
    corpus = stale_corpus({"pmid:99000001": "planted-0"})
    assert flags(judge_one(h("pmid:99000001/abstract.3"), corpus=corpus)) == []


@pytest.mark.parametrize(
    ("handle", "quote", "detail"),
    [
        (
            "pmid:99000010/abstract.1",
            None,
            "pmid:99000010 was withdrawn upstream since snapshot demo-20250602T000000Z",
        ),
        ("pmid:99000001/abstract.9", None, "no passage abstract.9 in pmid:99000001"),
        (
            "nct:NCT99000001@2025-06-02/trial.arms.2",
            None,
            "no passage trial.arms.2 in version 2025-06-02",
        ),
        (
            # the quote is in the current version, but the pinned one is gone: never compared
            f"setid:{SETID}@3/label.boxed_warning.1",
            WARNING,
            "version not retained: 3 (current version 4)",
        ),
        (
            "nct:NCT99000001@2024-12-01/trial.conditions.1",
            None,
            "version not retained: 2024-12-01 (current version 2025-06-02)",
        ),
    ],
    ids=["gone-upstream", "no-passage", "no-passage-in-version", "old-label", "unknown-version"],
)
def test_withdrawn(handle: str, quote: str | None, detail: str) -> None:
    result = judge_one(h(handle), quote)
    assert (result.verdict, result.detail) == ("withdrawn", detail)
    assert result.checked_against is None and result.closest_match is None


def test_quote_mismatch_shows_the_closest_match() -> None:
    result = judge_one(
        h("pmid:99000001/abstract.4"), "Zentravir exposure strongly increases the risk"
    )
    assert result.verdict == "quote_mismatch"
    assert result.detail == "the quote is not verbatim in the text as issued nor as it is now"
    assert result.closest_match is not None and "Zentravir exposure" in result.closest_match
    assert result.similarity is not None and 0.5 < result.similarity < 1
    assert result.checked_against is None and result.flags == []
    assert result.passage is not None and result.passage.text == CONCLUSIONS


@pytest.mark.parametrize(
    "quote",
    ["During 48 210 person-years", "Farrow Syndrome", "312 children were diagnosed with Farrow."],
    ids=["digit-changed", "case", "word-dropped"],
)
def test_quote_with_one_detail_changed_is_a_mismatch(quote: str) -> None:
    quote = quote.replace("48 210", "48 201")
    assert judge_one(h("pmid:99000001/abstract.3"), quote).verdict == "quote_mismatch"


def test_empty_quote_is_a_mismatch() -> None:
    result = judge_one(h("pmid:99000001/abstract.3"), " \u200b ")
    assert (result.verdict, result.detail) == ("quote_mismatch", "the quote is empty")
    assert result.closest_match is None


def test_ok_without_quote() -> None:
    result = judge_one(h("pmid:99000001/abstract.3"))
    assert (result.verdict, result.detail, result.flags) == ("ok", None, [])
    assert result.checked_against is None
    assert result.passage is not None and result.passage.text == RESULTS
    assert result.current_passage is None
    assert result.record is not None and result.record.title is not None


def test_ok_quote_in_typographic_variants() -> None:
    quote = "During 48\u00a0210 person\u2011years of follow\u2010up, 312 children"
    result = judge_one(h("pmid:99000001/abstract.3"), quote)
    assert (result.verdict, result.checked_against) == ("ok", "issued")


# ---------------------------------------------------------------------------------------------
# Versions: as issued and as now


def test_old_trial_version_ok_with_version_changed_checked_as_issued() -> None:
    result = judge_one(h("nct:NCT99000001@2025-01-15/trial.brief_summary.1"), "20 mg daily")
    assert (result.verdict, result.checked_against) == ("ok", "issued")
    assert flags(result) == [
        ("version_changed", "current version 2025-06-02 (this passage changed)")
    ]
    assert result.passage is not None and result.passage.version == "2025-01-15"
    assert result.passage.text == OLD_SUMMARY
    assert result.current_passage is not None and result.current_passage.text == NEW_SUMMARY


def test_quote_only_in_the_current_text_is_checked_against_current() -> None:
    result = judge_one(h("nct:NCT99000001@2025-01-15/trial.brief_summary.1"), "10 mg daily")
    assert (result.verdict, result.checked_against) == ("ok", "current")
    assert result.passage is not None and result.passage.version == "2025-01-15"
    assert result.current_passage is not None and result.current_passage.version == "2025-06-02"


def test_quote_in_both_versions_is_checked_against_the_text_as_issued() -> None:
    result = judge_one(h("nct:NCT99000001@2025-01-15/trial.brief_summary.1"), "compared with")
    assert (result.verdict, result.checked_against) == ("ok", "issued")


def test_quote_in_neither_version_is_a_mismatch() -> None:
    result = judge_one(h("nct:NCT99000001@2025-01-15/trial.brief_summary.1"), "30 mg daily")
    assert result.verdict == "quote_mismatch"
    assert result.passage is not None and result.passage.version == "2025-01-15"
    assert result.current_passage is not None and result.current_passage.version == "2025-06-02"


def test_version_changed_says_when_the_passage_is_unchanged_or_gone() -> None:
    same = judge_one(h("nct:NCT99000001@2025-01-15/trial.conditions.1"))
    gone = judge_one(h("nct:NCT99000001@2025-01-15/trial.arms.2"))
    assert flags(same) == [
        ("version_changed", "current version 2025-06-02 (this passage is unchanged)")
    ]
    assert flags(gone) == [
        ("version_changed", "current version 2025-06-02 (this passage is gone from it)")
    ]
    assert gone.current_passage is None


def test_current_version_pinned_has_no_version_changed() -> None:
    result = judge_one(h("nct:NCT99000001@2025-06-02/trial.brief_summary.1"), "10 mg daily")
    assert (result.verdict, result.checked_against, result.flags) == ("ok", "issued", [])
    assert result.current_passage is None


def test_unpinned_handle_accepts_any_retained_version_without_version_changed() -> None:
    old = judge_one(h("pmid:99000020/abstract.1"), "40 patients")
    new = judge_one(h("pmid:99000020/abstract.1"), "41 patients")
    only_old = judge_one(h("pmid:99000020/abstract.2"))
    assert (old.verdict, old.checked_against, old.flags) == ("ok", "issued", [])
    assert old.passage is not None and old.passage.version == "1"
    assert old.current_passage is not None and old.current_passage.version == "2"
    assert (new.verdict, new.checked_against) == ("ok", "issued")
    assert new.passage is not None and new.passage.version == "2" and new.current_passage is None
    assert (only_old.verdict, only_old.flags) == ("ok", [])
    assert only_old.passage is not None and only_old.passage.version == "1"


# ---------------------------------------------------------------------------------------------
# Flags


@pytest.mark.parametrize(
    ("handle", "expected"),
    [
        (
            "pmid:99000002/abstract.1",
            [("retracted", "retraction notices doi:10.5555/demo.0003, pmid:99000003")],
        ),
        ("pmid:99000007/abstract.1", [("retracted", "marked retracted by the source")]),
        (
            "pmid:99000004/abstract.1",
            [("expression_of_concern", "expression of concern pmid:99000005")],
        ),
        ("ppr:PPR990001@1/abstract.1", [("preprint", "published as pmid:99000006")]),
        (
            f"setid:{SETID}@4/label.boxed_warning.1",
            [],
        ),
    ],
    ids=["retracted", "retracted-without-notice", "expression-of-concern", "preprint", "none"],
)
def test_flags(handle: str, expected: list[tuple[str, str]]) -> None:
    result = judge_one(h(handle))
    assert result.verdict == "ok"
    assert flags(result) == expected


def test_unknown_flags_are_not_shown() -> None:
    # pmid:99000020 has retracted/expression_of_concern/preprint = None (unknown)
    assert judge_one(h("pmid:99000020/abstract.1")).flags == []


def test_flags_only_on_ok() -> None:
    result = judge_one(h("pmid:99000002/abstract.1"), "Five children")
    assert (result.verdict, result.flags) == ("quote_mismatch", [])
    assert result.record is not None and result.record.retracted is True
