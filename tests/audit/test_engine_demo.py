"""The audit on REAL snapshots built from the demo corpus (snapshots/demo.toml, offline replay).

Two snapshots are built once per session: OLD from ``replay/`` and NEW from
``replay-update/`` + ``replay/`` with OLD as its parent, so NEW retains the trial's and the
label's older versions. Handles are minted with the public demo key, as ``citeseal demo`` does.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from audit.citations import parse_answer
from audit.duckdb_corpus import DuckDBCorpus
from audit.engine import AnswerInput, CitationInput, SentenceInput, audit_answer, judge_citations
from audit.handles import mint, parse_locator
from audit.keys import Keyring
from audit.render_text import render_text
from audit.report import CitationResult, Report
from pipeline.settings import Settings
from pipeline.snapshot.build import build_snapshot
from tests.conftest import TEST_KEYRING

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "snapshots"
KEYRING = Keyring.demo_keyring()
SETID = "5eed0001-0000-4000-8000-000000000001"


@dataclass(frozen=True)
class DemoSnapshots:
    old: Path
    new: Path


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoSnapshots:
    """OLD (first harvest) and NEW (second harvest, OLD as parent), built from the replays."""
    base = tmp_path_factory.mktemp("demo-snapshots")
    settings = Settings(data_dir=base / "data")
    replay, update = DEMO / "demo" / "replay", DEMO / "demo" / "replay-update"
    built = []
    for folder, replays, parent in (
        ("first", [replay], None),
        ("second", [update, replay], "first"),
    ):
        (base / folder).mkdir()
        spec = base / folder / "demo.toml"
        shutil.copy(DEMO / "demo.toml", spec)
        result = build_snapshot(
            spec,
            keyring=TEST_KEYRING,
            replay=replays,
            parent=built[0] if parent else None,
            settings=settings,
            resume=False,
        )
        built.append(result.path)
    return DemoSnapshots(old=built[0], new=built[1])


@pytest.fixture(scope="session")
def new(demo: DemoSnapshots) -> Iterator[DuckDBCorpus]:
    with DuckDBCorpus(demo.new) as corpus:
        yield corpus


@pytest.fixture(scope="session")
def old(demo: DemoSnapshots) -> Iterator[DuckDBCorpus]:
    with DuckDBCorpus(demo.old) as corpus:
        yield corpus


def h(locator: str) -> str:
    return mint(KEYRING, parse_locator(locator))


def forge(handle: str) -> str:
    return handle[:-1] + ("0" if handle[-1] != "0" else "1")


def judge(corpus: DuckDBCorpus, handle: str, quote: str | None = None) -> CitationResult:
    (result,) = judge_citations([CitationInput.from_text(handle, quote)], corpus, KEYRING)
    return result


# ---------------------------------------------------------------------------------------------
# Tekmeria's demo, reproduced on our demo corpus


TEKMERIA_CASES = f"""\
A nationwide cohort found no increased risk of Farrow syndrome after prenatal zentravir \
exposure [{h("pmid:99000001/abstract.3")} "During 48 210 person-years of follow-up, 312 children \
were diagnosed with Farrow syndrome"].
The same study concluded that zentravir raises the risk of Farrow syndrome \
[{h("pmid:99000001/abstract.4")} "Zentravir exposure strongly increases the risk of Farrow \
syndrome"].
A second cohort reported the same null association [{forge(h("pmid:99000001/abstract.3"))}].
Earlier reviews reached the same conclusion [pmid:99000001-abstract].
A case series that proposed a link was later retracted [{h("pmid:99000002/abstract.1")}].
Parents should discuss the treatment plan with their paediatrician.
"""


def test_the_six_planted_cases_fail_with_tekmerias_counts(new: DuckDBCorpus) -> None:
    report = audit_answer(parse_answer(TEKMERIA_CASES), new, KEYRING, source_label="demo.md")
    lines = render_text(report).splitlines()
    assert report.verdict == "fail"
    assert lines[0] == "verdict: FAIL  (5 citations: 1 malformed, 1 forged, 1 quote_mismatch, 2 ok)"
    # Tekmeria prints "fabricated: 1"; DESIGN.md counts malformed + forged, so we print 2.
    assert lines[1] == (
        "fabricated: 2  retracted cited: 1  cited sentences: 2/6  verbatim quotes: 1/2"
    )
    statuses = [line.split(":")[0] for line in lines[3:] if line.startswith("[")]
    assert statuses == [
        "[1] cited",
        "[2] invalid_only",
        "[3] invalid_only",
        "[4] invalid_only",
        "[5] cited",
        "[6] uncited",
    ]
    verdicts = [(c.verdict, [f.name for f in c.flags]) for c in report.citations()]
    assert verdicts == [
        ("ok", []),
        ("quote_mismatch", []),
        ("forged", []),
        ("malformed", []),
        ("ok", ["retracted"]),
    ]
    closest = next(line for line in lines if "closest:" in line)
    assert closest.startswith(
        '                   closest: "Zentravir exposure does not increase the risk of Farrow '
        "syndrome."
    )
    assert report.verdict_reasons == [
        "fail: 1 malformed citation",
        "fail: 1 forged citation",
        "warn: 1 quote_mismatch citation",
        "warn: 3 sentences with only invalid citations",
        "warn: 1 citation of a retracted record",
        "warn: 1 uncited sentence",
    ]


# ---------------------------------------------------------------------------------------------
# A handle minted from an old version verifies against the newer snapshot


@pytest.mark.parametrize(
    ("locator", "old_only", "current"),
    [
        (
            "nct:NCT99000001@2025-01-15/trial.brief_summary.1",
            "Participants take zentravir or placebo once daily for 24 weeks.",
            "2025-06-02",
        ),
        (
            f"setid:{SETID}@3/label.boxed_warning.1",
            "Zentravir can cause serious liver injury",
            "4",
        ),
    ],
    ids=["trial", "label"],
)
def test_old_version_handle_on_the_newer_snapshot(
    old: DuckDBCorpus, new: DuckDBCorpus, locator: str, old_only: str, current: str
) -> None:
    handle = h(locator)
    then = judge(old, handle, old_only)
    now = judge(new, handle, old_only)
    assert (then.verdict, then.flags, then.checked_against) == ("ok", [], "issued")
    assert (now.verdict, now.checked_against) == ("ok", "issued")
    assert [(f.name, f.detail) for f in now.flags] == [
        ("version_changed", f"current version {current} (this passage changed)")
    ]
    assert now.passage is not None and old_only in now.passage.text
    assert now.current_passage is not None and old_only not in now.current_passage.text
    assert now.current_passage.version == current


def test_quote_only_in_the_current_trial_text_is_checked_against_current(
    new: DuckDBCorpus,
) -> None:
    result = judge(new, h("nct:NCT99000001@2025-01-15/trial.brief_summary.1"), "48 weeks")
    assert (result.verdict, result.checked_against) == ("ok", "current")


def test_quote_in_neither_version_of_the_label(new: DuckDBCorpus) -> None:
    result = judge(new, h(f"setid:{SETID}@3/label.boxed_warning.1"), "above 4 times")
    assert result.verdict == "quote_mismatch"
    assert result.closest_match is not None


# ---------------------------------------------------------------------------------------------
# Every verdict and flag on the real snapshot


@pytest.mark.parametrize(
    ("handle", "quote", "verdict", "detail"),
    [
        ("pmid:99000001-abstract", None, "malformed", None),
        (forge(h("pmid:99000001/abstract.3")), None, "forged", None),
        (
            h("pmid:99000999/abstract.1"),
            None,
            "unavailable",
            "pmid:99000999 was never in this snapshot's lineage",
        ),
        (
            h("nct:NCT99000009@2025-01-01/trial.brief_summary.1"),
            None,
            "unavailable",
            "nct:NCT99000009 was never in this snapshot's lineage",
        ),
        (
            h("pmid:99000001/abstract.9"),
            None,
            "withdrawn",
            "no passage abstract.9 in pmid:99000001",
        ),
        (
            h("nct:NCT99000001@2024-12-01/trial.brief_summary.1"),
            "24 weeks",
            "withdrawn",
            "version not retained: 2024-12-01 (current version 2025-06-02)",
        ),
        (
            h("pmid:99000001/abstract.4"),
            "Zentravir exposure increases the risk",
            "quote_mismatch",
            "the quote is not verbatim in the text as issued nor as it is now",
        ),
        (h("pmcid:PMC99000001/body.results.p2"), "0.97 (95% CI, 0.84-1.12)", "ok", None),
    ],
    ids=[
        "malformed",
        "forged",
        "unavailable-record",
        "unavailable-trial",
        "withdrawn-passage",
        "withdrawn-version",
        "quote-mismatch",
        "ok-folded-dash",
    ],
)
def test_verdicts_on_the_demo_snapshot(
    new: DuckDBCorpus, handle: str, quote: str | None, verdict: str, detail: str | None
) -> None:
    result = judge(new, handle, quote)
    assert result.verdict == verdict
    if detail is not None:
        assert result.detail == detail


@pytest.mark.parametrize(
    ("locator", "flag", "detail"),
    [
        (
            "pmid:99000002/abstract.1",
            "retracted",
            "retraction notice pmid:99000003",  # PubMed and Crossref: one notice
        ),
        (
            "pmid:99000004/abstract.3",
            "expression_of_concern",
            "expression of concern pmid:99000005",
        ),
        ("ppr:PPR990001@1/abstract.1", "preprint", "published as pmid:99000006"),
        (
            "nct:NCT99000001@2025-01-15/trial.conditions.1",
            "version_changed",
            "current version 2025-06-02 (this passage is unchanged)",
        ),
    ],
    ids=["retracted", "expression-of-concern", "preprint", "version-changed"],
)
def test_flags_on_the_demo_snapshot(
    new: DuckDBCorpus, locator: str, flag: str, detail: str
) -> None:
    result = judge(new, h(locator))
    assert result.verdict == "ok"
    assert [(f.name, f.detail) for f in result.flags] == [(flag, detail)]


def test_a_plain_record_has_no_flags(new: DuckDBCorpus) -> None:
    result = judge(new, h("pmid:99000006/abstract.1"))
    assert (result.verdict, result.flags) == ("ok", [])
    assert result.record is not None and result.record.title is not None


@pytest.fixture(scope="session")
def failed(demo: DemoSnapshots, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DuckDBCorpus]:
    """A rebuild of NEW in which every harvest failed (no recorded exchange): all carried."""
    base = tmp_path_factory.mktemp("demo-failed")
    spec = base / "demo.toml"
    shutil.copy(DEMO / "demo.toml", spec)
    (base / "empty").mkdir()
    result = build_snapshot(
        spec,
        keyring=TEST_KEYRING,
        replay=[base / "empty"],
        parent=demo.new,
        allow_partial=True,
        settings=Settings(data_dir=base / "data"),
        resume=False,
    )
    with DuckDBCorpus(result.path) as corpus:
        yield corpus


@pytest.fixture(scope="session")
def literature(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DuckDBCorpus]:
    """The demo spec without its registry sections: trials and labels not harvested."""
    base = tmp_path_factory.mktemp("demo-literature")
    spec = base / "demo.toml"
    spec.write_text(
        (DEMO / "demo.toml").read_text(encoding="utf-8").split("[clinicaltrials]")[0],
        encoding="utf-8",
    )
    result = build_snapshot(
        spec,
        keyring=TEST_KEYRING,
        replay=[DEMO / "demo" / "replay"],
        settings=Settings(data_dir=base / "data"),
        resume=False,
    )
    with DuckDBCorpus(result.path) as corpus:
        yield corpus


def test_a_record_carried_through_a_failed_harvest_is_judged_and_flagged_not_refreshed(
    demo: DemoSnapshots, failed: DuckDBCorpus
) -> None:
    assert failed.source_status()["clinicaltrials"] == "failed"
    assert "nct:NCT99000001" in failed.records(["nct:NCT99000001"])  # carried from the parent
    result = judge(failed, h("nct:NCT99000001@2025-06-02/trial.brief_summary.1"))
    assert (result.verdict, [(f.name, f.detail) for f in result.flags]) == (
        "ok",
        [
            (
                "not_refreshed",
                "this snapshot's harvest could not refresh the record; it is as snapshot "
                f"{demo.new.stem} had it",
            )
        ],
    )


def _child(
    tmp_path_factory: pytest.TempPathFactory, parent: Path, name: str, drop: str
) -> Iterator[DuckDBCorpus]:
    """A partial child of ``parent`` built from the demo replay without ``drop`` (a file or a
    folder of it): the reviewer's reproducers of issue 12."""
    base = tmp_path_factory.mktemp(name)
    spec = base / "demo.toml"
    shutil.copy(DEMO / "demo.toml", spec)
    replay = base / "replay"
    shutil.copytree(DEMO / "demo" / "replay", replay)
    dropped = replay / drop
    shutil.rmtree(dropped) if dropped.is_dir() else dropped.unlink()
    result = build_snapshot(
        spec,
        keyring=TEST_KEYRING,
        replay=[replay],
        parent=parent,
        allow_partial=True,
        settings=Settings(data_dir=base / "data"),
        resume=False,
    )
    assert result.manifest.partial
    with DuckDBCorpus(result.path) as corpus:
        yield corpus


