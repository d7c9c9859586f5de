"""The categories of ordinary references and claim support.

**References** (group ``references``): an answer whose sentence cites a genuine handle and a
footnote, ``[^r1]``, whose definition is a reference-list entry (Vancouver style: authors,
title, venue, year, an identifier). The oracle (:mod:`~audit.evaluation.oracle_references`)
gives the tier and flags the check must give it: a real identifier with the work's title,
authors and year (verified; retracted, expression of concern, preprint flags), the same with
another title or year (mismatch), an identifier that resolves nowhere (unresolved offline), one
with the real work's title (mismatch), an impossible one (hallucinated), a real one of another
work (hallucinated), and any of them while the resolver is down (unresolved: fails closed).

**Support** (group ``support``): a claim written from a passage sentence and cited with the
passage's genuine handle, judged by the default judge. The oracle
(:mod:`~audit.evaluation.oracle_support`) keeps only claims with clear signals: a paraphrase
(the direction word's synonym, the setting moved to the front: supported), a null finding
against an asserted effect, the opposite direction, another figure for the same quantity
(contradicted), a hedged denial (abstain), a long claim of words the passage lacks
(not_mentioned), and bounds: a bound the passage's figure is within (supported), one it is
outside of (contradicted), a figure within the passage's bound that the passage does not
state (abstain); a paraphrase of a sentence with a bound keeps the bound (supported).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import replace

from audit.evaluation import oracle, oracle_references, oracle_support
from audit.evaluation.categories import Case, Category, Cite, Ctx, verbatim
from audit.evaluation.oracle_references import Entry
from audit.evaluation.world import Rec, World

_PROSE = "Zentravir changed the outcome in this cohort"
_OTHER_TITLES = (
    "Sleep quality among retired office workers: a survey",
    "Coastal air pollution and asthma in teenagers",
    "Knee surgery outcomes in competitive cyclists",
)
_OTHER_AUTHORS = (("Vance P", "Rowe D"), ("Ngata H",), ("Brandt U", "Sole M"))


def genuine_pool(ctx: Ctx) -> list[Cite]:
    """Verbatim, flag-free ok citations of the world (for markup, beside-valid, references)."""
    out = []
    for case in verbatim(ctx):
        cite = case.cites[0]
        e = oracle.judge(cite.handle, cite.quote, ctx.world, ctx.key)
        if e.verdict == "ok" and not e.flags:
            out.append(cite)
    return out


def with_claims(
    case: Case, outcomes: tuple[oracle.Expected, ...], world: World
) -> tuple[oracle.Expected, ...] | None:
    """The outcomes with the oracle's support label and reference tiers added; None when the
    oracle cannot be sure of one (the candidate is dropped)."""
    if case.support and outcomes and outcomes[0].verdict == "ok":
        claim = case.prose or ""
        text = _issued_text(case.cites[0].handle, world)
        found = oracle_support.label(claim, text) if text is not None else None
        if found is None:
            return None
        outcomes = (replace(outcomes[0], support=found), *outcomes[1:])
    if case.references:
        tiers = [oracle_references.tier(e, world, reachable=not case.down) for e in case.references]
        if any(t is None for t in tiers) or not outcomes:
            return None
        refs = tuple(t for t in tiers if t is not None)
        outcomes = (replace(outcomes[0], references=refs), *outcomes[1:])
    return outcomes


def _issued_text(handle: str, world: World) -> str | None:
    """The passage a single-version citation reads (None for records of several versions:
    which one is as issued is the ladder's business, not the support case's)."""
    h = oracle.parse(handle)
    rec = world.records.get(h.record_id) if h is not None else None
    if h is None or rec is None or len(rec.versions) != 1:
        return None
    return rec.text(rec.current, h.path)


# --- references --------------------------------------------------------------------------------


def _ids(rec: Rec) -> list[tuple[str, str]]:
    scheme, _, ident = rec.record_id.partition(":")
    out = [(scheme, ident)] if scheme in ("pmid", "pmcid", "nct") else []
    if rec.bib is not None and rec.bib.doi:
        out.append(("doi", rec.bib.doi))
    return out


def _entries(ctx: Ctx) -> Iterator[Entry]:
    """Every work with metadata, cited faithfully by each identifier it has."""
    for rec in ctx.world.records.values():
        bib = rec.bib
        if bib is not None and bib.authors and not rec.withdrawn:  # no authors: read otherwise
            for key in _ids(rec):
                yield Entry((key,), bib.title, bib.authors, bib.year, bib.venue)


Changer = Callable[[Ctx, Entry], Entry | None]
"""How a reference case changes a faithful entry (None: not for this work)."""


def _reference_case(
    name: str, change: Changer, *, down: bool = False
) -> Callable[[Ctx], list[Case]]:
    def build(ctx: Ctx) -> list[Case]:
        pool = genuine_pool(ctx)
        if not pool or ctx.world.resolver is None:
            return []
        out = []
        for entry in _entries(ctx):
            for _ in range(4):
                changed = change(ctx, entry)
                if changed is None:
                    continue
                cite = pool[ctx.rng.randrange(len(pool))]
                text = f"{_PROSE} [{cite.handle}] [^r1].\n\n[^r1]: {changed.text()}"
                case = Case(name, (Cite(cite.handle),), literal=text, claims=False, alone=True)
                out.append(replace(case, references=(changed,), down=down))
        ctx.rng.shuffle(out)
        return out

    return build


def _same(ctx: Ctx, entry: Entry) -> Entry:
    del ctx
    return entry


def _other_title(ctx: Ctx, entry: Entry) -> Entry:
    return replace(entry, title=ctx.rng.choice(_OTHER_TITLES))


def _other_year(ctx: Ctx, entry: Entry) -> Entry | None:
    return replace(entry, year=entry.year - ctx.rng.randint(3, 9)) if entry.year else None


def _invented_id(ctx: Ctx) -> tuple[str, str]:
    n = ctx.rng.randrange(1000, 9999)
    return ctx.rng.choice((("doi", f"10.5555/invented.{n}"), ("pmid", f"9999{n}")))


def _nowhere(ctx: Ctx, entry: Entry) -> Entry:
    del entry
    k = ctx.rng.randrange(len(_OTHER_TITLES))
    return Entry((_invented_id(ctx),), _OTHER_TITLES[k], _OTHER_AUTHORS[k], 2020)


def _nowhere_real_title(ctx: Ctx, entry: Entry) -> Entry:
    return replace(entry, ids=(_invented_id(ctx),))


def _impossible(ctx: Ctx, entry: Entry) -> Entry:
    del entry
    k = ctx.rng.randrange(len(_OTHER_TITLES))
    n = ctx.rng.randrange(1000, 9999)
    bad = ctx.rng.choice((("nct", f"NCT99{n}"), ("pmid", f"99999{n}")))  # 7 and 9 digits
    return Entry((bad,), _OTHER_TITLES[k], _OTHER_AUTHORS[k], 2020)


def _another_work(ctx: Ctx, entry: Entry) -> Entry:
    k = ctx.rng.randrange(len(_OTHER_TITLES))
    return replace(entry, title=_OTHER_TITLES[k], authors=_OTHER_AUTHORS[k])


def reference_categories(cat: Callable[..., Category]) -> tuple[Category, ...]:
    """The reference categories, made with the catalogue's ``cat`` (the citation is ok)."""

    def ref(
        name: str, change: Changer, tier: str, flag: int | None = None, *, down: bool = False
    ) -> Category:
        build = _reference_case(name, change, down=down)
        return cat(name, "references", "ok", build, tier=tier, ref_flag=flag)

    return (
        ref("reference_verified", _same, "verified"),
        ref("reference_retracted", _same, "verified", 0),
        ref("reference_expression_of_concern", _same, "verified", 1),
        ref("reference_preprint", _same, "verified", 2),
        ref("reference_other_title", _other_title, "mismatch"),
        ref("reference_other_year", _other_year, "mismatch"),
        ref("reference_resolves_nowhere", _nowhere, "unresolved"),
        ref("reference_invented_id_real_title", _nowhere_real_title, "mismatch"),
        ref("reference_impossible_id", _impossible, "hallucinated"),
        ref("reference_another_work", _another_work, "hallucinated"),
        ref("reference_resolver_down", _same, "unresolved", down=True),
    )


