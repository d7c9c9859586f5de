"""Reference-check and claim-support categories: the oracle's readings of docs/references.md
and docs/support.md, planted and scored in process (a driver for mutation testing too)."""

from __future__ import annotations

import pytest

from audit.citations import parse_answer
from audit.engine import audit_answer
from audit.evaluation import DEMO_KEY, oracle, oracle_references, oracle_support, run
from audit.evaluation.oracle_references import Entry, RefExpected
from audit.evaluation.resolver import DownResolver
from audit.evaluation.scoring import difference
from audit.evaluation.world import World, generated_world
from audit.handles import mint, parse_locator
from audit.keys import Keyring
from audit.references.resolve import Resolver
from audit.report import Report
from audit.support.model import Evidence
from audit.support.rules import RulesJudge
from audit.support.run import with_support

NEW_GROUPS = ("references", "support")


def test_every_reference_and_support_case_comes_out_as_planted() -> None:
    result = run(seed=0, per_category=4)
    scored = [s for s in result.scores.values() if s.group in NEW_GROUPS]
    assert len(scored) == 20
    assert [f for s in scored for f in s.failures] == []
    assert all(s.renderings >= 4 and s.passed == s.renderings for s in scored)
    labels = {w: g for (w, g), n in result.labels.items() if n}
    assert labels["support:contradicted"] == "support:contradicted"
    assert labels["reference:hallucinated"] == "reference:hallucinated"
    tiers = {w for w, _ in result.labels if w.startswith("reference:")}
    assert tiers == {
        f"reference:{t}" for t in ("verified", "mismatch", "unresolved", "hallucinated")
    }


@pytest.mark.parametrize(
    ("claim", "passage", "label"),
    [  # docs/support.md's own example, then one clear case per label
        (
            "Zentravir raises the risk of Farrow syndrome.",
            "Zentravir does not increase the risk of Farrow syndrome.",
            "contradicted",
        ),
        (
            "Zentravir reduced the weekly flare rate by 12% in children",
            "Zentravir lowered the weekly flare rate by 12% in children.",
            "supported",
        ),
        (
            "Zentravir reduced the weekly flare rate by 30% in children",
            "Zentravir lowered the weekly flare rate by 12% in children.",
            "contradicted",
        ),
        (
            "Zentravir reduces hepatic injury in elderly patients",
            "Zentravir may not reduce hepatic injury in elderly patients.",
            "abstain",
        ),
        (
            "Weekly yoga classes improved sleep quality among retired office workers",
            "Zentravir may not reduce hepatic injury in elderly patients.",
            "not_mentioned",
        ),
    ],
)
def test_the_support_oracle_reads_clear_signals(claim: str, passage: str, label: str) -> None:
    assert oracle_support.label(claim, passage) == label


_COUGH = "Zentravir lowered the cough rate by more than 20% in adults."
_FLARE = "Zentravir lowered the flare rate by 12% in adults."


@pytest.mark.parametrize(
    ("claim", "passage", "label"),
    [  # docs/support.md's figure rules: implied, ruled out, or open
        ("Zentravir reduced the cough rate by more than 20% in adults", _COUGH, "supported"),
        ("Zentravir lowered the cough rate over 20% in adults", _COUGH, "supported"),
        ("Zentravir lowered the cough rate by more than 10% in adults", _COUGH, "supported"),
        ("Zentravir lowered the cough rate by more than 30% in adults", _COUGH, "abstain"),
        ("Zentravir lowered the cough rate by 30% in adults", _COUGH, "abstain"),
        ("Zentravir lowered the cough rate by less than 30% in adults", _COUGH, "abstain"),
        ("Zentravir lowered the cough rate by 10% in adults", _COUGH, "contradicted"),
        ("Zentravir lowered the cough rate by 20% in adults", _COUGH, "contradicted"),
        ("Zentravir lowered the cough rate by less than 20% in adults", _COUGH, "contradicted"),
        ("Zentravir lowered the flare rate by more than 6% in adults", _FLARE, "supported"),
        ("Zentravir lowered the flare rate by less than 31% in adults", _FLARE, "supported"),
        ("Zentravir lowered the flare rate by more than 12% in adults", _FLARE, "contradicted"),
        ("Zentravir lowered the flare rate by less than 12% in adults", _FLARE, "contradicted"),
    ],
)
def test_the_support_oracle_reads_bounds(claim: str, passage: str, label: str) -> None:
    assert oracle_support.label(claim, passage) == label


