"""Finding the registry records that references point to: resolvers, and the snapshot's.

A :class:`Resolver` answers two questions, each as a :class:`Lookup` (``matched`` with the
records found, ``unmatched``, or ``unreachable`` with what went wrong), and never raises for an
outage: a lookup that cannot be made is ``unreachable``, which the check reports as
``unresolved``, never as a fabrication.

- :meth:`Resolver.by_identifiers`: the records holding each ``(scheme, value)`` key.
- :meth:`Resolver.by_title`: the records whose title matches a title (the best first).

:class:`SnapshotResolver` answers from a snapshot file (offline), reading the current version
of each record of ``pipeline/snapshot/schema.py``'s tables (``records``, ``record_state``,
``relations``; the audit does not import that module): a DOI is looked up case-folded in
``records.doi``, a PMID in ``records.pmid``, a PMCID in ``records.pmcid`` (each also as the
record id ``pmid:N`` / ``pmcid:PMCN``), an NCT number as the record id ``nct:NCT…``. The
snapshot holds no arXiv or ISBN records: those keys are ``unmatched`` with a note saying so.
A title search reads every current titled record once (on the first search) into a
:class:`TitleIndex` and returns the records whose title the title rule
(:func:`~audit.references.compare.compare_titles`) calls the same — a ``fuzz.ratio`` of the
folded titles of at least 90 (rapidfuzz's cut-off skips the rest without scoring them fully),
or one title the other's leading part (two dictionary look-ups) — the
:data:`TITLE_CANDIDATES` nearest by ``WRatio`` first; the caller still checks each with
:func:`~audit.references.compare.compare_titles` and the authors.

Online (``citeseal check --online``, ``pipeline/check_online/``) what the snapshot cannot place
is fetched into a *lookup snapshot*, and :class:`LookupResolver` answers from that file and
what was asked for it (:class:`Asked`): a key found there is ``matched``; a key asked of
sources that all answered, and absent, is ``unmatched`` with ``absent`` True (upstream holds
no such record: evidence the check may use); a key asked of a source with a failed request is
``unreachable``; a key never asked is plain ``unmatched``. :class:`ChainResolver` asks its
resolvers in order (the snapshot first) and keeps the first that places a key.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

import duckdb
from rapidfuzz import fuzz, process

from audit.duckdb_corpus import read_only_connection
from audit.errors import CorpusError
from audit.references.compare import TITLE_MATCH, FoldedTitle, fold_title, leading_parts

LookupStatus = Literal["matched", "unmatched", "unreachable"]
Key = tuple[str, str]
"""``(scheme, normalised value)``, e.g. ``("doi", "10.5555/x")``."""

RESOLVABLE = frozenset({"doi", "pmid", "pmcid", "nct"})
TITLE_CANDIDATES = 5


@dataclass(frozen=True)
class WorkRecord:
    """The current version of one record, as the check compares and flags it."""

    record_id: str
    source: str
    title: str | None
    authors: tuple[str, ...]
    year: int | None
    venue: str | None
    doi: str | None
    pmid: str | None
    pmcid: str | None
    publication_types: tuple[str, ...]
    content_type: str | None
    retracted: bool | None
    expression_of_concern: bool | None
    preprint: bool | None
    withdrawn: bool
    published_version: str | None = None
    """For a preprint: the record id of its published version, when the snapshot links one."""

    def value(self, scheme: str) -> str | None:
        """This record's identifier of ``scheme`` (normalised like the reader does)."""
        if scheme == "doi":
            return self.doi.lower() if self.doi else None
        if scheme == "pmid":
            return self.pmid
        if scheme == "pmcid":
            return self.pmcid.upper() if self.pmcid else None
        if scheme == "nct" and self.record_id.startswith("nct:"):
            return self.record_id[4:]
        return None


@dataclass(frozen=True)
class Lookup:
    """What one resolver found for one key (an identifier, or a title)."""

    resolver: str
    key: str
    """``doi:10.5555/x`` or ``title:<the title as given>``."""
    status: LookupStatus
    records: tuple[WorkRecord, ...] = ()
    detail: str | None = None
    absent: bool = False
    """True when resolvers that answered hold no such record upstream (an online lookup came
    back without it); a snapshot that merely lacks a record says False."""


class Resolver(Protocol):
    """Something that finds records for identifiers and titles, offline or online."""

    name: str

    def by_identifiers(self, keys: Sequence[Key]) -> dict[Key, Lookup]:
        """A :class:`Lookup` for every key given (never raises for an outage)."""
        ...

    def by_title(self, title: str) -> Lookup:
        """The nearest records by title (never raises for an outage)."""
        ...


