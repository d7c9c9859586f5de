"""Auditing the planted answers and scoring them against the oracle.

A rendering (one case, or a whole answer, in one style) passes only when the audit finds
exactly the planted sentences — each with its kind and status, each citation with its planted
verdict, exactly its planted flags and its ``checked_against`` — and every metric and the
overall verdict come out as the oracle computes them. The first difference is the reason it
failed.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import zip_longest

from audit.citations import parse_answer
from audit.claims import parse_claims
from audit.engine import CHUNK_ANSWERS, AuditInput, audit_many
from audit.errors import InputError
from audit.evaluation import oracle
from audit.evaluation.catalogue import CATEGORIES, Planted, plant
from audit.evaluation.categories import Case, Ctx
from audit.evaluation.planting import (
    TEXT_STYLES,
    Item,
    plan_of,
    render_claims,
    render_text,
    styles_for,
)
from audit.evaluation.resolver import DownResolver
from audit.evaluation.world import World
from audit.keys import Keyring
from audit.report import Report
from audit.support.rules import RulesJudge
from audit.support.run import support_many

WHOLE = ("mixed", "clean", "paired")


@dataclass(frozen=True)
class Rendering:
    label: str  # a category name, or "answer:mixed" …
    world: str
    style: str
    text: str
    items: tuple[Item, ...]

    @property
    def plan(self) -> list[oracle.SentencePlan]:
        return plan_of(self.items)


def _render(label: str, world: str, items: Sequence[Item], style: str) -> Rendering:
    text = render_claims(items) if style == "claims" else render_text(items, style)
    return Rendering(label, world, style, text, tuple(items))


def _parsed(r: Rendering) -> object:
    return parse_claims(r.text) if r.style == "claims" else parse_answer(r.text)


Seen = tuple[str, tuple[str, ...], str | None, str | None]  # verdict, flags, against, support


def _got(report: Report) -> list[tuple[str, str, list[Seen]]]:
    return [
        (
            s.kind,
            s.status,
            [
                (
                    x.verdict,
                    tuple(f.name for f in x.flags),
                    x.checked_against,
                    x.support.label if x.support is not None else None,
                )
                for x in s.citations
            ],
        )
        for s in report.sentences
    ]


def _want(plan: Sequence[oracle.SentencePlan]) -> list[tuple[str, str, list[Seen]]]:
    return [
        (
            s.kind,
            s.status,
            [(e.verdict, e.flags, e.checked_against, e.support) for _, _, e in s.citations],
        )
        for s in plan
    ]


def _references_difference(report: Report, plan: Sequence[oracle.SentencePlan]) -> str | None:
    got = [
        (c.tier, (c.flags.retracted, c.flags.expression_of_concern, c.flags.preprint))
        for c in report.reference_checks()
    ]
    want = [(r.tier, r.flags) for s in plan for r in s.references]
    if got != want:
        reasons = [c.reason for c in report.reference_checks()]
        return f"references: got {got} {reasons}, expected {want}"
    return None


def difference(report: Report, plan: Sequence[oracle.SentencePlan]) -> str | None:
    """The first way the report differs from the plan, or None."""
    got, want = _got(report), _want(plan)
    if len(got) != len(want):
        return f"{len(got)} sentences, expected {len(want)}: got {[(k, s) for k, s, _ in got]}"
    for n, ((gk, gs, gc), (wk, ws, wc)) in enumerate(zip(got, want, strict=True), 1):
        if gk != wk:
            return f"sentence {n}: kind {gk}, expected {wk}"
        if len(gc) != len(wc):
            return f"sentence {n}: {len(gc)} citations {gc}, expected {len(wc)} {wc}"
        for m, (g, w) in enumerate(zip(gc, wc, strict=True), 1):
            if g != w:
                return f"sentence {n} citation {m}: got {g}, expected {w}"
        if gs != ws:
            return f"sentence {n}: status {gs}, expected {ws}"
    why = _references_difference(report, plan)
    if why is not None:
        return why
    metrics = report.metrics.model_dump()
    for name, value in oracle.metrics(plan).items():
        if metrics.get(name) != value:
            return f"metric {name}: got {metrics.get(name)}, expected {value}"
    fired = sorted((r.split(":")[0], int(r.split()[1])) for r in report.verdict_reasons)
    if fired != oracle.reasons(plan):
        return f"verdict reasons: got {report.verdict_reasons}, expected {oracle.reasons(plan)}"
    want_overall = oracle.overall(plan)
    if report.verdict != want_overall:
        return f"overall: got {report.verdict} {report.verdict_reasons}, expected {want_overall}"
    return None


@dataclass
class Score:
    """Per category (or whole-answer kind): renderings scored, distinct cases, passes."""

    name: str
    group: str
    renderings: int = 0
    passed: int = 0
    distinct: int = 0
    cases: int = 0
    styles: set[str] = field(default_factory=set)
    failures: list[str] = field(default_factory=list)


@dataclass
class Result:
    seed: int
    per_category: int
    worlds: list[str]
    scores: dict[str, Score]
    confusion: Counter[tuple[str, str]]
    unplanted: list[str]  # categories no world could plant a case of
    labels: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Support labels and reference tiers, planted against audited (``support:…``,
    ``reference:…``)."""

    @property
    def failures(self) -> list[str]:
        out = [f"{name}: {why}" for name, s in self.scores.items() for why in s.failures]
        return out + [f"{name}: no case could be planted in any world" for name in self.unplanted]

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def renderings(self) -> int:
        return sum(s.renderings for s in self.scores.values())

    @property
    def passed(self) -> int:
        return sum(s.passed for s in self.scores.values())


