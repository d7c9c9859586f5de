"""The default claim-support judge: deterministic, offline, explainable rules.

:class:`RulesJudge` reads one claim against one passage in three steps.

1. **The span.** The passage is cut into sentences; each is scored by how many of the claim's
   terms it holds (content-word stems, and PubTator3 entities by normalised identifier: a
   claim word that is a mention of identifier X in the passage matches every mention of X, so
   "vitamin D" meets "cholecalciferol" when the annotations give both the same identifier)
   and by rapidfuzz ``token_set_ratio``. The best sentence is ``SupportResult.evidence``
   (offsets into ``Evidence.text``).
2. **The signals**, read on the claim and on the span: direction words (up/down) and whether a
   negation covers them, null-finding phrases, ratios with intervals (a CI containing 1 is no
   effect), numbers with units and signs (compared only when both sides name the same
   quantity: same unit and a shared term beside the number), words the passage negates that
   the claim asserts (or the reverse), and hedges.
3. **The label.** Fewer shared terms than :attr:`Thresholds.mention` → ``not_mentioned``,
   unless the claim has fewer than :attr:`Thresholds.mention_terms` terms: a short claim
   whose few words are missing may still be paraphrased, so it is ``abstain``.
   ``contradicted`` needs an explicit signal (null finding, negated or opposite direction on
   the same object, a ratio, disagreeing figures, a negated shared word), an unhedged span,
   and at least :attr:`Thresholds.contradict` of the claim's terms; a null finding about
   words the claim does not name (:func:`null_elsewhere`) is ``abstain``. ``supported`` needs
   :attr:`Thresholds.support` of the terms, the same polarity and direction, and no
   disagreeing figure, and none of the doubts of :func:`support_doubt` (a claimed direction
   the span does not restate, a claim that only asks a question, a figure the span neither
   implies nor rules out): each makes it
   ``abstain``. Anything else — conflicting signals, a hedged span, too few shared terms for
   a verdict — is ``abstain`` with the reason.

Every reason is one sentence naming the signal. The judge never raises for its input.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from rapidfuzz import fuzz

from audit.support import cues, numbers
from audit.support.model import Evidence, EvidenceSpan, SupportLabel, SupportResult

NAME = "rules"
VERSION = "1.5"
MAX_TEXT = 200_000
"""Characters of claim or evidence read; longer input is abstained on (never truncated)."""
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9])|\n\s*\n")


@dataclass(frozen=True)
class Thresholds:
    """Fractions of the claim's terms a sentence must hold (tuned on HealthVer dev; see
    docs/support.md)."""

    mention: float = 0.1
    support: float = 0.3
    contradict: float = 0.25
    contradict_terms: int = 2
    """Minimum number of shared claim terms for ``contradicted``."""
    support_terms: int = 2
    """Minimum number of shared claim terms for ``supported`` (one shared word, often the
    topic's name, is not a restatement of a three-word claim)."""
    mention_terms: int = 8
    """Minimum number of claim terms for ``not_mentioned`` (a shorter claim is abstained on:
    on HealthVer dev, ``not_mentioned`` for claims of 4-7 terms was wrong more often than
    right)."""

    @property
    def label(self) -> str:
        """``mention=0.1,support=0.3,contradict=0.25,mention_terms=8``: a candidate's name."""
        return (
            f"mention={self.mention},support={self.support},contradict={self.contradict},"
            f"mention_terms={self.mention_terms}"
        )


def threshold_grid() -> list[Thresholds]:
    """The candidates ``evaluate-support --tune-thresholds`` chooses from inside each fold
    (the default first, so a tie keeps it)."""
    grid = [Thresholds()]
    for mention in (0.1, 0.15, 0.2):
        for support in (0.3, 0.35, 0.4):
            for contradict in (0.25, 0.3, 0.4):
                for terms in MENTION_TERMS:
                    candidate = Thresholds(
                        mention=mention, support=support, contradict=contradict, mention_terms=terms
                    )
                    if candidate not in grid:
                        grid.append(candidate)
    return grid


MENTION_TERMS = (0, 4, 6, 8)
"""The :attr:`Thresholds.mention_terms` candidates of :func:`threshold_grid`."""


@dataclass(frozen=True)
class Stance:
    """What one text asserts: directions (negated or not), null findings, ratios, figures."""

    up: bool
    down: bool
    neg_up: bool
    neg_down: bool
    null: str | None
    nulls: tuple[cues.NullFinding, ...]
    """The null-finding phrases and what each is about (a ratio's null has no phrase)."""
    negated_stems: frozenset[str]
    """Content words a negation bears on ("no vaccine"); see :attr:`denied_stems`."""
    asserted_stems: frozenset[str]
    ratio_effects: tuple[str, ...]
    quantities: tuple[numbers.Quantity, ...]
    hedge: bool
    significant: bool
    therapy: bool
    no_therapy: str | None
    objects: dict[str, frozenset[str]] = field(default_factory=dict)

    manner_stems: frozenset[str] = frozenset()
    """The negated words of :attr:`negated_stems` that are adverbs ("not sufficiently
    treated"): the text is negative, but it denies how, not the word the adverb comes from."""

    @property
    def denied_stems(self) -> frozenset[str]:
        """The words the text denies: negated, and not adverbs."""
        return self.negated_stems - self.manner_stems

    @property
    def negative(self) -> bool:
        return bool(self.null or self.neg_up or self.neg_down or self.negated_stems)

    @property
    def effect(self) -> set[str]:
        found = {d for d, on in (("up", self.up), ("down", self.down)) if on}
        return found | {e for e in self.ratio_effects if e != "null"}


def _heads(words: list[cues.Token], index: int) -> bool:
    """Whether ``words[index]`` is the first content word after a negation cue (the word
    "no" or "not" bears on: "not linked", "no vaccine", never a word further on)."""
    for back in range(index - 1, max(-1, index - cues.NEGATION_SCOPE - 1), -1):
        if words[back].low in cues.NEGATIONS:
            return True
        if cues.content([words[back]]):
            return False
    return False


def _stance(text: str, start: int, end: int) -> Stance:
    words = cues.tokens(text, start, end)
    up = down = neg_up = neg_down = False
    negated_stems: set[str] = set()
    manner: set[str] = set()
    asserted: set[str] = set()
    objects: dict[str, set[str]] = {"up": set(), "down": set()}
    meaningful = {w.stem for w in cues.content(words)}
    for i, word in enumerate(words):
        is_neg = cues.negated(text, words, i)
        way = cues.direction(word)
        if way is not None:
            if is_neg:
                neg_up, neg_down = neg_up or way == "up", neg_down or way == "down"
            else:
                up, down = up or way == "up", down or way == "down"
                objects[way] |= {w.stem for w in cues.content(words[i + 1 : i + 4])}
        elif word.stem in meaningful:
            if is_neg and _heads(words, i):
                negated_stems.add(word.stem)
                if cues.adverb(word):
                    manner.add(word.stem)
            else:
                asserted.add(word.stem)
    nulls = cues.null_findings(text, start, end)
    found_ratios = numbers.ratios(text, start, end)
    if not nulls and any(r.effect == "null" for r in found_ratios):
        null = "a confidence interval containing 1"
    else:
        null = f'"{text[nulls[0][0] : nulls[0][1]]}"' if nulls else None
    return Stance(
        up=up,
        down=down,
        neg_up=neg_up,
        neg_down=neg_down,
        null=null,
        nulls=tuple(cues.null_finding(text, span, start, end) for span in nulls),
        negated_stems=frozenset(negated_stems - asserted),
        asserted_stems=frozenset(asserted),
        manner_stems=frozenset(manner - asserted),
        ratio_effects=tuple(r.effect for r in found_ratios),
        quantities=tuple(numbers.quantities(text, start, end)),
        hedge=cues.hedged(text, words),
        significant=cues.significant(text, start, end),
        therapy=any(w.low in cues.THERAPY_CLAIM for w in words),
        no_therapy=cues.no_therapy(text, start, end),
        objects={k: frozenset(v) for k, v in objects.items()},
    )


def sentences(text: str) -> list[tuple[int, int]]:
    """The sentences of ``text`` as ``(start, end)`` offsets, whitespace trimmed."""
    spans: list[tuple[int, int]] = []
    position = 0
    for match in [*SENTENCE_END.finditer(text), None]:
        stop = len(text) if match is None else match.start()
        piece = text[position:stop]
        lead = len(piece) - len(piece.lstrip())
        body = piece.strip()
        if body:
            spans.append((position + lead, position + lead + len(body)))
        if match is not None:
            position = match.end()
    return spans


def _entity_index(evidence: Evidence) -> tuple[dict[str, set[str]], list[tuple[int, int, str]]]:
    """Mention texts per identifier, and the valid entity spans of the evidence."""
    names: dict[str, set[str]] = {}
    spans: list[tuple[int, int, str]] = []
    size = len(evidence.text)
    for entity in evidence.entities:
        ident = (entity.identifier or "").strip()
        if not ident or ident == "-" or not 0 <= entity.start < entity.end <= size:
            continue
        mention = (entity.text or evidence.text[entity.start : entity.end]).strip().lower()
        spans.append((entity.start, entity.end, ident))
        if len(mention) > 1:
            names.setdefault(ident, set()).add(mention)
    return names, spans


def _claim_terms(claim: str, names: dict[str, set[str]]) -> set[str]:
    """The claim's terms: ``id:X`` for words that are a passage mention of X, else stems."""
    words = cues.content(cues.tokens(claim))
    low = claim.lower()
    covered: set[int] = set()
    terms: set[str] = set()
    for ident, mentions in names.items():
        for mention in mentions:
            for m in re.finditer(r"(?<!\w)" + re.escape(mention) + r"(?!\w)", low):
                terms.add(f"id:{ident}")
                covered |= {i for i, w in enumerate(words) if m.start() <= w.start < m.end()}
    terms |= {w.stem for i, w in enumerate(words) if i not in covered}
    return terms


def _sentence_terms(
    text: str, span: tuple[int, int], entity_spans: list[tuple[int, int, str]]
) -> set[str]:
    start, end = span
    terms = {w.stem for w in cues.content(cues.tokens(text, start, end))}
    return terms | {f"id:{i}" for s, e, i in entity_spans if s < end and e > start}


@dataclass(frozen=True)
class _Match:
    span: tuple[int, int]
    shared: int
    total: int
    similarity: float

    @property
    def overlap(self) -> float:
        return self.shared / self.total if self.total else 0.0


def best_match(claim: str, evidence: Evidence) -> _Match | None:
    """The sentence of the evidence that best matches the claim (None: no sentence)."""
    names, entity_spans = _entity_index(evidence)
    terms = _claim_terms(claim, names)
    best: _Match | None = None
    for span in sentences(evidence.text):
        shared = len(terms & _sentence_terms(evidence.text, span, entity_spans))
        similarity = fuzz.token_set_ratio(claim.lower(), evidence.text[span[0] : span[1]].lower())
        match = _Match(span, shared, len(terms), similarity / 100)
        key = (match.overlap, match.similarity)
        if best is None or key > (best.overlap, best.similarity):
            best = match
    return best


def no_therapy_match(claim: str, evidence: Evidence) -> _Match | None:
    """The first sentence of the evidence that says no treatment is known ("no vaccine", "no
    specific treatment") and shares a term with the claim, or None."""
    text = evidence.text
    if not cues.no_therapy(text, 0, len(text)):
        return None
    names, entity_spans = _entity_index(evidence)
    terms = _claim_terms(claim, names)
    for span in sentences(text):
        if not cues.no_therapy(text, span[0], span[1]):
            continue
        shared = len(terms & _sentence_terms(text, span, entity_spans))
        if shared:
            similarity = fuzz.token_set_ratio(claim.lower(), text[span[0] : span[1]].lower())
            return _Match(span, shared, len(terms), similarity / 100)
    return None


def _figures(claim: Stance, ev: Stance, claim_text: str, ev_text: str) -> tuple[str, str] | None:
    """``("agree"|"disagree"|"unsettled", figure)`` for the claim figures the span also
    quantifies: a figure the span rules out (:meth:`Quantity.excludes`) disagrees; one it
    neither implies nor rules out ("30 %" against "more than 20 %") is unsettled."""
    verdict: tuple[str, str] | None = None
    for q in claim.quantities:
        near_claim = _context(claim_text, q.start, q.end)
        same = [
            o
            for o in ev.quantities
            if o.unit == q.unit and near_claim & _context(ev_text, o.start, o.end)
        ]
        if not same:
            continue
        figure = claim_text[q.start : q.end]
        against = f'"{figure}" against "{ev_text[same[0].start : same[0].end]}"'
        if any(q.agrees(o) for o in same):
            verdict = verdict or ("agree", figure)
        elif all(q.excludes(o) for o in same):
            return "disagree", against
        elif verdict is None or verdict[0] != "unsettled":
            verdict = ("unsettled", against)
    return verdict


def _context(text: str, start: int, end: int) -> set[str]:
    """The quantity a figure measures: the two content words before it ("mortality was 13 %"),
    and the one after "of" ("13 % of patients"); never words further on ("… with X")."""
    before = cues.content(cues.tokens(text, max(0, start - 60), start))[-2:]
    after = cues.tokens(text, end, min(len(text), end + 40))[:2]
    named = after[1:] if len(after) == 2 and after[0].low == "of" else []
    return {w.stem for w in before + cues.content(named)}


def null_elsewhere(claim_text: str, claim: Stance, ev: Stance) -> cues.NullFinding | None:
    """The passage's null finding when every one it reports is about words the claim does not
    name ("ACEI use was not associated with Y" against a claim about heart disease and Y), or
    None. A word is named when the claim asserts its stem, or when it is an acronym the
    claim's words spell (:func:`cues.initialisms`). A null finding whose words are not found
    (a pronoun subject, a ratio) is not judged elsewhere."""
    if not ev.nulls:
        return None
    spelled: frozenset[str] | None = None
    for found in ev.nulls:
        if not found.about or found.about & claim.asserted_stems:
            return None
        if found.names:
            spelled = spelled or cues.initialisms(cues.tokens(claim_text))
            if found.names & spelled:
                return None
    return ev.nulls[0]


def _contradiction(claim: Stance, ev: Stance, elsewhere: bool = False) -> str | None:
    """The explicit signal by which the span denies the claim, or None (``elsewhere``: the
    span's null finding is about words the claim does not name, so it denies nothing)."""
    if claim.negative:
        if not ev.negative and ev.effect and (ev.significant or ev.ratio_effects):
            return "the passage reports a significant effect where the claim denies one"
        return None
    if claim.therapy and ev.no_therapy:
        return f'the passage says there is "{ev.no_therapy}" where the claim asserts one'
    if ev.null and (claim.effect or claim.asserted_stems) and not elsewhere:
        return f"the passage reports a null finding ({ev.null}) where the claim asserts an effect"
    for way, negated in (("up", ev.neg_up), ("down", ev.neg_down)):
        if negated and way in claim.effect:
            return f"the passage negates the direction the claim asserts ({way})"
    for way, other in (("up", "down"), ("down", "up")):
        opposite = way in claim.effect and other in ev.effect and way not in ev.effect
        if opposite and claim.objects.get(way, frozenset()) & ev.objects.get(other, frozenset()):
            return f"the passage reports the opposite direction ({other}) on the same outcome"
    ratios = set(ev.ratio_effects)
    if ratios and "null" not in ratios and claim.effect and not claim.effect & ratios:
        return "the passage's ratio and interval point the other way"
    denied = claim.asserted_stems & ev.denied_stems
    if denied:
        return f'the passage negates "{sorted(denied)[0]}", which the claim asserts'
    return None


class RulesJudge:
    """The default judge (see the module docstring for the rules)."""

    def __init__(self, thresholds: Thresholds | None = None) -> None:
        self.thresholds = thresholds or Thresholds()

    @property
    def name(self) -> str:
        return NAME

    @property
    def version(self) -> str:
        return VERSION

    def _result(
        self, label: SupportLabel, reason: str, evidence: Evidence, span: tuple[int, int] | None
    ) -> SupportResult:
        found = None
        if span is not None:
            found = EvidenceSpan(start=span[0], end=span[1], text=evidence.text[span[0] : span[1]])
        return SupportResult(
            label=label, reason=reason, evidence=found, judge=NAME, judge_version=VERSION
        )

    def judge(self, claim: str, evidence: Evidence) -> SupportResult:
        """One judgment of ``claim`` against ``evidence`` (never raises for its input)."""
        return self.judge_many(claim, evidence, [self.thresholds])[0]

    def judge_many(
        self, claim: str, evidence: Evidence, grid: Sequence[Thresholds]
    ) -> list[SupportResult]:
        """The judgment under each thresholds of ``grid`` (what ``judge`` would give with
        each): the span and the signals are read once, so tuning costs one reading per pair."""
        if len(claim) > MAX_TEXT or len(evidence.text) > MAX_TEXT:
            return [
                self._result(
                    "abstain",
                    f"the claim or passage is longer than {MAX_TEXT:,} characters.",
                    evidence,
                    None,
                )
            ] * len(grid)
        if not cues.content(cues.tokens(claim)):
            found = self._result("abstain", "the claim has no words to look for.", evidence, None)
            return [found] * len(grid)
        match = best_match(claim, evidence)
        if match is None:
            found = self._result("abstain", "the passage has no text to read.", evidence, None)
            return [found] * len(grid)
        reading = _Reading(claim, evidence.text, match)
        if reading.no_therapy_anywhere and reading.cure_claimed and not reading.seen.no_therapy:
            # a claimed cure is read against the sentence that says no treatment is known,
            # wherever it stands in the passage
            elsewhere = no_therapy_match(claim, evidence)
            if elsewhere is not None:
                reading = _Reading(claim, evidence.text, elsewhere)
        return [self._decide(reading, evidence, limits) for limits in grid]

    def _decide(self, reading: _Reading, evidence: Evidence, limits: Thresholds) -> SupportResult:
        match = reading.match
        span = match.span
        terms = f"{match.shared} of {match.total} claim terms"
        no_cure = reading.no_therapy_anywhere and match.shared >= 1 and reading.cure_claimed
        no_cure = no_cure and bool(reading.seen.no_therapy)
        if match.overlap < limits.mention and not no_cure:
            where = span if match.shared else None
            if match.total < limits.mention_terms:
                return self._result(
                    "abstain",
                    f"the claim has only {match.total} terms, too few to say the passage does "
                    f"not mention it (best: {terms}).",
                    evidence, where,
                )  # fmt: skip
            return self._result(
                "not_mentioned", f"no sentence of the passage holds the claim (best: {terms}).",
                evidence, where,
            )  # fmt: skip
        said, seen, figures = reading.said, reading.seen, reading.figures
        denial = reading.denial
        strong = match.overlap >= limits.contradict and match.shared >= limits.contradict_terms
        if no_cure:
            strong = True  # "no treatment for Y" denies "X cures Y" whatever X is
        if denial and strong:
            if seen.hedge:
                return self._result(
                    "abstain", f"{denial}, but it hedges, so the denial is not explicit.",
                    evidence, span,
                )  # fmt: skip
            if figures and figures[0] == "agree":
                return self._result(
                    "abstain", f"signals conflict: {denial}, yet it matches {figures[1]}.",
                    evidence, span,
                )  # fmt: skip
            return self._result("contradicted", f"{denial} ({terms}).", evidence, span)
        if denial:
            return self._result(
                "abstain", f"{denial}, but the sentence shares only {terms}.", evidence, span
            )
        elsewhere = reading.null_elsewhere
        if elsewhere is not None:
            reason = (
                f'the passage\'s null finding ("{elsewhere.phrase}") is about "{elsewhere.words}", '
                f"which the claim does not name ({terms})."
            )
            return self._result("abstain", reason, evidence, span)
        if said.negative != seen.negative:
            side = "passage" if seen.negative else "claim"
            reason = f"only the {side} is negated, and no explicit denial was found ({terms})."
            return self._result("abstain", reason, evidence, span)
        if said.effect and seen.effect and not said.effect & seen.effect:
            return self._result(
                "abstain", f"the directions differ on different outcomes ({terms}).", evidence, span
            )
        if match.overlap >= limits.support and match.shared >= limits.support_terms:
            doubt = reading.doubt
            if doubt:
                return self._result("abstain", f"{doubt} ({terms}).", evidence, span)
            what = f"it matches {figures[1]}" if figures else f"it holds {terms}"
            if said.effect and said.effect & seen.effect:
                what += f" with the same direction ({'/'.join(sorted(said.effect & seen.effect))})"
            return self._result(
                "supported", f"the best-matching sentence says the same: {what}.", evidence, span
            )
        return self._result(
            "abstain", f"the best-matching sentence holds only {terms}, too few for a verdict.",
            evidence, span,
        )  # fmt: skip


def support_doubt(
    claim: str, said: Stance, seen: Stance, figures: tuple[str, str] | None
) -> str | None:
    """Why a sentence that shares enough of the claim's terms still does not support it, or
    None. Each doubt is about how the claim is said, never about the topic's words:

    * the claim asserts a direction (up/down) the sentence does not restate (and no figure of
      the claim agrees) — sharing the words is not saying the effect;
    * the claim is a question (it ends with "?"): it asserts nothing to support;
    * the sentence's figure neither implies nor rules out the claim's ("30 %" against "more
      than 20 %"): the passage is consistent with the claim but does not say it.

    (A third, a hedged sentence for an unhedged claim, was measured and left out: it did not
    help on claims it was not tuned on; docs/support.md.)
    """
    if said.effect and not said.effect & seen.effect and not (figures and figures[0] == "agree"):
        way = "/".join(sorted(said.effect))
        return f"the sentence does not restate the direction the claim asserts ({way})"
    if claim.rstrip().endswith("?"):
        return "the claim asks a question, so there is no assertion to support"
    if figures and figures[0] == "unsettled":
        return f"the passage's figure neither confirms nor rules out the claim's ({figures[1]})"
    return None


class _Reading:
    """One claim read against one passage's best sentence; the signals are read when first
    needed and then kept, so every thresholds of a grid shares them."""

    def __init__(self, claim: str, text: str, match: _Match) -> None:
        self.claim, self.text, self.match = claim, text, match

    @cached_property
    def said(self) -> Stance:
        return _stance(self.claim, 0, len(self.claim))

    @cached_property
    def seen(self) -> Stance:
        return _stance(self.text, self.match.span[0], self.match.span[1])

    @cached_property
    def no_therapy_anywhere(self) -> bool:
        """Whether any sentence of the passage says no treatment is known (a cheap first look,
        so most pairs never read the claim's stance for it)."""
        return cues.no_therapy(self.text, 0, len(self.text)) is not None

    @cached_property
    def cure_claimed(self) -> bool:
        """Whether the claim asserts (does not deny) that something cures, treats, prevents."""
        return self.said.therapy and not self.said.negative

    @cached_property
    def figures(self) -> tuple[str, str] | None:
        return _figures(self.said, self.seen, self.claim, self.text)

    @cached_property
    def denial(self) -> str | None:
        denial = _contradiction(self.said, self.seen, self.null_elsewhere is not None)
        if self.figures and self.figures[0] == "disagree":
            denial = denial or f"the passage gives a different figure ({self.figures[1]})"
        return denial

    @cached_property
    def null_elsewhere(self) -> cues.NullFinding | None:
        """The null finding that would deny an asserted claim but is about something else."""
        if self.said.negative or not (self.said.effect or self.said.asserted_stems):
            return None
        return null_elsewhere(self.claim, self.said, self.seen)

    @cached_property
    def doubt(self) -> str | None:
        return support_doubt(self.claim, self.said, self.seen, self.figures)
