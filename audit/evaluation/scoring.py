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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import zip_longest

from audit.citations import parse_answer
from audit.claims import parse_claims
from audit.engine import AuditInput, audit_many
from audit.errors import InputError
from audit.evaluation import oracle
from audit.evaluation.catalogue import CATEGORIES, Planted, plant
from audit.evaluation.categories import Ctx
from audit.evaluation.planting import (
    TEXT_STYLES,
    Item,
    plan_of,
    render_claims,
    render_text,
    styles_for,
)
from audit.evaluation.world import World
from audit.keys import Keyring
from audit.report import Report

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


def _got(report: Report) -> list[tuple[str, str, list[tuple[str, tuple[str, ...], str | None]]]]:
    return [
        (
            s.kind,
            s.status,
            [(x.verdict, tuple(f.name for f in x.flags), x.checked_against) for x in s.citations],
        )
        for s in report.sentences
    ]


def _want(
    plan: Sequence[oracle.SentencePlan],
) -> list[tuple[str, str, list[tuple[str, tuple[str, ...], str | None]]]]:
    return [
        (s.kind, s.status, [(e.verdict, e.flags, e.checked_against) for _, _, e in s.citations])
        for s in plan
    ]


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
    metrics = report.metrics.model_dump()
    for name, value in oracle.metrics(plan).items():
        if metrics.get(name) != value:
            return f"metric {name}: got {metrics.get(name)}, expected {value}"
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


def _whole_answers(world: World, planted: Sequence[Planted], rng: random.Random) -> list[Rendering]:
    """Mixed (every case, four at a time, with a heading, bold lead-ins and uncited
    sentences), clean (genuine citations only) and paired (the first case of each category
    written as answer text, between two genuine citations)."""
    cases = [Item(case, outcomes) for p in planted for case, outcomes in p.cases]
    clean = [
        i
        for i in cases
        if i.case is not None
        and i.case.literal is None
        and all(e.verdict == "ok" and not e.flags for e in i.outcomes)
    ]
    out: list[Rendering] = []
    styles = (*TEXT_STYLES, "claims")
    for n in range(0, len(cases), 4):
        style = styles[(n // 4) % len(styles)]
        group = [
            i
            for i in cases[n : n + 4]
            if i.case is not None
            and style in styles_for(i.case) + ("bracket",) * (style != "claims")
            and not (style == "claims" and not i.case.claims)
        ]
        if group:
            items = [Item(None, kind="heading"), *group[:2], Item(None), *group[2:]]
            out.append(_render("answer:mixed", world.name, items, style))
    for n in range(0, len(clean), 3):
        style = styles[(n // 3) % len(styles)]
        out.append(_render("answer:clean", world.name, clean[n : n + 3], style))
    if clean:
        for p in planted:
            first = next((Item(c, o) for c, o in p.cases if styles_for(c)[0] != "claims"), None)
            if first is not None:
                a, b = rng.choice(clean), rng.choice(clean)
                out.append(_render("answer:paired", world.name, [a, first, b], "bracket"))
    return out


def _renderings(planted: Sequence[Planted]) -> list[Rendering]:
    out = []
    for p in planted:
        for case, outcomes in p.cases:
            for style in styles_for(case):
                text_style = "bracket" if style == "literal" else style
                out.append(_render(p.category.name, p.world, [Item(case, outcomes)], text_style))
    return out


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
    scores = {cat.name: Score(cat.name, cat.group) for cat in CATEGORIES}
    scores.update({f"answer:{w}": Score(f"answer:{w}", "whole answers") for w in WHOLE})
    confusion: Counter[tuple[str, str]] = Counter()
    planted_anywhere: set[str] = set()
    names = []
    for world in worlds:
        names.append(world.name)
        planted = []
        for cat in CATEGORIES:
            ctx = Ctx(world, random.Random(f"{seed}:{world.name}:{cat.name}"), keyring, key)
            p = plant(cat, ctx, per_category)
            if p.cases:
                planted.append(p)
                planted_anywhere.add(cat.name)
                scores[cat.name].distinct += p.distinct
                scores[cat.name].cases += len(p.cases)
        rng = random.Random(f"{seed}:{world.name}:answers")
        renderings = _renderings(planted) + _whole_answers(world, planted, rng)
        if _score(renderings, world, keyring, scores, confusion, stop_at_first) and stop_at_first:
            break
    unplanted = [cat.name for cat in CATEGORIES if cat.name not in planted_anywhere]
    return Result(seed, per_category, names, scores, confusion, unplanted)


def _score(
    renderings: Sequence[Rendering],
    world: World,
    keyring: Keyring,
    scores: dict[str, Score],
    confusion: Counter[tuple[str, str]],
    stop_at_first: bool,
) -> bool:
    """Audit and score the renderings; True when one failed."""
    inputs: list[tuple[Rendering, AuditInput]] = []
    failed = False
    for r in renderings:
        score = scores[r.label]
        try:
            parsed = _parsed(r)
        except InputError as error:
            score.renderings += 1
            score.failures.append(
                f"[{r.world}, {r.style}] the audit refused the answer: {error.message}"
            )
            _confusion(None, r.plan, confusion)
            failed = True
            if stop_at_first:
                return True
            continue
        inputs.append((r, AuditInput(r.label, parsed, r.text)))  # type: ignore[arg-type]
    reports = audit_many((i for _, i in inputs), world.corpus, keyring)
    for (r, _), report in zip(inputs, reports, strict=True):
        score = scores[r.label]
        score.renderings += 1
        score.styles.add(r.style)
        plan = r.plan
        _confusion(report, plan, confusion)
        why = difference(report, plan)
        if why is None:
            score.passed += 1
            continue
        failed = True
        if len(score.failures) < 5:
            score.failures.append(f"[{r.world}, {r.style}] {why}; answer: {r.text[:300]!r}")
        if stop_at_first:
            return True
    return failed