# --- claim support -----------------------------------------------------------------------------

_SYNONYM = {
    "lowered": "reduced",
    "reduced": "lowered",
    "raised": "increased",
    "increased": "raised",
    "decreased": "lowered",
}
_OPPOSITE = {
    "lowered": "raised",
    "reduced": "increased",
    "raised": "lowered",
    "increased": "reduced",
}
_UNRELATED = (
    "Weekly yoga classes improved sleep quality among retired office workers in coastal towns",
    "Cheaper bus fares doubled evening library visits by teenagers across northern provinces",
)


def _sentences(ctx: Ctx) -> Iterator[tuple[Rec, str, str, str]]:
    """(record, version, path, sentence) of single-version passages."""
    for rec, version, path, text in ctx.passages():
        if len(rec.versions) == 1:
            for sentence in re.split(r"(?<=[.!?])\s+", text):
                yield rec, version, path, sentence


def _front(sentence: str) -> str:
    """``X did Y in Z.`` → ``In Z, x did Y`` (the setting moved to the front)."""
    body = sentence.rstrip(".")
    at = body.rfind(" in ")
    if at < 0:
        return body
    return f"In {body[at + 4 :]}, {body[0].lower()}{body[1:at]}"


def _paraphrase(sentence: str) -> str | None:
    words = sentence.split(" ")
    for i, w in enumerate(words):
        if w in _SYNONYM:
            return _front(" ".join([*words[:i], _SYNONYM[w], *words[i + 1 :]]))
    return None


