"""A deterministic test double of the :class:`~audit.support.model.Judge` Protocol.

It stands in for the rules judge (written elsewhere) so the wiring can be tested on its own:
``contradicted`` when the claim says "raises" and the passage "does not increase" (the planted
case), ``supported`` when a long word of the claim is in the passage, ``not_mentioned``
otherwise, and ``abstain`` for a claim containing "unsure". Its reason counts the entities it
was given, so a test can see the annotations arrive.
"""

from __future__ import annotations

from audit.support.model import Evidence, EvidenceSpan, SupportLabel, SupportResult


class FakeJudge:
    def __init__(self, name: str = "fake", version: str = "0") -> None:
        self._name, self._version = name, version
        self.calls: list[tuple[str, Evidence]] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def version(self) -> str:
        return self._version

    def judge(self, claim: str, evidence: Evidence) -> SupportResult:
        self.calls.append((claim, evidence))
        text = evidence.text
        label: SupportLabel = "not_mentioned"
        needle: str | None = None
        if "unsure" in claim:
            label = "abstain"
        elif "raises" in claim and "does not increase" in text:
            label, needle = "contradicted", "does not increase"
        else:
            for word in claim.split():
                if len(word) > 6 and word in text:
                    label, needle = "supported", word
                    break
        span = None
        if needle is not None:
            start = text.index(needle)
            span = EvidenceSpan(start=start, end=start + len(needle), text=needle)
        return SupportResult(
            label=label,
            reason=f"The fake saw {len(evidence.entities)} entities.",
            evidence=span,
            judge=self.name,
            judge_version=self.version,
        )
