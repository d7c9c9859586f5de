"""What a corpus kept open holds in memory: every record, and every passage, within a budget.

A long-lived caller (``citeseal serve``) audits one answer per call against one sealed
snapshot, which every call first checks unchanged (``TrustedSnapshot.still_unchanged``). On
the bench's million passages each DuckDB look-up statement costs 1.5–5 ms (the ``record_id``
index look-ups of the cited records, whatever the statement's form: docs/audit.md "Speed"), so
an answer's five statements cost several times what parsing and judging it does. A kept-open
corpus can read instead, once, when it opens (:meth:`audit.duckdb_corpus.DuckDBCorpus.
keep_warm`), each table in one pass:

- the records tier: every record with its state, versions, lineage and relations, as
  :meth:`~audit.corpus.Corpus.records` returns them (one :class:`StoredRecord` per record);
- the passages tier: every passage of every version, grouped by record.

Each tier is held only whole, or not at all: a record or passage missing from a tier held is
one the snapshot does not hold (``unavailable``, ``withdrawn``, exactly as the statements
would say). A tier whose estimated size (:data:`RECORD_BYTES` per record;
:data:`PASSAGE_BYTES` per passage plus its strings) goes over the budget is dropped while it
loads and its look-ups run as statements, as before (a PubMed-sized snapshot). The passages
tier needs the records tier (the engine asks for the passages of records it found).

Nothing here reads a file: :class:`WarmCorpus` answers from what it was given, and
:class:`PassageHoard` gathers passage rows with their memory estimate.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from audit.corpus import PassageKey, PathRef, StoredPassage, StoredRecord

WARM_BUDGET = 1 << 30
"""Bytes a kept-open corpus may hold warm by default (1 GiB): the bench's 1,000,000 passages of
~440 characters (100,000 records) estimated at ~610 MB fit; a PubMed-sized snapshot does not."""

RECORD_BYTES = 1_000
"""Estimated bytes per record held (a :class:`StoredRecord`, its strings and its dict entry):
the bench's records (short titles, one version, few relations) measured 550 by
``tracemalloc``; real ones carry longer titles, journals and DOIs."""

PASSAGE_BYTES = 120
"""Estimated bytes per passage held beyond its text (and its folded text where that differs):
the :class:`StoredPassage` tuple and its slot (its record id, version, path and section
strings are shared between passages)."""


class PassageHoard:
    """Passage rows gathered per record, with their estimated size: ``add`` refuses (and the
    hoard is to be dropped) once the estimate goes over ``budget``."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.estimate = 0
        self._held: dict[str, list[StoredPassage]] = {}
        self._shared: dict[str, str] = {}  # one string object per distinct id, version, path

    def add(self, rows: Iterable[tuple[Any, ...]]) -> bool:
        """Add rows of (record_id, version, path, section, text, folded or None when it is
        the text); False once over the budget."""
        share, held, make, size = self._shared.setdefault, self._held, StoredPassage._make, 0
        for rid, version, path, section, text, folded in rows:
            rid = share(rid, rid)
            size += PASSAGE_BYTES + sys.getsizeof(text)
            if folded is None:
                folded = text
            else:
                size += sys.getsizeof(folded)
            passage = make((rid, share(version, version), share(path, path), section, text, folded))
            group = held.get(rid)
            if group is None:
                held[rid] = [passage]
            else:
                group.append(passage)
        self.estimate += size
        return self.estimate <= self.budget

    def several_versions(self) -> set[str]:
        """The records with passages in more than one version (their order needs the lineage)."""
        return {rid for rid, group in self._held.items() if len({p.version for p in group}) > 1}

    def done(
        self, several: Collection[str], seq: Mapping[tuple[str, str], int]
    ) -> dict[str, tuple[StoredPassage, ...]]:
        """The passages per record; those of the records ``several`` (:meth:`several_versions`)
        oldest version first (by ``seq`` of (record, version), then the version, as
        :meth:`DuckDBCorpus.passage_versions` orders them)."""
        for rid in several:
            self._held[rid].sort(key=lambda p: (seq.get((p.record_id, p.version), 0), p.version))
        found = {rid: tuple(group) for rid, group in self._held.items()}
        self._held, self._shared = {}, {}
        return found


@dataclass(frozen=True)
class Warmth:
    """What :meth:`DuckDBCorpus.keep_warm` holds: each tier, or None and why not."""

    records: Mapping[str, StoredRecord] | None
    passages: Mapping[str, tuple[StoredPassage, ...]] | None
    estimate: int  # bytes held, as estimated while loading
    budget: int
    note: str  # what was kept warm, or why a tier was not

    @staticmethod
    def cold(budget: int, note: str) -> Warmth:
        return Warmth(None, None, 0, budget, note)


class WarmCorpus:
    """The look-ups of a corpus answered from a :class:`Warmth` (the tiers it holds)."""

    def __init__(self, warmth: Warmth) -> None:
        self.warmth = warmth

    def records(
        self, ids: Collection[str], fetch: Callable[[Collection[str]], dict[str, StoredRecord]]
    ) -> dict[str, StoredRecord]:
        """The records among ``ids``: from memory when the records tier is held, else
        ``fetch`` (the statements)."""
        held = self.warmth.records
        if held is None:
            return fetch(ids)
        return {i: held[i] for i in ids if i in held}

    def passage_versions(
        self,
        refs: Collection[PathRef],
        fetch: Callable[[Collection[PathRef]], dict[PathRef, list[StoredPassage]]],
    ) -> dict[PathRef, list[StoredPassage]]:
        """Each path's passage in every version holding it, oldest first: from memory when
        the passages tier is held, else ``fetch``."""
        held = self.warmth.passages
        if held is None:
            return fetch(refs)
        found: dict[PathRef, list[StoredPassage]] = {}
        for ref in refs:
            versions = [p for p in held.get(ref.record_id, ()) if p.path == ref.path]
            if versions:
                found[ref] = versions
        return found

    def passages(
        self,
        keys: Collection[PassageKey],
        fetch: Callable[[Collection[PassageKey]], dict[PassageKey, StoredPassage]],
    ) -> dict[PassageKey, StoredPassage]:
        """The passages among ``keys``: from memory when the passages tier is held."""
        held = self.warmth.passages
        if held is None:
            return fetch(keys)
        wanted = set(keys)
        found: dict[PassageKey, StoredPassage] = {}
        for rid in {key.record_id for key in wanted}:
            for passage in held.get(rid, ()):
                key = passage.key
                if key in wanted:
                    found[key] = passage
        return found