# each query reads the current version of every record (record_state.current_version)
_CURRENT = """
WITH current AS (
    SELECT r.record_id, r.source, r.title, r.authors, r.year, r.journal, r.doi, r.pmid,
           r.pmcid, r.publication_types, r.content_type, r.retracted,
           r.expression_of_concern, r.preprint, s.withdrawn
    FROM record_state s JOIN records r
      ON r.record_id = s.record_id AND r.version = s.current_version
)
"""

# one equi-join per way a key can be held, so each is a hash join, not a scan per key
_BY_KEYS_SQL = (  # constants joined, never a value: the keys are bound parameters
    _CURRENT.rstrip("\n")  # noqa: S608
    + """,
k AS (SELECT unnest($1::VARCHAR[]) AS scheme, unnest($2::VARCHAR[]) AS value)
SELECT k.scheme, k.value, c.* FROM k JOIN current c
  ON k.scheme = 'doi' AND lower(c.doi) = k.value
UNION
SELECT k.scheme, k.value, c.* FROM k JOIN current c
  ON k.scheme = 'pmid' AND c.pmid = k.value
UNION
SELECT k.scheme, k.value, c.* FROM k JOIN current c
  ON k.scheme = 'pmcid' AND upper(c.pmcid) = k.value
UNION
SELECT k.scheme, k.value, c.* FROM k JOIN current c
  ON c.record_id = k.scheme || ':' || k.value
ORDER BY 1, 2, 3
"""
)

_ALL_SQL = (
    _CURRENT  # noqa: S608
    + """SELECT '', '', c.* FROM current c WHERE c.title IS NOT NULL ORDER BY c.record_id
"""
)

_ALL_PUBLISHED_SQL = """
SELECT record_id, min(target) FROM relations WHERE kind = 'preprint_of' GROUP BY record_id
"""

_PUBLISHED_SQL = """
WITH k AS (SELECT unnest($1::VARCHAR[]) AS record_id)
SELECT record_id, min(target) FROM relations JOIN k USING (record_id)
WHERE kind = 'preprint_of' GROUP BY record_id
"""