def _asserted(sentence: str) -> str | None:
    """The effect a null finding denies, asserted: ``did not increase`` → ``raised``, ``showed
    no association with`` → ``raised the risk of`` (a null finding with no direction word)."""
    for pattern, past, present in (
        (r"\b(did|does) not increase\b", "raised", "raises"),
        (r"\b(showed|shows) no association with\b", "raised the risk of", "raises the risk of"),
    ):
        found = re.search(pattern, sentence)
        if found is not None:
            verb = past if found.group(1) in ("did", "showed") else present
            return (sentence[: found.start()] + verb + sentence[found.end() :]).rstrip(".")
    return None


def _opposite(sentence: str) -> str | None:
    words = sentence.split(" ")
    for i, w in enumerate(words):
        if w in _OPPOSITE:
            return " ".join([*words[:i], _OPPOSITE[w], *words[i + 1 :]]).rstrip(".")
    return None


def _refigured(sentence: str, pattern: str, figure: Callable[[int], str]) -> str | None:
    """``sentence`` with the first match of ``pattern`` (its group 1 a whole number N)
    written as ``figure(N)``, as a claim (no final full stop); None without a match."""
    found = re.search(pattern, sentence)
    if found is None:
        return None
    written = figure(int(found.group(1)))
    return (sentence[: found.start()] + written + sentence[found.end() :]).rstrip(".")


def _other_figure(sentence: str) -> str | None:
    return _refigured(sentence, r"\b([0-9]+)%", lambda n: f"{n * 2 + 7}%")


def _bound_met(sentence: str) -> str | None:
    """``by N%`` as a bound the figure is within (12% for "more than 6%"): supported."""
    return _refigured(sentence, r"\bby ([0-9]+)%", lambda n: f"by more than {n // 2}%")


def _bound_missed(sentence: str) -> str | None:
    """``by N%`` as a bound the figure is outside of (12% for "more than 31%"): contradicted."""
    return _refigured(sentence, r"\bby ([0-9]+)%", lambda n: f"by more than {n * 2 + 7}%")


def _within_bound(sentence: str) -> str | None:
    """``by more than N%`` (a bound) as ``by N+10%``: a figure the passage allows without
    saying it, so neither supported nor contradicted (abstain)."""
    return _refigured(sentence, r"\bby more than ([0-9]+)%", lambda n: f"by {n + 10}%")


def _unhedged(sentence: str) -> str | None:
    found = re.search(r"\b(?:may|might|could) not (\w+)", sentence)
    if found is None:
        return None
    verb = found.group(1) + ("es" if found.group(1).endswith("s") else "s")
    return (sentence[: found.start()] + verb + sentence[found.end() :]).rstrip(".")


def _support_case(name: str, claim_of: Callable[[str], str | None]) -> Callable[[Ctx], list[Case]]:
    def build(ctx: Ctx) -> list[Case]:
        out = []
        for rec, version, path, sentence in _sentences(ctx):
            claim = claim_of(sentence)
            if claim:
                handle = ctx.handle(rec.record_id, path, ctx.pin(rec, version))
                out.append(Case(name, (Cite(handle),), prose=claim, support=True, alone=True))
        ctx.rng.shuffle(out)
        return out

    return build


def _not_mentioned(ctx: Ctx) -> list[Case]:
    out = []
    for rec, version, path, _ in ctx.passages():
        if len(rec.versions) == 1:
            handle = ctx.handle(rec.record_id, path, ctx.pin(rec, version))
            claim = ctx.rng.choice(_UNRELATED)
            out.append(
                Case(
                    "support_not_mentioned", (Cite(handle),), prose=claim, support=True, alone=True
                )
            )
    ctx.rng.shuffle(out)
    return out


def support_categories(cat: Callable[..., Category]) -> tuple[Category, ...]:
    """The support categories, made with the catalogue's ``cat`` (the citation is ok)."""

    def judged(name: str, claim_of: Callable[[str], str | None], label: str) -> Category:
        return cat(name, "support", "ok", _support_case(name, claim_of), support=label)

    return (
        judged("support_paraphrase", _paraphrase, "supported"),
        judged("support_null_finding", _asserted, "contradicted"),
        judged("support_opposite_direction", _opposite, "contradicted"),
        judged("support_other_figure", _other_figure, "contradicted"),
        judged("support_hedged_denial", _unhedged, "abstain"),
        judged("support_bound_met", _bound_met, "supported"),
        judged("support_bound_missed", _bound_missed, "contradicted"),
        judged("support_within_bound", _within_bound, "abstain"),
        cat("support_not_mentioned", "support", "ok", _not_mentioned, support="not_mentioned"),
    )