@pytest.fixture(scope="session")
def no_trials(
    demo: DemoSnapshots, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DuckDBCorpus]:
    """OLD's child without ClinicalTrials.gov answers: the clinicaltrials harvest failed."""
    yield from _child(tmp_path_factory, demo.old, "demo-no-trials", "clinicaltrials")


@pytest.fixture(scope="session")
def no_update(
    demo: DemoSnapshots, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DuckDBCorpus]:
    """OLD's child without one Crossref answer (pmid:99000004's notices): the batch of the
    six PubMed DOIs fails as a whole, so their records kept their parent state."""
    yield from _child(
        tmp_path_factory, demo.old, "demo-no-update", "crossref/works-7bacd07c7cf5.json"
    )


def test_a_trial_carried_through_a_failed_harvest_is_ok_as_against_its_parent(
    demo: DemoSnapshots, old: DuckDBCorpus, no_trials: DuckDBCorpus
) -> None:
    handle = h("nct:NCT99000001@2025-01-15/trial.brief_summary.1")
    assert no_trials.source_status()["clinicaltrials"] == "failed"
    assert judge(old, handle).verdict == "ok"
    result = judge(no_trials, handle)
    assert (result.verdict, [f.name for f in result.flags]) == ("ok", ["not_refreshed"])
    assert result.passage == judge(old, handle).passage