def _json_list(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    try:
        value = json.loads(text)
    except ValueError:
        return ()
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _record(row: Sequence[object], published: dict[str, str]) -> WorkRecord:
    (rid, source, title, authors, year, journal, doi, pmid, pmcid, types) = row[:10]
    (content_type, retracted, concern, preprint, withdrawn) = row[10:15]
    return WorkRecord(
        record_id=str(rid),
        source=str(source),
        title=title if isinstance(title, str) else None,
        authors=_json_list(authors if isinstance(authors, str) else None),
        year=year if isinstance(year, int) else None,
        venue=journal if isinstance(journal, str) else None,
        doi=doi if isinstance(doi, str) else None,
        pmid=pmid if isinstance(pmid, str) else None,
        pmcid=pmcid if isinstance(pmcid, str) else None,
        publication_types=_json_list(types if isinstance(types, str) else None),
        content_type=content_type if isinstance(content_type, str) else None,
        retracted=retracted if isinstance(retracted, bool) else None,
        expression_of_concern=concern if isinstance(concern, bool) else None,
        preprint=preprint if isinstance(preprint, bool) else None,
        withdrawn=bool(withdrawn),
        published_version=published.get(str(rid)),
    )


def _first_line(error: BaseException) -> str:
    text = str(error)
    return text.splitlines()[0] if text else type(error).__name__


class SnapshotResolver:
    """Records of one snapshot file, through one read-only connection (module docstring)."""

    name = "snapshot"

    def __init__(
        self,
        connection: duckdb.DuckDBPyConnection,
        label: str,
        schemes: frozenset[str] = RESOLVABLE,
        *,
        titles: TitleIndex | None = None,
    ) -> None:
        """``connection``: read-only, to a snapshot already checked against its manifest;
        ``label``: how the trace names it (the snapshot's name); ``schemes``: the schemes
        its records can hold (a lookup snapshot holds ``arxiv:`` records too); ``titles``: the
        title index an earlier resolver of the same snapshot file built (:attr:`title_index`),
        if any."""
        self._con = connection
        self.label = label
        self.schemes = schemes
        self._titles: TitleIndex | None = titles

    @property
    def title_index(self) -> TitleIndex | None:
        """The title index, once a title search built it (to hand to the next resolver of the
        same snapshot file: building it reads every titled record)."""
        return self._titles

    @classmethod
    def open(
        cls, path: Path, label: str | None = None, schemes: frozenset[str] = RESOLVABLE
    ) -> SnapshotResolver:
        """A resolver on the snapshot file at ``path`` (the caller has trusted it); a file
        that does not open is a :class:`~audit.errors.CorpusError`."""
        try:
            connection = read_only_connection(path)
        except duckdb.Error as error:
            raise CorpusError(f"cannot open snapshot {path.name}: {_first_line(error)}") from None
        return cls(connection, label or path.stem, schemes)

    def close(self) -> None:
        self._con.close()

    def _rows(self, sql: str, params: list[object]) -> list[tuple[object, ...]]:
        return self._con.execute(sql, params).fetchall()

    def _records(self, rows: list[tuple[object, ...]]) -> list[tuple[Key, WorkRecord]]:
        ids = sorted({str(row[2]) for row in rows})
        published = {str(r): str(t) for r, t in self._rows(_PUBLISHED_SQL, [ids])} if ids else {}
        return [((str(row[0]), str(row[1])), _record(row[2:], published)) for row in rows]

    def by_identifiers(self, keys: Sequence[Key]) -> dict[Key, Lookup]:
        wanted = sorted({k for k in keys if k[0] in self.schemes})
        found: dict[Key, list[WorkRecord]] = {}
        failure: str | None = None
        if wanted:
            try:
                rows = self._rows(_BY_KEYS_SQL, [[k[0] for k in wanted], [k[1] for k in wanted]])
                for key, record in self._records(rows):
                    found.setdefault(key, []).append(record)
            except duckdb.Error as error:
                failure = f"snapshot lookup failed: {_first_line(error)}"
        answers: dict[Key, Lookup] = {}
        for key in keys:
            name = f"{key[0]}:{key[1]}"
            if key[0] not in self.schemes:
                detail = f"the snapshot holds no {key[0]} records"
                answers[key] = Lookup(self.name, name, "unmatched", detail=detail)
            elif failure is not None:
                answers[key] = Lookup(self.name, name, "unreachable", detail=failure)
            elif key in found:
                answers[key] = Lookup(self.name, name, "matched", _dedupe(found[key]))
            else:
                answers[key] = Lookup(self.name, name, "unmatched")
        return answers

    def by_title(self, title: str) -> Lookup:
        name = f"title:{title}"
        try:
            if self._titles is None:  # every titled record, read once, on the first search
                published = {str(r): str(t) for r, t in self._rows(_ALL_PUBLISHED_SQL, [])}
                records = [_record(row[2:], published) for row in self._rows(_ALL_SQL, [])]
                self._titles = TitleIndex(records)
        except duckdb.Error as error:
            detail = f"snapshot title search failed: {_first_line(error)}"
            return Lookup(self.name, name, "unreachable", detail=detail)
        chosen = self._titles.same_title(title)
        return Lookup(self.name, name, "matched" if chosen else "unmatched", chosen)


class TitleIndex:
    """The folded title of every record, and the records each leading part or whole folded
    title belongs to: what finds, without scoring every title, the records whose title the
    title rule calls the same (module docstring). Read-only once built: one index can serve
    every resolver of one snapshot, on any thread.

    A ``fuzz.ratio`` of at least 90 needs lengths within 9/11 and 11/9 of each other (the
    Indel distance is at least their difference), so only the titles of such a length are
    scored: they are kept sorted by length, a slice per search."""

    def __init__(self, records: Sequence[WorkRecord]) -> None:
        self.records = list(records)
        self.folded: list[FoldedTitle] = [fold_title(r.title or "") for r in self.records]
        self._whole: dict[str, list[int]] = {}
        self._leading: dict[str, list[int]] = {}
        for index, (record, folded) in enumerate(zip(self.records, self.folded, strict=True)):
            self._whole.setdefault(folded, []).append(index)
            for part in leading_parts(record.title or ""):
                self._leading.setdefault(part, []).append(index)
        self._order = sorted(range(len(self.folded)), key=lambda i: len(self.folded[i]))
        self._by_length = [self.folded[i] for i in self._order]
        self._lengths = [len(title) for title in self._by_length]

    def _near_in_length(self, query: str) -> tuple[int, list[FoldedTitle]]:
        """The first position and the titles (sorted by length) that could score 90."""
        low = bisect_left(self._lengths, math.ceil(len(query) * 9 / 11))
        high = bisect_right(self._lengths, math.floor(len(query) * 11 / 9))
        return low, self._by_length[low:high]

    def same_title(self, title: str) -> tuple[WorkRecord, ...]:
        """The records whose title matches ``title`` under the title rule, the
        :data:`TITLE_CANDIDATES` nearest by ``WRatio`` first (ties: in index order)."""
        query = fold_title(title)
        if not query:
            return ()
        first, window = self._near_in_length(query)
        found = {
            self._order[first + position]
            for _, _, position in process.extract(
                query, window, scorer=fuzz.ratio, score_cutoff=TITLE_MATCH, limit=None
            )
        }
        found.update(self._leading.get(query, ()))  # the query is a record's leading part
        for part in leading_parts(title):  # a record's title is the query's leading part
            found.update(self._whole.get(part, ()))
        if not found:
            return ()
        ordered = sorted(found)
        near = process.extract(
            query, [self.folded[i] for i in ordered], scorer=fuzz.WRatio, limit=TITLE_CANDIDATES
        )
        return tuple(self.records[ordered[position]] for _, _, position in near)


def _dedupe(records: Iterable[WorkRecord]) -> tuple[WorkRecord, ...]:
    seen: dict[str, WorkRecord] = {}
    for record in records:
        seen.setdefault(record.record_id, record)
    return tuple(seen.values())


# -- online: the lookup snapshot, and the chain ---------------------------------------------


@dataclass(frozen=True)
class Asked:
    """What a lookup snapshot was built to answer: the sources each identifier and each title
    was asked of, and the sources a request of which failed (their ``source: step: error``)."""

    keys: dict[Key, tuple[str, ...]]
    titles: dict[str, tuple[str, ...]]
    failed: dict[str, str]
    """source → the first failure of one of its requests."""

    def _failure(self, sources: Sequence[str]) -> str | None:
        return next((self.failed[s] for s in sources if s in self.failed), None)


def _title_found(title: str, records: Sequence[WorkRecord]) -> bool:
    from audit.references.compare import compare_titles

    return any(compare_titles(title, r.title).outcome == "match" for r in records)


class LookupResolver:
    """Records of a lookup snapshot, judged with what it was asked (module docstring)."""

    name = "lookup"

    def __init__(self, inner: SnapshotResolver, asked: Asked) -> None:
        self.inner = inner
        self.asked = asked
        self.label = inner.label

    def close(self) -> None:
        self.inner.close()

    def by_identifiers(self, keys: Sequence[Key]) -> dict[Key, Lookup]:
        found = self.inner.by_identifiers(keys)
        answers: dict[Key, Lookup] = {}
        for key in keys:
            name = f"{key[0]}:{key[1]}"
            got = found[key]
            sources = self.asked.keys.get(key, ())
            if got.status == "matched":
                answers[key] = Lookup(self.name, name, "matched", got.records)
            elif got.status == "unreachable":
                answers[key] = Lookup(self.name, name, "unreachable", detail=got.detail)
            elif not sources:
                answers[key] = Lookup(self.name, name, "unmatched", detail="not asked online")
            elif (failure := self.asked._failure(sources)) is not None:
                answers[key] = Lookup(self.name, name, "unreachable", detail=failure)
            else:
                detail = f"no such record at {', '.join(sources)} (asked online)"
                answers[key] = Lookup(self.name, name, "unmatched", detail=detail, absent=True)
        return answers

    def by_title(self, title: str) -> Lookup:
        name = f"title:{title}"
        got = self.inner.by_title(title)
        sources = self.asked.titles.get(title, ())
        if got.status == "unreachable" or _title_found(title, got.records):
            return Lookup(self.name, name, got.status, got.records, got.detail)
        if not sources:
            return Lookup(self.name, name, "unmatched", detail="title not searched online")
        if (failure := self.asked._failure(sources)) is not None:
            return Lookup(self.name, name, "unreachable", detail=failure)
        detail = f"no work of this title at {', '.join(sources)} (searched online)"
        return Lookup(self.name, name, "unmatched", got.records, detail, absent=True)


class ChainResolver:
    """Resolvers asked in order (the snapshot first): for each key the first ``matched``
    answer; else an ``unreachable`` one (a lookup that failed decides nothing); else the
    last resolver's ``unmatched`` (the online lookup's, which says whether it is absent)."""

    def __init__(self, resolvers: Sequence[Resolver]) -> None:
        self.resolvers = tuple(resolvers)
        self.name = self.resolvers[0].name

    def by_identifiers(self, keys: Sequence[Key]) -> dict[Key, Lookup]:
        answers = [r.by_identifiers(keys) for r in self.resolvers]
        out: dict[Key, Lookup] = {}
        for key in keys:
            lookups = [a[key] for a in answers]
            out[key] = _first_placed(lookups, lambda lookup: lookup.status == "matched")
        return out

    def by_title(self, title: str) -> Lookup:
        lookups: list[Lookup] = []
        for resolver in self.resolvers:
            lookup = resolver.by_title(title)
            lookups.append(lookup)
            if _title_found(title, lookup.records) and lookup.status == "matched":
                break
        return _first_placed(
            lookups,
            lambda lookup: lookup.status == "matched" and _title_found(title, lookup.records),
        )


def _first_placed(lookups: Sequence[Lookup], placed: Callable[[Lookup], bool]) -> Lookup:
    for lookup in lookups:
        if placed(lookup):
            return lookup
    for lookup in lookups:
        if lookup.status == "unreachable":
            return lookup
    return lookups[-1]
