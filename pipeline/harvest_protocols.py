"""What a harvest (:mod:`pipeline.harvest`) talks to: the :class:`Sink` it delivers records,
failures and steps to, the :class:`Progress` display, the :class:`LineageView` it asks about
the lineage it refreshes (:class:`NoLineage` for a first build), and the
:class:`HarvestOutcome` it returns. The build implements the first three
(:mod:`pipeline.snapshot.build`, :mod:`pipeline.snapshot.ingest`); tests fake them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pipeline.errors import HarvestError, ParseError
from pipeline.records import Record


class Sink(Protocol):
    """Where a harvest delivers what it found.

    ``incomplete`` names the delivered records whose enrichment failed (see
    :mod:`pipeline.harvest`): the build must not let them replace what the lineage holds.
    """

    def records(
        self, source: str, records: Sequence[Record], *, incomplete: Collection[str] = ()
    ) -> None: ...

    def failure(self, source: str, step: str, error: HarvestError | ParseError) -> None: ...

    def step(self, source: str, step: str, count: int, detail: str | None = None) -> None: ...


class Progress(Protocol):
    """Progress display: one bar (or log line series) per source."""

    def start(self, source: str, total: int | None) -> None: ...

    def advance(self, source: str, count: int) -> None: ...

    def finish(self, source: str, status: str) -> None: ...

    def note(self, message: str) -> None: ...


@dataclass
class HarvestOutcome:
    """Record ids asked for by id that upstream positively did not return (``missing``; see
    :mod:`pipeline.harvest`: an empty answer alone is never such evidence), and those whose
    by-id answer failed (``unanswered``: listed failures, not asked again by the refresh)."""

    missing: set[str] = field(default_factory=set)
    unanswered: set[str] = field(default_factory=set)


class LineageView(Protocol):
    """What the harvest may ask about the lineage it refreshes (the build's parent)."""

    def live(self, record_ids: Collection[str]) -> set[str]:
        """The ids among ``record_ids`` the lineage holds and has not marked withdrawn."""
        ...

    def emptied(self, records: Sequence[Record]) -> dict[str, str]:
        """Records that came back without a passage where the lineage's current version has
        some: record id → what the lineage holds, in words."""
        ...

    def controls(self, source: str, scheme: str, exclude: Collection[str], limit: int) -> list[str]:
        """Up to ``limit`` ids of ``source`` and ``scheme`` (``scheme:id``) the lineage holds,
        not withdrawn, none of them in ``exclude``: candidates to check an empty answer."""
        ...

    def carrying_pmcids(self, source: str, pmcids: Collection[str]) -> set[str]:
        """The live record ids of ``source`` whose current version carries one of ``pmcids``
        (the records a PMCID asked for by id stands for)."""
        ...


class NoLineage:
    """The lineage of a first build: it holds nothing."""

    def live(self, record_ids: Collection[str]) -> set[str]:
        del record_ids
        return set()

    def emptied(self, records: Sequence[Record]) -> dict[str, str]:
        del records
        return {}

    def controls(self, source: str, scheme: str, exclude: Collection[str], limit: int) -> list[str]:
        del source, scheme, exclude, limit
        return []

    def carrying_pmcids(self, source: str, pmcids: Collection[str]) -> set[str]:
        del source, pmcids
        return set()
