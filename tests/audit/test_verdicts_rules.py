"""The ladder's rules and flags called one at a time on hand-made facts (audit/verdicts.py).

test_verdicts.py drives the same rules through :func:`audit.engine.judge_citations` on the
planted corpus; these pin the details and the choices (which text is "as issued", which
passage is shown beside it, which closest match wins) that an end-to-end case leaves open.
"""

from __future__ import annotations

from audit.corpus import StoredPassage, StoredRecord, StoredRelation
from audit.folding import fold
from audit.handles import Handle, parse_locator
from audit.verdicts import (
    Facts,
    Texts,
    check_quote,
    closest_of,
    flags_of,
    judge,
    rule_malformed,
    rule_withdrawn,
    texts_of,
)

TEXT_V1 = "Zentravir 20 mg daily was compared with placebo in children."
TEXT_V2 = "Zentravir 10 mg daily was compared with placebo in adults."


def passage(version: str, text: str, record_id: str = "nct:NCT99000001") -> StoredPassage:
    return StoredPassage(record_id, version, "trial.summary.1", None, text, fold(text))


def record(**fields: object) -> StoredRecord:
    values: dict[str, object] = {
        "record_id": "nct:NCT99000001",
        "source": "clinicaltrials",
        "current_version": "v2",
        "versions": ("v1", "v2"),
    }
    values.update(fields)
    return StoredRecord(**values)  # type: ignore[arg-type]


def facts(locator: str, rec: StoredRecord, quote: str | None = None, **held: str) -> Facts:
    """Verified facts for ``locator`` on ``rec`` holding ``held`` (version → text)."""
    return Facts(
        handle=Handle(parse_locator(locator), "aaaaa"),
        quote=quote,
        verified=True,
        source_status={rec.source: "ok"},
        record=rec,
        held={v: passage(v, text, rec.record_id) for v, text in held.items()},
    )


PINNED_V1 = "nct:NCT99000001@v1/trial.summary.1"
PINNED_V2 = "nct:NCT99000001@v2/trial.summary.1"


def flag_details(f: Facts) -> dict[str, str | None]:
    return {flag.name: flag.detail for flag in flags_of(f, texts_of(f))}


# ---------------------------------------------------------------------------------------------
# Rules


def test_malformed_without_a_grammar_message_says_what_is_wrong() -> None:
    assert rule_malformed(Facts(handle=None)) == "does not match the handle grammar"
    assert rule_malformed(Facts(handle=None, error="got '-', expected a digit")) == (
        "got '-', expected a digit"
    )


def test_withdrawn_names_the_snapshot_since_when_only_when_known() -> None:
    gone = record(withdrawn=True)
    since = record(withdrawn=True, withdrawn_since="demo-1")
    assert rule_withdrawn(facts(PINNED_V1, gone, v1=TEXT_V1)) == (
        "nct:NCT99000001 was withdrawn upstream"
    )
    assert rule_withdrawn(facts(PINNED_V1, since, v1=TEXT_V1)) == (
        "nct:NCT99000001 was withdrawn upstream since snapshot demo-1"
    )


# ---------------------------------------------------------------------------------------------
# As issued, as now


def test_a_handle_pinned_to_the_current_version_has_no_separate_text_as_now() -> None:
    texts = texts_of(facts(PINNED_V2, record(), v1=TEXT_V1, v2=TEXT_V2))
    assert texts.issued is not None and texts.issued.text == TEXT_V2
    assert texts.current is None


def test_a_handle_pinned_to_an_older_version_is_checked_as_issued_then_as_now() -> None:
    texts = texts_of(facts(PINNED_V1, record(), v1=TEXT_V1, v2=TEXT_V2))
    assert (texts.issued and texts.issued.text, texts.current and texts.current.text) == (
        TEXT_V1,
        TEXT_V2,
    )


def test_check_quote_says_which_text_holds_the_quote() -> None:
    old, new = passage("v1", TEXT_V1), passage("v2", TEXT_V2)
    texts = Texts(issued=old, current=new)
    assert check_quote("20 mg  daily", texts) == ("issued", old)
    assert check_quote("in adults", texts) == ("current", new)
    assert check_quote("in adults", Texts(issued=new, current=None, others=(old,))) == (
        "issued",
        new,
    )
    assert check_quote("in children", Texts(issued=new, current=None, others=(old,))) == (
        "issued",
        old,
    )
    assert check_quote("in the elderly", texts) is None
    assert check_quote("", texts) is None


def test_ok_without_a_quote_shows_the_current_passage_beside_an_older_pinned_one() -> None:
    judgement = judge(facts(PINNED_V1, record(), v1=TEXT_V1, v2=TEXT_V2))
    assert judgement.verdict == "ok"
    assert judgement.passage is not None and judgement.passage.version == "v1"
    assert judgement.current_passage is not None and judgement.current_passage.version == "v2"


