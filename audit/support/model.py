"""The claim-support contract: what a judge is given, what it answers, and the Protocol.

A judge reads one claim (the sentence, as written) and one piece of :class:`Evidence` (the
cited passage's text, with the PubTator3 entities the snapshot holds for it) and answers a
:class:`SupportResult`: a :data:`SupportLabel`, a one-sentence reason, the span of the evidence
it rests on (character offsets into ``Evidence.text``), and its own name and version.

* ``supported`` / ``contradicted`` / ``not_mentioned`` are verdicts; ``abstain`` is not: the
  judge is not sure (an abstention never fails an audit on its own).
* A judge never raises for what it is given: anything it cannot read is ``abstain`` with the
  reason. Only a programming error escapes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, get_args

from pydantic import BaseModel, ConfigDict, Field

SupportLabel = Literal["supported", "contradicted", "not_mentioned", "abstain"]
SUPPORT_LABELS: tuple[SupportLabel, ...] = get_args(SupportLabel)


@dataclass(frozen=True, slots=True)
class Entity:
    """A PubTator3 annotation on the evidence text: ``text[start:end]`` is the mention."""

    start: int
    end: int
    type: str | None
    identifier: str | None
    text: str | None


@dataclass(frozen=True, slots=True)
class Evidence:
    """The passage a judge reads: its text, where it comes from, and its entities."""

    text: str
    record_id: str | None = None
    path: str | None = None
    entities: tuple[Entity, ...] = ()


class EvidenceSpan(BaseModel):
    """The part of the evidence a label rests on: ``Evidence.text[start:end] == text``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    text: str


class SupportResult(BaseModel):
    """One judgment of one claim against one passage."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: SupportLabel
    reason: str = Field(description="One sentence: what the judge saw.")
    evidence: EvidenceSpan | None = Field(
        default=None, description="The span the label rests on (None when nothing matched)."
    )
    judge: str = Field(description="The judge's name, e.g. 'rules'.")
    judge_version: str


class Judge(Protocol):
    """A claim-support judge (the default rules, an LLM over HTTP, a test's fake)."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    def judge(self, claim: str, evidence: Evidence) -> SupportResult: ...