def test_an_audit_of_the_record_whose_refresh_failed_warns_not_passes(
    demo: DemoSnapshots, no_update: DuckDBCorpus
) -> None:
    parsed = parse_answer(f"[{h('pmid:99000004/title')}]\n")
    report = audit_answer(parsed, no_update, KEYRING)
    (citation,) = report.citations()
    assert (report.verdict, report.verdict_reasons) == (
        "warn",
        ["warn: 1 citation of a record this snapshot did not refresh"],
    )
    assert (citation.verdict, [(f.name, f.detail) for f in citation.flags][-1]) == (
        "ok",
        (
            "not_refreshed",
            "this snapshot's harvest could not refresh the record; it is as snapshot "
            f"{demo.old.stem} had it",
        ),
    )
    failing = audit_answer(parsed, no_update, KEYRING, fail_on=["not_refreshed"])
    assert (failing.verdict, failing.verdict_reasons) == (
        "fail",
        ["fail: 1 citation of a record this snapshot did not refresh"],
    )
    # the preprint's notices were asked in a batch of their own, which was answered
    preprint = parse_answer(f"[{h('ppr:PPR990001@1/abstract.1')}]\n")
    refreshed = audit_answer(preprint, no_update, KEYRING)
    assert refreshed.verdict == "pass"  # the records its harvest did refresh are not flagged


