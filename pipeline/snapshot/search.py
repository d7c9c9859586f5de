"""Passage search (BM25) and the passages of one record, with minted handles.

The index is built into every snapshot (:mod:`pipeline.snapshot.index`: words lower-cased,
accent-free, Porter-stemmed, English stop words left out). Search ranks the passages of the
*current* version of each record that is not withdrawn. Handles are minted here, from the
caller's keyring; the snapshot holds no key and no handle. nct, setid and ppr handles pin
``@version``; pmid and pmcid handles do not (see docs/contract.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from audit.errors import CitationSyntaxError, InputError
from audit.handles import PINNED_SCHEMES, SCHEMES, Locator, mint, parse_locator
from audit.keys import Keyring
from pipeline.errors import SnapshotError
from pipeline.snapshot.index import INDEX_VERSION, numbered, search_sql
from pipeline.snapshot.store import SEP, connect, first_line, load_fts, read_meta
from pipeline.sources import names

MAX_QUERY_CHARS = 1_000
MAX_LIMIT = 1_000


@dataclass(frozen=True)
class PassageView:
    record_id: str
    version: str
    path: str
    section: str | None
    text: str
    handle: str | None  # None for records no handle scheme covers (doi:)
    score: float | None = None
    source: str | None = None
    title: str | None = None
    flags: dict[str, bool | None] = field(default_factory=dict)
    status: str | None = None  # the record's status (registry status, publication status…)


@dataclass(frozen=True)
class RecordView:
    record_id: str
    source: str
    version: str
    current_version: str
    versions: list[str]
    withdrawn: bool
    withdrawn_since: str | None
    title: str | None
    status: str | None
    flags: dict[str, bool | None]
    relations: list[dict[str, str | None]]
    passages: list[PassageView]


def locator_for(record_id: str, version: str, path: str) -> Locator | None:
    """The locator of a passage (version pinned for nct/setid/ppr), None for other schemes."""
    scheme, _, ident = record_id.partition(":")
    if scheme not in SCHEMES:
        return None
    return Locator(scheme, ident, path, version if scheme in PINNED_SCHEMES else None)


def handle_for(keyring: Keyring, record_id: str, version: str, path: str) -> str | None:
    """The handle of a passage, or None when its id or path cannot form one."""
    locator = locator_for(record_id, version, path)
    if locator is None:
        return None
    try:
        return mint(keyring, locator)
    except CitationSyntaxError:
        return None


def open_snapshot(path: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection with the fts extension loaded (for ``stem``)."""
    con = connect(path, read_only=True)
    load_fts(con)
    try:
        index = read_meta(con).get("search_index")
    except duckdb.Error as error:
        con.close()
        raise SnapshotError(f"cannot read snapshot {path}: {first_line(error)}") from None
    if index != INDEX_VERSION:
        con.close()
        raise SnapshotError(
            f"snapshot {path} has search index {index!r}; this citeseal searches {INDEX_VERSION!r}",
            advice="rebuild it: citeseal snapshot rebuild PATH",
        )
    return con