@pytest.mark.parametrize(
    ("claim", "passage"),
    [
        ("Zentravir cut flares", "Zentravir cut flares in children."),  # too few words
        (  # a bound the oracle does not read
            "Zentravir reduced flares by at least 20% in children",
            "Zentravir reduced flares by at least 20% in children.",
        ),
        (  # two figures of one unit: which is the same quantity is unclear
            "Zentravir reduced flares by 20% in children",
            "Zentravir reduced flares by 20% and falls by 5% in children.",
        ),
        (  # a denial beside a figure: the judge may abstain
            "Doses of 2 mg raised the risk of renal events",
            "Doses of 2 mg did not increase the risk of renal events.",
        ),
        ("Sleep improved among office workers", "Zentravir lowered flares."),  # short claim
    ],
)
def test_the_support_oracle_decides_nothing_unclear(claim: str, passage: str) -> None:
    assert oracle_support.label(claim, passage) is None


def _entry(world_rec: str, **changes: object) -> Entry:
    rec = generated_world().records[world_rec]
    assert rec.bib is not None
    entry = Entry(
        (("pmid", world_rec.split(":")[1]),), rec.bib.title, rec.bib.authors, rec.bib.year
    )
    return Entry(**{**entry.__dict__, **changes})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("entry", "reachable", "expected"),
    [
        (_entry("pmid:99100001"), True, RefExpected("verified")),
        (_entry("pmid:99100003"), True, RefExpected("verified", (True, None, None))),
        (_entry("pmid:99100001", year=2011), True, RefExpected("mismatch")),
        (_entry("pmid:99100001", ids=(("doi", "10.5555/none.1"),)), True, RefExpected("mismatch")),
        (
            _entry("pmid:99100001", title="Knee surgery outcomes", authors=("Ngata H",)),
            True,
            RefExpected("hallucinated"),
        ),
        (
            _entry("pmid:99100001", ids=(("nct", "NCT9912345"),), title="Knee surgery outcomes"),
            True,
            RefExpected("hallucinated"),
        ),
        (
            _entry("pmid:99100001", ids=(("doi", "10.5555/none.1"),), title="Knee surgery"),
            True,
            RefExpected("unresolved"),
        ),
        (_entry("pmid:99100001"), False, RefExpected("unresolved")),
    ],
)
def test_the_reference_oracle_gives_the_tier_of_docs_references(
    entry: Entry, reachable: bool, expected: RefExpected
) -> None:
    assert oracle_references.tier(entry, generated_world(), reachable) == expected


def test_the_reference_oracle_decides_no_title_near_the_boundaries() -> None:
    near = _entry("pmid:99100001", title="Zentravir in Farrow syndrome: a cohort")
    assert oracle_references.tier(near, generated_world()) is None


def _audited(text: str, resolver: Resolver | None = None) -> tuple[World, Report]:
    world = generated_world()
    keyring = Keyring.demo_keyring()
    report = audit_answer(
        parse_answer(text), world.corpus, keyring, text=text, references=resolver or world.resolver
    )
    return world, report


def test_a_reference_tier_other_than_planted_is_a_failure_with_its_reason() -> None:
    handle = mint(Keyring.demo_keyring(), parse_locator("pmid:99100002/body.p1"))
    entry = _entry("pmid:99100001")
    text = f"Zentravir works [{handle}] [^r1].\n\n[^r1]: {entry.text()}\n"
    world, report = _audited(text, DownResolver())
    ok = oracle.judge(handle, None, world, DEMO_KEY)
    planned = oracle.Expected(ok.verdict, ok.flags, references=(RefExpected("verified"),))
    why = difference(report, [oracle.SentencePlan("sentence", ((handle, None, planned),))])
    assert why is not None
    assert why.startswith("references: got [('unresolved', (None, None, None))]")
    assert why.endswith("expected [('verified', (None, None, None))]")


def test_a_support_label_other_than_planted_is_a_failure() -> None:
    handle = mint(Keyring.demo_keyring(), parse_locator("pmid:99100009/abstract.1"))
    text = f"Zentravir raised the risk of renal failure in adults with Farrow syndrome [{handle}]."
    world = generated_world()
    report = audit_answer(parse_answer(text), world.corpus, Keyring.demo_keyring())
    report = with_support(report, world.corpus, RulesJudge())  # type: ignore[arg-type]
    ok = oracle.judge(handle, None, world, DEMO_KEY)
    for label, differs in (("contradicted", False), ("supported", True)):
        planned = oracle.Expected(ok.verdict, ok.flags, support=label)
        why = difference(report, [oracle.SentencePlan("sentence", ((handle, None, planned),))])
        assert (why is not None) == differs


def test_a_bound_agrees_with_the_same_bound() -> None:
    sentence = "Zentravir reduced the frequency of Farrow syndrome flares over 24 weeks."
    result = RulesJudge().judge(
        sentence.rstrip("."), Evidence(text=sentence, record_id="pmid:99000004", path="abstract.4")
    )
    assert result.label == "supported"