def test_unavailable_when_the_source_was_not_harvested(literature: DuckDBCorpus) -> None:
    result = judge(literature, h(f"setid:{SETID}@4/label.boxed_warning.1"))
    assert (result.verdict, result.detail) == (
        "unavailable",
        "openfda was not harvested in this snapshot",
    )
    assert judge(literature, h("pmid:99000001/abstract.4")).verdict == "ok"


@pytest.mark.parametrize(
    ("spell", "detail"),
    [
        (
            lambda h: h.replace(":", "\\:", 1),
            "Markdown escape '\\:' at character 5 of the handle, expected ':'",
        ),
        (
            lambda h: h.replace(":", "&#58;", 1),
            "character reference '&#58;' at character 5 of the handle, expected ':'",
        ),
        (
            lambda h: h.replace(":", "&colon;", 1),
            "character reference '&colon;' at character 5 of the handle, expected ':'",
        ),
        (
            lambda h: "pm**id**" + h[4:],
            "emphasis marker '**' at character 3 of the handle; a handle is written without "
            "Markdown",
        ),
    ],
    ids=["escape", "decimal-reference", "named-reference", "strong"],
)
def test_a_forged_handle_hidden_by_markup_fails_the_audit(
    new: DuckDBCorpus, spell: Callable[[str], str], detail: str
) -> None:
    forged = forge(h("pmid:99000001/abstract.3"))
    plain = audit_answer(parse_answer(f"The drug is safe {forged}.\n"), new, KEYRING)
    assert [c.verdict for s in plain.sentences for c in s.citations] == ["forged"]
    report = audit_answer(parse_answer(f"The drug is safe {spell(forged)}.\n"), new, KEYRING)
    (citation,) = [c for s in report.sentences for c in s.citations]
    assert (report.verdict, citation.verdict, citation.detail) == ("fail", "malformed", detail)