def _confusion(
    report: Report | None, plan: Sequence[oracle.SentencePlan], into: Counter[tuple[str, str]]
) -> None:
    want = [e.verdict for s in plan for _, _, e in s.citations]
    got = [] if report is None else [x.verdict for s in report.sentences for x in s.citations]
    for w, g in zip_longest(want, got, fillvalue="missing"):
        into[(w, g)] += 1


def _label_confusion(
    report: Report, plan: Sequence[oracle.SentencePlan], into: Counter[tuple[str, str]]
) -> None:
    """Support labels (of the citations planted with one) and reference tiers."""
    cites = [x for s in report.sentences for x in s.citations]
    planned = [e for s in plan for _, _, e in s.citations]
    for e, x in zip_longest(planned, cites):
        if e is not None and e.support is not None:
            got = x.support.label if x is not None and x.support is not None else "missing"
            into[(f"support:{e.support}", f"support:{got}")] += 1
    tiers = [c.tier for c in report.reference_checks()]
    wanted = [r.tier for s in plan for r in s.references]
    for w, g in zip_longest(wanted, tiers, fillvalue="missing"):
        into[(f"reference:{w}", f"reference:{g}")] += 1


def _fits(case: Case, style: str) -> bool:
    """Whether a case can stand in an answer written in ``style`` (else in brackets)."""
    if style == "claims":
        return case.claims
    return styles_for(case)[0] != "claims"