def search_passages(
    con: duckdb.DuckDBPyConnection,
    query: str,
    keyring: Keyring,
    *,
    sources: Sequence[str] = (),
    limit: int = 10,
) -> list[PassageView]:
    """The ``limit`` best passages for ``query`` (BM25), best first, with handles."""
    if not query.strip():
        raise InputError("the search query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise InputError(f"the search query is {len(query)} characters; at most {MAX_QUERY_CHARS}")
    if not 1 <= limit <= MAX_LIMIT:
        raise InputError(f"--limit must be between 1 and {MAX_LIMIT}, got {limit}")
    unknown = [s for s in sources if s not in names()]
    if unknown:
        raise InputError(f"unknown source {unknown[0]!r}; expected one of {', '.join(names())}")
    params: dict[str, object] = {"query": query, "limit": limit}
    if sources:
        params.update(sources=SEP.join(sources), sep=SEP)
    try:
        sql = search_sql(sources=bool(sources), numbered=numbered(con))
        rows = con.execute(sql, params).fetchall()
    except duckdb.Error as error:
        raise SnapshotError(f"search failed: {first_line(error)}") from None
    return [
        PassageView(
            record_id=rid,
            version=version,
            path=path,
            section=section,
            text=text,
            handle=handle_for(keyring, rid, version, path),
            score=round(float(score), 4),
            source=source,
            title=title,
            flags={"retracted": ret, "expression_of_concern": eoc, "preprint": pre},
            status=status,
        )
        for rid, version, path, section, text, score, source, title, ret, eoc, pre, status in rows
    ]


def _check_record_id(record_id: str) -> None:
    """Raise when ``record_id`` is no ``scheme:id`` a handle can carry (so a typo is called
    what it is, not a record missing from the snapshot)."""
    scheme = record_id.partition(":")[0]
    pin = "@1" if scheme in PINNED_SCHEMES else ""  # the id alone, whatever its scheme
    try:
        parse_locator(f"{record_id}{pin}/title")
    except CitationSyntaxError as error:
        raise InputError(f"{record_id} is not a record id: {error.message}") from None


def record_passages(
    con: duckdb.DuckDBPyConnection, record_id: str, keyring: Keyring, *, version: str | None = None
) -> RecordView:
    """Every passage of one version of a record (the current one by default), with handles."""
    state = con.execute(
        "SELECT source, current_version, withdrawn, withdrawn_since FROM record_state "
        "WHERE record_id = ?",
        [record_id],
    ).fetchone()
    if state is None:
        _check_record_id(record_id)
        raise InputError(f"{record_id} is not in this snapshot")
    source, current, withdrawn, since = state
    versions = [
        str(v[0])
        for v in con.execute(
            "SELECT version FROM record_versions WHERE record_id = ? ORDER BY seq", [record_id]
        ).fetchall()
    ]
    chosen = version or current
    if chosen not in versions:
        raise InputError(
            f"{record_id} has no version {chosen!r} in this snapshot; "
            f"it holds {', '.join(versions)}"
        )
    record = con.execute(
        "SELECT title, status, retracted, expression_of_concern, preprint FROM records "
        "WHERE record_id = ? AND version = ?",
        [record_id, chosen],
    ).fetchone()
    title, status, ret, eoc, pre = record or (None, None, None, None, None)
    relations = [
        {"kind": k, "target": t, "source": s, "date": d}
        for k, t, s, d in con.execute(
            "SELECT kind, target, source, date FROM relations WHERE record_id = ? "
            "ORDER BY kind, target",
            [record_id],
        ).fetchall()
    ]
    passages = [
        PassageView(
            record_id=record_id,
            version=chosen,
            path=path,
            section=section,
            text=text,
            handle=handle_for(keyring, record_id, chosen, path),
        )
        for path, section, text in con.execute(
            "SELECT path, section, text FROM passages WHERE record_id = ? AND version = ? "
            "ORDER BY seq",
            [record_id, chosen],
        ).fetchall()
    ]
    return RecordView(
        record_id=record_id,
        source=source,
        version=chosen,
        current_version=current,
        versions=versions,
        withdrawn=bool(withdrawn),
        withdrawn_since=since,
        title=title,
        status=status,
        flags={"retracted": ret, "expression_of_concern": eoc, "preprint": pre},
        relations=relations,
        passages=passages,
    )


def to_json(value: Any) -> str:
    """JSON for ``--json`` output (dataclasses included)."""
    from dataclasses import asdict, is_dataclass

    def default(obj: Any) -> Any:
        if is_dataclass(obj) and not isinstance(obj, type):
            return asdict(obj)
        raise TypeError(type(obj).__name__)

    return json.dumps(value, default=default, ensure_ascii=False, indent=2)
