"""The rules judge, one signal at a time, on our own invented sentences."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.support import cues
from audit.support.model import Entity, Evidence, SupportResult
from audit.support.numbers import quantities
from audit.support.rules import (
    NAME,
    VERSION,
    RulesJudge,
    Thresholds,
    best_match,
    sentences,
    threshold_grid,
)

JUDGE = RulesJudge()
VITAMIN_D = "MESH:D014807"


def judge(claim: str, passage: str, entities: tuple[Entity, ...] = ()) -> SupportResult:
    result = JUDGE.judge(claim, Evidence(text=passage, entities=entities))
    if result.evidence is not None:
        span = result.evidence
        assert passage[span.start : span.end] == span.text
    return result


def test_the_planted_case_raises_against_does_not_increase_is_contradicted() -> None:
    result = judge(
        "zentravir raises the risk of stroke",
        "In this cohort, zentravir does not increase the risk of stroke.",
    )
    assert result.label == "contradicted"
    assert result.reason == (
        'the passage reports a null finding ("does not increase") where the claim asserts an '
        "effect (3 of 4 claim terms)."
    )
    assert result.evidence is not None and result.evidence.start == 0
    assert (result.judge, result.judge_version) == (NAME, VERSION)


def test_a_paraphrase_with_the_same_direction_is_supported() -> None:
    result = judge(
        "zentravir raises the risk of stroke",
        "Farrowland was sunny. Zentravir use was associated with a higher risk of stroke.",
    )
    assert result.label == "supported"
    assert result.reason == (
        "the best-matching sentence says the same: it holds 3 of 4 claim terms with the same "
        "direction (up)."
    )
    assert result.evidence is not None
    assert result.evidence.text == "Zentravir use was associated with a higher risk of stroke."


def test_one_shared_term_is_too_few_to_support_even_a_three_term_claim() -> None:
    one = judge("zentravir relieves coughing", "Coughing was common in the invented cohort.")
    assert (one.label, one.reason) == (
        "abstain",
        "the best-matching sentence holds only 1 of 3 claim terms, too few for a verdict.",
    )
    two = judge("zentravir relieves coughing", "Zentravir relieved coughing in the cohort.")
    assert two.label == "supported"


def test_an_unrelated_passage_is_not_mentioned_without_a_span() -> None:
    result = judge(
        "zentravir raises the risk of stroke in older adults with kidney disease",
        "The invented registry followed patients in Farrowland for five years.",
    )
    assert result.label == "not_mentioned"
    assert result.reason == "no sentence of the passage holds the claim (best: 0 of 8 claim terms)."
    assert result.evidence is None


MORTALITY_13 = "Mortality was 13 % among zentravir patients."
MORTALITY_30 = "Mortality was 30 % among zentravir patients."


@pytest.mark.parametrize(
    ("claim", "passage", "label"),
    [
        (MORTALITY_30.rstrip("."), MORTALITY_13, "contradicted"),
        (MORTALITY_30.rstrip("."), MORTALITY_30, "supported"),
        ("Mortality was more than 20 % among zentravir patients", MORTALITY_30, "supported"),
    ],
)
def test_figures_with_units_and_signs_are_compared(claim: str, passage: str, label: str) -> None:
    assert judge(claim, passage).label == label


def test_a_different_figure_names_both_figures() -> None:
    result = judge(MORTALITY_30.rstrip("."), MORTALITY_13)
    assert result.reason == (
        'the passage gives a different figure ("30 %" against "13 %") (3 of 3 claim terms).'
    )


def test_figures_of_different_quantities_are_not_compared() -> None:
    # 13 % measures mortality, the claim's 30 % measures weight gain: no figure signal at all
    result = judge(
        "Weight gain reached 30 % with zentravir",
        "Mortality was 13 % with zentravir, and weight gain reached thirty percent.",
    )
    assert result.label != "contradicted"


@pytest.mark.parametrize(
    ("claim", "passage", "agrees"),
    [
        ("> 24 weeks", "> 24 weeks", True),  # a bound implies itself
        ("> 24 weeks", "> 30 weeks", True),
        ("> 24 weeks", "≥ 25 weeks", True),
        ("> 24 weeks", "≥ 24 weeks", False),  # 24 itself is allowed by the passage only
        ("≥ 24 weeks", "> 24 weeks", True),
        ("≥ 24 weeks", "≥ 20 weeks", False),
        ("< 5 %", "< 5 %", True),
        ("< 5 %", "≤ 5 %", False),
        ("≤ 5 %", "< 3 %", True),
        ("> 24 weeks", "< 30 weeks", False),  # opposite directions settle nothing
        ("> 24 weeks", "30 weeks", True),
        ("> 24 weeks", "24 weeks", False),
        ("24 weeks", "> 24 weeks", False),  # a bound is no exact figure
        ("≥ 24 weeks", "30 weeks", True),
        ("≥ 24 weeks", "24 weeks", True),  # the claim's bound allows 24 itself
        ("≥ 24 weeks", "20 weeks", False),
        ("< 5 %", "3 %", True),
        ("< 5 %", "5 %", False),  # 5 itself is outside a strict bound
        ("≤ 5 %", "3 %", True),
        ("≤ 5 %", "5 %", True),
        ("≤ 5 %", "6 %", False),
        ("< 24 weeks", "≤ 20 weeks", True),  # every value the passage allows is below 24
        ("< 24 weeks", "≤ 24 weeks", False),
        ("200 mg", "201 mg", True),  # within half a percent of the claim's figure: rounding
        ("200 mg", "199 mg", True),
        ("200 mg", "201.5 mg", False),
        ("0 deaths", "0 deaths", True),
    ],
)
def test_a_bound_agrees_with_a_figure_or_bound_it_is_implied_by(
    claim: str, passage: str, agrees: bool
) -> None:
    [wanted], [given] = quantities(claim), quantities(passage)
    assert wanted.agrees(given) is agrees


@pytest.mark.parametrize(
    ("claim", "passage", "excludes"),
    [
        ("10 %", "> 20 %", True),  # below the passage's bound
        ("30 %", "> 20 %", False),  # within it, but the passage does not say 30
        ("> 30 %", "> 20 %", False),  # the passage allows 25 and 35
        ("< 30 %", "> 20 %", False),  # both allow 25
        ("< 10 %", "> 20 %", True),
        ("< 20 %", "≥ 20 %", True),  # 20 itself is what only the passage allows
        ("≤ 20 %", "≥ 20 %", False),  # both allow 20
        ("> 24 weeks", "24 weeks", True),
        ("≥ 24 weeks", "24 weeks", False),
        ("> 31 %", "12 %", True),
        ("12 %", "13 %", True),  # two exact figures: excluded when they do not agree
        ("12 %", "12 %", False),
        ("200 mg", "200.5 mg", False),  # they agree within rounding, so neither rules out
        ("40 %", "≥ 30 %", False),  # within the passage's bound
        ("20 %", "≤ 30 %", False),
        ("< 24 weeks", "24 weeks", True),  # the passage's 24 is what the claim leaves out
        ("≤ 24 weeks", "24 weeks", False),
        ("< 10 %", "20 %", True),
    ],
)
def test_a_figure_is_ruled_out_only_where_no_value_can_be_both(
    claim: str, passage: str, excludes: bool
) -> None:
    [wanted], [given] = quantities(claim), quantities(passage)
    assert wanted.excludes(given) is excludes


_BOUND = "Zentravir lowered the cough rate by more than 20 % in adults with Farrow syndrome."


@pytest.mark.parametrize(
    "claim",
    [
        "Zentravir lowered the cough rate by 30 % in adults with Farrow syndrome",
        "Zentravir lowered the cough rate by more than 30 % in adults with Farrow syndrome",
        "Zentravir lowered the cough rate by less than 30 % in adults with Farrow syndrome",
    ],
)
def test_a_figure_the_passage_neither_implies_nor_rules_out_abstains(claim: str) -> None:
    result = judge(claim, _BOUND)
    assert result.label == "abstain"
    assert result.reason.startswith(
        "the passage's figure neither confirms nor rules out the claim's ("
    )
    assert '"more than 20 %")' in result.reason


@pytest.mark.parametrize(
    ("claim", "label"),
    [
        ("Zentravir lowered the cough rate by 10 % in adults with Farrow syndrome", "contradicted"),
        ("Zentravir lowered the cough rate by less than 10 % in adults with Farrow syndrome",
         "contradicted"),
        ("Zentravir lowered the cough rate by more than 10 % in adults with Farrow syndrome",
         "supported"),
    ],
)  # fmt: skip
def test_a_figure_against_a_bound_is_contradicted_only_when_ruled_out(
    claim: str, label: str
) -> None:
    assert judge(claim, _BOUND).label == label


def test_a_claim_word_for_word_its_passage_with_a_bound_is_supported() -> None:
    sentence = "Zentravir reduced the frequency of Farrow syndrome flares over 24 weeks."
    assert judge(sentence.rstrip("."), sentence).label == "supported"


def test_a_ratio_whose_interval_crosses_one_reads_as_no_effect() -> None:
    result = judge(
        "zentravir lowers mortality", "Zentravir and mortality: HR 0.97 (0.84\u20131.12)."
    )
    assert result.label == "contradicted"
    assert result.reason == (
        "the passage reports a null finding (a confidence interval containing 1) where the claim "
        "asserts an effect (2 of 3 claim terms)."
    )


def test_a_ratio_below_one_agrees_with_lowers() -> None:
    result = judge(
        "zentravir lowers mortality", "Zentravir lowered mortality (HR 0.71, 95% CI 0.60-0.84)."
    )
    assert result.label == "supported"


def test_a_ratio_above_one_contradicts_lowers() -> None:
    result = judge("zentravir lowers mortality", "Zentravir and mortality: HR 1.40 (1.10 to 1.80).")
    assert result.label == "contradicted"
    assert result.reason == (
        "the passage's ratio and interval point the other way (2 of 3 claim terms)."
    )


def test_a_hedged_denial_is_an_abstention_not_a_contradiction() -> None:
    result = judge("zentravir lowers mortality", "Zentravir may not lower mortality.")
    assert result.label == "abstain"
    assert result.reason == (
        "the passage negates the direction the claim asserts (down), but it hedges, so the "
        "denial is not explicit."
    )


@pytest.mark.parametrize(
    "passage",
    [
        "No association between zentravir and stroke was found.",
        "Stroke rates did not differ between zentravir and placebo groups.",
        "Zentravir was not significantly associated with stroke.",
        "Zentravir has not been linked to stroke.",
        "There is no strong evidence linking zentravir to stroke.",
        "We found no clear scientific evidence that zentravir causes stroke.",
    ],
)
def test_null_finding_phrasing_contradicts_an_asserted_association(passage: str) -> None:
    assert judge("zentravir is associated with stroke", passage).label == "contradicted"


@pytest.mark.parametrize(
    "passage",
    [
        "There is strong evidence linking zentravir to stroke.",
        "Zentravir has been linked to stroke.",
    ],
)
def test_evidence_and_linked_without_a_negation_are_not_null_findings(passage: str) -> None:
    assert judge("zentravir is associated with stroke", passage).label == "supported"


def test_a_null_finding_about_something_the_claim_does_not_name_is_an_abstention() -> None:
    # the passage's null finding is about zentravir; the claim is about Farrow syndrome
    result = judge(
        "patients with Farrow syndrome are at particular risk of severe stroke",
        "In this cohort, zentravir use was not associated with severe stroke.",
    )
    assert result.label == "abstain"
    assert result.reason == (
        'the passage\'s null finding ("was not associated") is about "zentravir use", which '
        "the claim does not name (2 of 7 claim terms)."
    )


def test_a_null_finding_about_what_the_claim_names_contradicts_it() -> None:
    result = judge(
        "zentravir use raises the risk of severe stroke",
        "In this cohort, zentravir use was not associated with severe stroke.",
    )
    assert result.label == "contradicted"


def test_a_null_finding_opening_with_no_is_about_the_words_after_it() -> None:
    passage = "In adults with stroke, there was no strong evidence that zentravir helps."
    named = judge("zentravir helps adults with stroke", passage)
    assert named.label == "contradicted"
    other = judge("farrocillin raises the risk of stroke in adults", passage)
    assert other.label == "abstain"
    assert other.reason == (
        'the passage\'s null finding ("no strong evidence") is about "zentravir helps", which '
        "the claim does not name (2 of 5 claim terms)."
    )


def test_an_acronym_in_the_passage_names_the_words_of_the_claim_it_abbreviates() -> None:
    result = judge(
        "angiotensin receptor blockers raise the risk of severe stroke",
        "Among adults, ARB use was not associated with severe stroke.",
    )
    assert result.label == "contradicted"


@pytest.mark.parametrize(
    ("sentence", "about"),
    [
        ("In 12,500 adults, zentravir use was not associated with stroke.", "zentravir use"),
        ("Stroke rates did not differ between the groups (zentravir, placebo).", "Stroke rates"),
        ("We saw no association between zentravir and stroke; mortality rose.", "zentravir stroke"),
        (
            "Currently there is no evidence that pets spread Farrow syndrome.",
            "pets spread Farrow syndrome",
        ),
        ("It did not differ.", ""),
    ],
)
def test_the_words_a_null_finding_is_about(sentence: str, about: str) -> None:
    [found] = cues.null_findings(sentence, 0, len(sentence))
    assert cues.null_finding(sentence, found, 0, len(sentence)).words == about


def test_initialisms_spell_runs_of_content_words() -> None:
    names = cues.initialisms(cues.tokens("ACE inhibitors and angiotensin receptor blockers"))
    assert {"ACEI", "ARB", "IARB"} <= names
    assert "AR" in names and "A" not in names


@pytest.mark.parametrize(
    ("word", "is_adverb"),
    [
        ("sufficiently", True),
        ("fully", True),
        ("family", False),
        ("supply", False),
        ("fly", False),
        ("ugly", False),  # four letters are too few for a stem and "ly"
        ("holy", False),
    ],
)
def test_adverbs_are_ly_words_that_are_not_nouns_or_verbs(word: str, is_adverb: bool) -> None:
    assert cues.adverb(cues.tokens(word)[0]) is is_adverb


def test_a_negated_noun_ending_in_ly_is_still_denied() -> None:
    result = judge(
        "Farrow syndrome runs in the family of zentravir users",
        "Farrow syndrome is seen among zentravir users with no family history.",
    )
    assert result.label == "contradicted"
    assert result.reason.startswith('the passage negates "fami", which the claim asserts')


def test_a_negated_adverb_denies_the_manner_not_the_word_it_comes_from() -> None:
    claim = "Farrow patients with sufficient zentravir levels recover"
    manner = judge(
        claim, "Farrow patients whose zentravir levels were not sufficiently raised recover."
    )
    assert manner.label != "contradicted"
    denied = judge(claim, "Farrow patients recover, though zentravir levels were not sufficient.")
    assert denied.label == "contradicted"
    assert denied.reason.startswith('the passage negates "sufficient", which the claim asserts')


def test_a_significant_effect_contradicts_a_claim_of_no_change() -> None:
    result = judge(
        "zentravir does not change mortality",
        "Zentravir significantly reduced mortality in the trial.",
    )
    assert result.label == "contradicted"
    assert result.reason == (
        "the passage reports a significant effect where the claim denies one (2 of 3 claim terms)."
    )


def test_two_negated_texts_agree() -> None:
    result = judge(
        "zentravir does not change mortality", "Zentravir did not change mortality in the trial."
    )
    assert result.label == "supported"


def test_the_opposite_direction_on_the_same_outcome_contradicts() -> None:
    result = judge(
        "zentravir reduces the risk of stroke", "Zentravir increases the risk of stroke in adults."
    )
    assert result.label == "contradicted"
    assert result.reason == (
        "the passage reports the opposite direction (up) on the same outcome (3 of 4 claim terms)."
    )


def test_opposite_directions_on_different_outcomes_do_not_contradict() -> None:
    result = judge(
        "zentravir reduces the risk of stroke",
        "Zentravir increases appetite but reduces the risk of stroke.",
    )
    assert result.label == "supported"


def test_negation_scope_ends_at_a_clause_break() -> None:
    # "no" covers "zentravir trial", not what follows "but"
    result = judge(
        "zentravir raises mortality in Farrowland",
        "No zentravir trial ran in 2020, but zentravir raises mortality in Farrowland.",
    )
    assert result.label == "supported"


def test_negation_bears_on_the_next_content_word_only() -> None:
    # "no vaccine for Farrow syndrome" denies a vaccine, not the syndrome the claim names
    result = judge(
        "Farrow syndrome spreads among zentravir users",
        "There is no vaccine for Farrow syndrome among zentravir users.",
    )
    assert result.label != "contradicted"


def test_no_known_treatment_contradicts_a_cure() -> None:
    result = judge(
        "farrocillin cures Farrow syndrome", "There is no specific treatment for Farrow syndrome."
    )
    assert result.label == "contradicted"
    assert result.reason == (
        'the passage says there is "no specific treatment" where the claim asserts one '
        "(2 of 4 claim terms)."
    )


def test_no_known_vaccine_anywhere_in_the_passage_contradicts_a_claimed_protection() -> None:
    # the sentence that denies a vaccine shares one term of twelve, and is not the best match
    passage = (
        "Farrow syndrome was first described in monkeys in Farrowland in 2019. "
        "At present there is no vaccine available."
    )
    result = judge(
        "A candidate vaccine made by Zentra Labs protected rhesus monkeys from Farrow syndrome "
        "in a small trial lasting twelve weeks.",
        passage,
    )
    assert result.label == "contradicted"
    assert result.reason == (
        'the passage says there is "no vaccine" where the claim asserts one (1 of 15 claim terms).'
    )
    assert result.evidence is not None
    assert result.evidence.text == "At present there is no vaccine available."


def test_no_known_treatment_needs_a_shared_term_and_an_asserted_cure() -> None:
    passage = "There is no vaccine for Farrow syndrome."
    unrelated = judge("Does ultraviolet light kill the zentravirus? No", passage)
    assert unrelated.label == "abstain"
    assert unrelated.reason.startswith("the claim has only 4 terms")
    denied = judge("A vaccine does not protect against Farrow syndrome.", passage)
    assert denied.label != "contradicted"


def test_entities_with_one_identifier_are_one_term_whatever_their_words() -> None:
    text = "Vitamin D levels were measured. Cholecalciferol lowered the rate of falls."
    entities = (
        Entity(0, 9, "Chemical", VITAMIN_D, "Vitamin D"),
        Entity(32, 47, "Chemical", VITAMIN_D, "Cholecalciferol"),
    )
    claim = "vitamin D lowers falls"
    with_ids = best_match(claim, Evidence(text=text, entities=entities))
    without = best_match(claim, Evidence(text=text))
    assert with_ids is not None and without is not None
    assert (with_ids.shared, with_ids.total) == (3, 3)
    assert (without.shared, without.total) == (2, 3)
    result = judge(claim, text, entities)
    assert result.label == "supported"
    assert result.evidence is not None
    assert result.evidence.text == "Cholecalciferol lowered the rate of falls."


def test_entities_with_offsets_outside_the_text_are_ignored() -> None:
    bad = (Entity(5, 500, "Chemical", VITAMIN_D, "x"), Entity(3, 1, "Gene", "1", None))
    assert judge("vitamin D lowers falls", "Vitamin D lowered falls.", bad).label == "supported"


@pytest.mark.parametrize(
    ("claim", "passage", "reason"),
    [
        ("", "Zentravir raises mortality.", "the claim has no words to look for."),
        ("the of and", "Zentravir raises mortality.", "the claim has no words to look for."),
        ("zentravir raises mortality", "", "the passage has no text to read."),
        ("zentravir raises mortality", "  \n ", "the passage has no text to read."),
    ],
)
def test_empty_input_is_an_abstention_with_the_reason(
    claim: str, passage: str, reason: str
) -> None:
    result = judge(claim, passage)
    assert (result.label, result.reason, result.evidence) == ("abstain", reason, None)


def test_sentences_are_trimmed_offsets() -> None:
    text = "  One sentence. Two sentences!\n\nthree "
    assert [text[a:b] for a, b in sentences(text)] == ["One sentence.", "Two sentences!", "three"]


def test_input_longer_than_the_limit_is_an_abstention() -> None:
    result = judge("zentravir raises mortality", "zentravir " * 30_000)
    assert result.label == "abstain"
    assert result.reason == "the claim or passage is longer than 200,000 characters."


def test_a_hedged_sentence_may_still_support_an_unhedged_claim() -> None:
    # measured and left out as a doubt (docs/support.md): a hedge holds back denials only
    result = judge("zentravir raises the risk of stroke", "Zentravir may raise the risk of stroke.")
    assert result.label == "supported"


def test_a_sentence_that_shares_the_words_but_not_the_claimed_direction_does_not_support() -> None:
    result = judge(
        "zentravir lowers blood pressure in adults",
        "Blood pressure was measured in adults taking zentravir.",
    )
    assert (result.label, result.reason) == (
        "abstain",
        "the sentence does not restate the direction the claim asserts (down) "
        "(4 of 5 claim terms).",
    )


def test_an_agreeing_figure_restates_the_claim_without_a_direction_word() -> None:
    result = judge(
        "zentravir raised mortality to 30 % among patients",
        "Mortality was 30 % among zentravir patients.",
    )
    assert result.label == "supported"
    assert result.reason == "the best-matching sentence says the same: it matches 30 %."


def test_a_claim_that_only_asks_a_question_is_not_supported() -> None:
    result = judge("Does zentravir cause farrow rash?", "Zentravir causes farrow rash in adults.")
    assert (result.label, result.reason) == (
        "abstain",
        "the claim asks a question, so there is no assertion to support (4 of 4 claim terms).",
    )


def test_a_question_answered_in_the_claim_is_read_as_an_assertion() -> None:
    result = judge("Does zentravir cause farrow rash? Yes.", "Zentravir causes farrow rash.")
    assert result.label == "supported"


@pytest.mark.parametrize(
    ("claim", "terms"),
    [("zentravir lowers mortality", 3), ("zentravir raises the risk of stroke in adults", 5)],
)
def test_a_claim_under_eight_terms_none_of_whose_words_appear_is_abstained_on(
    claim: str, terms: int
) -> None:
    result = judge(claim, "The registry followed patients in Farrowland.")
    assert (result.label, result.reason, result.evidence) == (
        "abstain",
        f"the claim has only {terms} terms, too few to say the passage does not mention it "
        f"(best: 0 of {terms} claim terms).",
        None,
    )


def test_a_short_claim_is_not_mentioned_when_the_minimum_is_lowered() -> None:
    lenient = RulesJudge(Thresholds(mention_terms=3))
    passage = Evidence(text="The registry followed adults in Farrowland.")
    assert lenient.judge("zentravir lowers mortality", passage).label == "not_mentioned"


def test_thresholds_name_every_setting_and_the_grid_holds_the_default_first() -> None:
    grid = threshold_grid()
    assert grid[0] == Thresholds()
    assert Thresholds().label == "mention=0.1,support=0.3,contradict=0.25,mention_terms=8"
    assert len(grid) == len({t.label for t in grid}) == 3 * 3 * 3 * 4  # the default is one of them


VOCABULARY = (
    "zentravir raises does not increase the risk no association HR 0.97 ( 0.84 \u2013 1.12 ) "
    "30 % 13 % may lower mortality . ; but significantly reduced no specific treatment "
    "cures vitamin D \u00e9 \n"
)
WORDS = st.sampled_from(VOCABULARY.split(" "))
TEXT = st.one_of(st.text(max_size=300), st.lists(WORDS, max_size=60).map(" ".join))


@st.composite
def evidence(draw: st.DrawFn) -> Evidence:
    text = draw(TEXT)
    entities = draw(
        st.lists(
            st.builds(
                Entity,
                st.integers(-3, len(text) + 3),
                st.integers(-3, len(text) + 3),
                st.none() | st.text(max_size=5),
                st.none() | st.sampled_from(["", "-", VITAMIN_D, "MESH:D1"]),
                st.none() | st.text(max_size=10),
            ),
            max_size=4,
        )
    )
    return Evidence(text=text, entities=tuple(entities))


@settings(max_examples=400, deadline=None)
@given(claim=TEXT, passage=evidence())
def test_the_judge_never_raises_and_its_span_is_always_cut_from_the_passage(
    claim: str, passage: Evidence
) -> None:
    result = JUDGE.judge(claim, passage)
    assert result.reason.endswith(".")
    assert "\n" not in result.reason or "\n" in claim + passage.text
    if result.evidence is not None:
        span = result.evidence
        assert 0 <= span.start <= span.end <= len(passage.text)
        assert passage.text[span.start : span.end] == span.text


@settings(max_examples=100, deadline=None)
@given(claim=TEXT, passage=evidence())
def test_judging_under_a_grid_at_once_gives_what_each_thresholds_gives_alone(
    claim: str, passage: Evidence
) -> None:
    grid = threshold_grid()[::9]
    together = JUDGE.judge_many(claim, passage, grid)
    assert together == [RulesJudge(t).judge(claim, passage) for t in grid]