def test_a_mismatch_on_the_current_version_shows_no_second_passage() -> None:
    rec = record(record_id="pmid:99000001", source="pubmed", current_version="2", versions=("2",))
    judgement = judge(
        facts("pmid:99000001/trial.summary.1", rec, "placebo in adultz", **{"2": TEXT_V2})
    )
    assert judgement.verdict == "quote_mismatch"
    assert judgement.passage is not None and judgement.passage.version == "2"
    assert judgement.current_passage is None
    assert judgement.closest is not None and judgement.closest.text == "placebo in adults."


def test_an_empty_quote_is_a_mismatch_with_no_closest_match() -> None:
    judgement = judge(facts(PINNED_V1, record(), "", v1=TEXT_V1, v2=TEXT_V2))
    assert (judgement.verdict, judgement.detail, judgement.closest) == (
        "quote_mismatch",
        "the quote is empty",
        None,
    )
    assert judgement.current_passage is not None and judgement.current_passage.version == "v2"


# ---------------------------------------------------------------------------------------------
# The closest match


def test_the_closest_match_looks_at_every_retained_version() -> None:
    texts = Texts(issued=passage("v2", TEXT_V2), current=None, others=(passage("v1", TEXT_V1),))
    closest = closest_of("compared with placebo in childre", texts)
    assert closest is not None and closest.text == "compared with placebo in children."


def test_the_closest_match_skips_a_passage_with_no_text() -> None:
    texts = Texts(issued=passage("v1", TEXT_V1), current=passage("v2", ""))
    closest = closest_of("placebo in childre", texts)
    assert closest is not None and closest.text == "placebo in children."


def test_on_a_tie_the_closest_match_in_the_text_as_issued_wins() -> None:
    issued, current = passage("v1", "alpha betx gamma"), passage("v2", "alpha bety gamma")
    tie_issued = closest_of("alpha betz", Texts(issued=issued, current=current))
    tie_current = closest_of("alpha betz", Texts(issued=current, current=issued))
    assert tie_issued is not None and tie_current is not None
    assert tie_issued.similarity == tie_current.similarity
    assert (tie_issued.text, tie_current.text) == ("alpha betx", "alpha bety")


# ---------------------------------------------------------------------------------------------
# Flags


def notice(kind: str, target: str) -> StoredRelation:
    return StoredRelation(kind=kind, target=target)


def test_one_retraction_notice_is_named_in_the_singular() -> None:
    rec = record(relations=(notice("retracted_and_republished_in", "pmid:99000077"),))
    assert flag_details(facts(PINNED_V2, rec, v2=TEXT_V2))["retracted"] == (
        "retraction notice pmid:99000077"
    )


def test_several_retraction_notices_are_listed_sorted() -> None:
    rec = record(
        relations=(
            notice("retraction_in", "pmid:99000078"),
            notice("retracted_and_republished_in", "pmid:99000077"),
            notice("retraction_in", "pmid:99000078"),
        )
    )
    assert flag_details(facts(PINNED_V2, rec, v2=TEXT_V2))["retracted"] == (
        "retraction notices pmid:99000077, pmid:99000078"
    )


def test_an_expression_of_concern_marked_by_the_source_alone_is_flagged() -> None:
    rec = record(expression_of_concern=True)
    assert flag_details(facts(PINNED_V2, rec, v2=TEXT_V2)) == {
        "expression_of_concern": "marked with an expression of concern by the source"
    }


def test_expression_of_concern_notices_are_listed() -> None:
    rec = record(
        relations=(
            notice("expression_of_concern_in", "pmid:99000080"),
            notice("expression_of_concern_in", "pmid:99000079"),
        )
    )
    assert flag_details(facts(PINNED_V2, rec, v2=TEXT_V2)) == {
        "expression_of_concern": "expression of concern pmid:99000079, pmid:99000080"
    }


def test_a_record_the_source_marks_as_a_preprint_is_flagged_whatever_its_scheme() -> None:
    rec = record(preprint=True)
    assert flag_details(facts(PINNED_V2, rec, v2=TEXT_V2)) == {
        "preprint": "no published version known"
    }


def test_a_ppr_handle_is_a_preprint_and_its_published_versions_are_listed() -> None:
    rec = record(
        record_id="ppr:PPR990001",
        source="europepmc",
        current_version="1",
        versions=("1",),
        relations=(notice("preprint_of", "pmid:99000082"), notice("preprint_of", "pmid:99000081")),
    )
    found = flag_details(facts("ppr:PPR990001@1/abstract.1", rec, **{"1": TEXT_V1}))
    assert found == {"preprint": "published as pmid:99000081, pmid:99000082"}
    assert flag_details(facts(PINNED_V2, record(preprint=False), v2=TEXT_V2)) == {}