# ---------------------------------------------------------------------------------------------
# Sentence statuses and overall rules on the real snapshot

OK = h("pmid:99000001/abstract.4")
RETRACTED = h("pmid:99000002/abstract.1")
WITHDRAWN = h("pmid:99000001/abstract.9")
UNAVAILABLE = h("pmid:99000999/abstract.1")


def answer(*sentences: tuple[str, ...]) -> AnswerInput:
    return AnswerInput(
        tuple(
            SentenceInput(i, f"Sentence {i}.", "sentence", tuple(map(CitationInput.from_text, s)))
            for i, s in enumerate(sentences, start=1)
        )
    )


@pytest.mark.parametrize(
    ("sentences", "verdict", "statuses"),
    [
        (((OK,),), "pass", ["cited"]),
        (((OK, "pmid:99000001-abstract"),), "fail", ["cited"]),
        (((OK, forge(OK)),), "fail", ["cited"]),
        (((OK, WITHDRAWN),), "warn", ["cited"]),
        (((OK, UNAVAILABLE),), "incomplete", ["cited"]),
        (((OK,), (WITHDRAWN,)), "warn", ["cited", "invalid_only"]),
        (((RETRACTED,),), "warn", ["cited"]),
        (((OK,), ()), "warn", ["cited", "uncited"]),
    ],
    ids=[
        "pass",
        "fail-malformed",
        "fail-forged",
        "warn-withdrawn",
        "incomplete-unavailable",
        "warn-invalid-only",
        "warn-retracted",
        "warn-uncited",
    ],
)
def test_overall_rules_on_the_demo_snapshot(
    new: DuckDBCorpus, sentences: tuple[tuple[str, ...], ...], verdict: str, statuses: list[str]
) -> None:
    report = audit_answer(answer(*sentences), new, KEYRING)
    assert report.verdict == verdict
    assert [s.status for s in report.sentences] == statuses


def test_quote_mismatch_warns_on_the_demo_snapshot(new: DuckDBCorpus) -> None:
    parsed = parse_answer(f'One [{OK}]. Two [{OK} "Zentravir exposure increases"] [{OK}].\n')
    report = audit_answer(parsed, new, KEYRING)
    assert (report.verdict, report.verdict_reasons) == (
        "warn",
        ["warn: 1 quote_mismatch citation"],
    )


def test_report_names_the_snapshot_and_the_demo_key(demo: DemoSnapshots, new: DuckDBCorpus) -> None:
    report: Report = audit_answer(parse_answer(f"One [{OK}].\n"), new, KEYRING)
    assert report.snapshot.name == "demo"
    assert report.snapshot.path == demo.new.name  # opened by an absolute path: its file name
    assert report.snapshot.snapshot_id == demo.new.stem
    assert len(report.snapshot.sha256) == 64
    assert (report.key.demo, report.key.fingerprint) == (True, KEYRING.fingerprint)
