"""What a server's audits looked up in its snapshot, kept for the calls after (bounded).

A server (``citeseal serve``) audits one answer per call against one sealed snapshot, which
never changes while it is served: every call first checks that the file is still the one that
was trusted (``TrustedSnapshot.still_unchanged``) and is refused otherwise. DuckDB answers each
look-up statement in a fraction of a millisecond at best, and an answer needs five of them, so
a server keeps what they returned: per record id, what :meth:`~audit.corpus.Corpus.records`
found (or that the snapshot does not hold it), and per (record, path), what
:meth:`~audit.corpus.Corpus.passage_versions` found. A later answer citing the same records
reads nothing again; one citing others looks only those up.

A cache belongs to one corpus of one file (:class:`audit.duckdb_corpus.DuckDBCorpus` and the
per-call corpora it makes with ``reading_through``) and goes with it: nothing here is keyed
across snapshots. Each table keeps its :data:`LIMIT` most recently used entries. Safe to use
from several threads at once; two calls missing the same record both look it up.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Hashable, Mapping
from typing import TypeVar

from audit.corpus import PathRef, StoredPassage, StoredRecord

LIMIT = 10_000
"""Entries kept per table (records; cited paths). Both full held 15.5 MB on the bench's
snapshot (passages of ~440 characters, one version each; ``tracemalloc``, 2026-12-02)."""

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LookupCache:
    """Records and cited paths of one snapshot, as its look-ups returned them."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = max(1, limit)
        self._records: OrderedDict[str, StoredRecord | None] = OrderedDict()
        self._paths: OrderedDict[PathRef, tuple[StoredPassage, ...] | None] = OrderedDict()
        self._lock = threading.Lock()

    def records(
        self, ids: Collection[str], fetch: Callable[[list[str]], Mapping[str, StoredRecord]]
    ) -> dict[str, StoredRecord]:
        """The records among ``ids``: those remembered, and ``fetch`` of the others."""
        return self._through(self._records, ids, fetch)

    def passage_versions(
        self,
        refs: Collection[PathRef],
        fetch: Callable[[list[PathRef]], Mapping[PathRef, tuple[StoredPassage, ...]]],
    ) -> dict[PathRef, tuple[StoredPassage, ...]]:
        """The passages of each of ``refs``: those remembered, and ``fetch`` of the others."""
        return self._through(self._paths, refs, fetch)

    def _through(
        self,
        table: OrderedDict[K, V | None],
        keys: Collection[K],
        fetch: Callable[[list[K]], Mapping[K, V]],
    ) -> dict[K, V]:
        found: dict[K, V] = {}
        missing: list[K] = []
        with self._lock:
            for key in keys:
                if key in table:
                    table.move_to_end(key)
                    value = table[key]
                    if value is not None:
                        found[key] = value
                else:
                    missing.append(key)
        if missing:
            fresh = fetch(missing)
            with self._lock:
                for key in missing:  # absent ones too: the snapshot does not hold them
                    table[key] = fresh.get(key)
                    table.move_to_end(key)
                while len(table) > self.limit:
                    table.popitem(last=False)
            found.update(fresh)
        return found