def _whole_answers(world: World, planted: Sequence[Planted], rng: random.Random) -> list[Rendering]:
    """Mixed (every case, four at a time, with a heading, bold lead-ins and uncited
    sentences), clean (genuine citations only) and paired (the first case of each category
    written as answer text, between two genuine citations)."""
    cases = [Item(case, outcomes) for p in planted for case, outcomes in p.cases if not case.alone]
    clean = [
        i
        for i in cases
        if i.case is not None
        and i.case.literal is None
        and all(e.verdict == "ok" and not e.flags for e in i.outcomes)
    ]
    writable = [i for i in clean if i.case is not None and _fits(i.case, "bracket")]
    out: list[Rendering] = []
    styles = (*TEXT_STYLES, "claims")
    for n in range(0, len(cases), 4):
        style = styles[(n // 4) % len(styles)]
        group = [i for i in cases[n : n + 4] if i.case is not None and _fits(i.case, style)]
        if group:
            items = [Item(None, kind="heading"), *group[:2], Item(None), *group[2:]]
            out.append(_render("answer:mixed", world.name, items, style))
    for n in range(0, len(clean), 3):
        style = styles[(n // 3) % len(styles)]
        group = (
            clean[n : n + 3]
            if style == "claims"
            else [i for i in clean[n : n + 3] if i in writable]
        )
        if group:
            out.append(_render("answer:clean", world.name, group, style))
    if writable:
        for p in planted:
            first = next(
                (Item(c, o) for c, o in p.cases if _fits(c, "bracket") and not c.support), None
            )
            if first is not None:
                a, b = rng.choice(writable), rng.choice(writable)
                out.append(_render("answer:paired", world.name, [a, first, b], "bracket"))
    return out


def _renderings(planted: Sequence[Planted], styles: Collection[str] | None) -> list[Rendering]:
    out = []
    for p in planted:
        for case, outcomes in p.cases:
            for style in styles_for(case):
                text_style = "as_written" if style == "literal" else style
                if styles is None or text_style in styles:
                    out.append(
                        _render(p.category.name, p.world, [Item(case, outcomes)], text_style)
                    )
    return out


@dataclass
class Prepared:
    """The planted cases of every world, written and parsed: what an evaluation audits.

    ``parsed`` holds, per world, each rendering with its parsed answer or the error the
    parser raised. Faults that leave planting alone audit the same prepared answers again."""

    seed: int
    per_category: int
    worlds: list[str]
    parsed: dict[str, list[tuple[Rendering, object | InputError]]]
    counts: dict[str, tuple[int, int]]  # category -> (cases, distinct)
    unplanted: list[str]


def prepare(
    worlds: Iterable[World],
    keyring: Keyring,
    key: bytes,
    *,
    seed: int = 0,
    per_category: int = 25,
    styles: Collection[str] | None = None,
) -> Prepared:
    """Plant every category in every world; write each case in each style (``styles``: only
    these) and compose the whole answers; parse them all."""
    counts: dict[str, tuple[int, int]] = {}
    parsed: dict[str, list[tuple[Rendering, object | InputError]]] = {}
    names = []
    for world in worlds:
        names.append(world.name)
        planted = []
        for cat in CATEGORIES:
            ctx = Ctx(world, random.Random(f"{seed}:{world.name}:{cat.name}"), keyring, key)
            p = plant(cat, ctx, per_category)
            if p.cases:
                planted.append(p)
                cases, distinct = counts.get(cat.name, (0, 0))
                counts[cat.name] = (cases + len(p.cases), distinct + p.distinct)
        rng = random.Random(f"{seed}:{world.name}:answers")
        wholes = [
            r for r in _whole_answers(world, planted, rng) if styles is None or r.style in styles
        ]
        parsed[world.name] = [(r, _parse(r)) for r in _renderings(planted, styles) + wholes]
    unplanted = [cat.name for cat in CATEGORIES if cat.name not in counts]
    return Prepared(seed, per_category, names, parsed, counts, unplanted)


def _parse(r: Rendering) -> object | InputError:
    try:
        return _parsed(r)
    except InputError as error:
        return error


def score(
    prepared: Prepared,
    worlds: Iterable[World],
    keyring: Keyring,
    *,
    stop_at_first: bool = False,
) -> Result:
    """Audit the prepared answers against each world's corpus; score every one."""
    scores = {cat.name: Score(cat.name, cat.group) for cat in CATEGORIES}
    scores.update({f"answer:{w}": Score(f"answer:{w}", "whole answers") for w in WHOLE})
    for name, (cases, distinct) in prepared.counts.items():
        scores[name].cases, scores[name].distinct = cases, distinct
    confusion: Counter[tuple[str, str]] = Counter()
    labels: Counter[tuple[str, str]] = Counter()
    for world in worlds:
        failed = _score(
            prepared.parsed[world.name], world, keyring, scores, (confusion, labels), stop_at_first
        )
        if failed and stop_at_first:
            break
    return Result(
        prepared.seed,
        prepared.per_category,
        prepared.worlds,
        scores,
        confusion,
        prepared.unplanted,
        labels,
    )


def run_worlds(
    worlds: Iterable[World],
    keyring: Keyring,
    key: bytes,
    *,
    seed: int = 0,
    per_category: int = 25,
    stop_at_first: bool = False,
) -> Result:
    """Plant every category in every world, audit every rendering, score it."""
    chosen = list(worlds)
    prepared = prepare(chosen, keyring, key, seed=seed, per_category=per_category)
    return score(prepared, chosen, keyring, stop_at_first=stop_at_first)


Mode = tuple[bool, bool, bool]  # references checked, resolver down, support judged


def _mode(r: Rendering) -> Mode:
    cases = [i.case for i in r.items if i.case is not None]
    return (
        any(c.references for c in cases),
        any(c.down for c in cases),
        any(c.support for c in cases),
    )


def _audited(
    inputs: Sequence[tuple[Rendering, AuditInput]], world: World, keyring: Keyring, chunk: int
) -> Iterator[tuple[Rendering, Report]]:
    """Each rendering with its report: references checked against the world's resolver (or
    one that is down) and claim support judged by the default judge, where its cases ask."""
    groups: dict[Mode, list[tuple[Rendering, AuditInput]]] = {}
    for r, item in inputs:
        groups.setdefault(_mode(r), []).append((r, item))
    for (references, down, support), group in groups.items():
        resolver = (DownResolver() if down else world.resolver) if references else None
        reports: Iterable[Report] = audit_many(
            (i for _, i in group), world.corpus, keyring, chunk_answers=chunk, references=resolver
        )
        if support:
            reports = support_many(reports, world.corpus, RulesJudge())  # type: ignore[arg-type]
        yield from zip((r for r, _ in group), reports, strict=False)


def _score(
    parsed: Sequence[tuple[Rendering, object | InputError]],
    world: World,
    keyring: Keyring,
    scores: dict[str, Score],
    matrices: tuple[Counter[tuple[str, str]], Counter[tuple[str, str]]],
    stop_at_first: bool,
) -> bool:
    """Audit and score the parsed renderings; True when one failed. With ``stop_at_first``
    the answers are audited in small chunks and the first failure ends the run."""
    inputs: list[tuple[Rendering, AuditInput]] = []
    confusion, labels = matrices
    failed = False
    for r, answer in parsed:
        if isinstance(answer, InputError):
            scores[r.label].renderings += 1
            scores[r.label].failures.append(
                f"[{r.world}, {r.style}] the audit refused the answer: {answer.message}"
            )
            _confusion(None, r.plan, confusion)
            failed = True
            if stop_at_first:
                return True
            continue
        inputs.append((r, AuditInput(r.label, answer, r.text)))  # type: ignore[arg-type]
    chunk = 100 if stop_at_first else CHUNK_ANSWERS
    for r, report in _audited(inputs, world, keyring, chunk):
        s = scores[r.label]
        s.renderings += 1
        s.styles.add(r.style)
        plan = r.plan
        _confusion(report, plan, confusion)
        _label_confusion(report, plan, labels)
        why = difference(report, plan)
        if why is None:
            s.passed += 1
            continue
        failed = True
        if len(s.failures) < 5:
            s.failures.append(f"[{r.world}, {r.style}] {why}; answer: {r.text[:300]!r}")
        if stop_at_first:
            return True
    return failed
