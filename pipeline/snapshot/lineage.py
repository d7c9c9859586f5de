"""Lineage: which version a harvested record is, and what a child snapshot carries over.

Rules (DESIGN.md §6):

* a child starts with every version of every record of its parent (``origin = 'carried'``);
* a harvested record whose content hash equals one of the versions the lineage knows *is*
  that version: nothing new is written, its ``last_seen`` becomes this snapshot;
* a changed record gets a new version and the old ones stay: the upstream version label when
  the source has one (trial last-update date, label version, preprint version), else the
  next integer (``1``, ``2``, …). Should an upstream label already name different content, the
  new version is ``<label>-r2`` (``-r3``, …), so no issued handle ever changes meaning; the
  label is cut short where need be so that ``<label>-rN`` stays within the handle grammar's
  :data:`~audit.handles.MAX_VERSION_CHARS` (a version no handle can pin would be uncitable);
* a record of the lineage that a harvest looked for and upstream no longer returns is marked
  withdrawn (``record_state.withdrawn``, ``withdrawn_since`` = this snapshot); its versions
  remain, so handles minted from them still verify. "No longer returns" needs positive
  evidence (:mod:`pipeline.harvest`): an empty answer is a failure, not a withdrawal;
* a record this harvest did not see, or saw only incompletely (a failed request, a failed
  enrichment, a suspiciously empty answer), keeps exactly the state the parent gave it: no
  new version, no withdrawal, the same flags. Only a complete harvest of a record moves the
  lineage on.

:func:`decide` is pure; the functions below it run the SQL that applies these rules.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from audit.handles import MAX_VERSION_CHARS
from pipeline.errors import SnapshotError
from pipeline.snapshot.store import CARRIED_TABLES, SEP, Staged, first_line


@dataclass(frozen=True)
class KnownVersion:
    """A version of a record that the lineage already holds."""

    version: str
    seq: int
    content_hash: str


@dataclass(frozen=True)
class Decision:
    """What to do with one harvested record: reuse ``version`` or write it as new."""

    record_id: str
    version: str
    seq: int
    new: bool


def decide(
    record_id: str,
    upstream_version: str | None,
    content_hash: str,
    known: Sequence[KnownVersion],
) -> Decision:
    """The version of a harvested record, given the versions its lineage knows."""
    for old in known:
        if old.content_hash == content_hash:
            return Decision(record_id, old.version, old.seq, new=False)
    used = {old.version for old in known}
    seq = max((old.seq for old in known), default=0) + 1
    if upstream_version:
        version = upstream_version
        revision = 2
        while version in used:
            version = revised(upstream_version, revision)
            revision += 1
    else:
        number = seq
        while str(number) in used:
            number += 1
        version = str(number)
    return Decision(record_id, version, seq, new=True)


def revised(label: str, revision: int) -> str:
    """``<label>-r<revision>``, the label cut short so the whole stays within
    :data:`~audit.handles.MAX_VERSION_CHARS` (a cut label still starts as it did, with a letter
    or digit, so the result keeps to the version grammar)."""
    suffix = f"-r{revision}"
    return label[: MAX_VERSION_CHARS - len(suffix)] + suffix


# -- SQL --------------------------------------------------------------------------------------


def carry_parent(con: duckdb.DuckDBPyConnection, parent: Path) -> None:
    """Copy every version, passage, annotation, relation and state of ``parent``."""
    try:
        con.execute(f"ATTACH '{str(parent).replace(chr(39), chr(39) * 2)}' AS parent (READ_ONLY)")
    except duckdb.Error as error:
        raise SnapshotError(f"cannot open parent snapshot {parent}: {first_line(error)}") from None
    try:
        for table in CARRIED_TABLES:
            mine = _columns(con, table)
            theirs = set(_columns(con, f"parent.{table}"))
            shared = [c for c in mine if c in theirs]
            if table == "search_terms" and "term_id" not in theirs and "term" in theirs:
                _number_parent_terms(con)  # a parent from before migration 4
                continue
            if not shared and table.startswith("search_"):
                continue  # a parent from before the search index: indexed after the copy
            if not shared:
                raise SnapshotError(f"parent snapshot {parent} has no table {table!r}")
            names = ", ".join(f'"{c}"' for c in shared)
            select = names
            if table == "record_versions":
                select = ", ".join("'carried'" if c == "origin" else f'"{c}"' for c in shared)
            sql = f"INSERT INTO {table} ({names}) SELECT {select} FROM parent.{table}"  # noqa: S608
            con.execute(sql)
    finally:
        con.execute("DETACH parent")


def _number_parent_terms(con: duckdb.DuckDBPyConnection) -> None:
    """Copy the index terms of an attached ``parent`` that holds them as text (schema < 4),
    numbering them in ``search_vocab``."""
    con.execute(
        "INSERT INTO search_vocab SELECT (row_number() OVER (ORDER BY term))::INTEGER, term "
        "FROM (SELECT DISTINCT term FROM parent.search_terms)"
    )
    con.execute(
        "INSERT INTO search_terms (docid, term_id, tf) SELECT t.docid, v.term_id, t.tf "
        "FROM parent.search_terms t JOIN search_vocab v USING (term)"
    )


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    try:
        described = con.execute(f"SELECT * FROM {table} LIMIT 0").description  # noqa: S608
    except duckdb.CatalogException:
        return []
    return [str(d[0]) for d in described or ()]


def create_staging(con: duckdb.DuckDBPyConnection) -> None:
    """The build's scratch table of records seen in this harvest (dropped before sealing).

    A table of the file, not a TEMP one: the writer process reopens the database during a
    long build (see :mod:`pipeline.snapshot.writer`), which would lose a TEMP table.
    """
    con.execute(
        "CREATE TABLE seen (record_id VARCHAR PRIMARY KEY, source VARCHAR NOT NULL, "
        "version VARCHAR NOT NULL)"
    )


def drop_staging(con: duckdb.DuckDBPyConnection) -> None:
    """Remove the scratch table: it is not part of a snapshot."""
    con.execute("DROP TABLE IF EXISTS seen")


def known_versions(
    con: duckdb.DuckDBPyConnection, record_ids: Collection[str]
) -> dict[str, list[KnownVersion]]:
    """Versions the lineage holds for ``record_ids`` (oldest first)."""
    ids = sorted(set(record_ids))
    known: dict[str, list[KnownVersion]] = {}
    if not ids:
        return known
    for rid, version, seq, content_hash in con.execute(
        "SELECT v.record_id, v.version, v.seq, v.content_hash FROM record_versions v "
        "JOIN (SELECT unnest(string_split($1, $2)) AS record_id) k USING (record_id) "
        "ORDER BY v.record_id, v.seq",
        [SEP.join(ids), SEP],
    ).fetchall():
        known.setdefault(rid, []).append(KnownVersion(version, int(seq), content_hash))
    return known


def touch_versions(con: duckdb.DuckDBPyConnection, staged: Staged, snapshot_id: str) -> None:
    """Mark the staged existing versions ``(record_id, version)`` as seen in this snapshot."""
    con.execute(
        "UPDATE record_versions SET last_seen = $1, origin = 'harvest' "  # noqa: S608
        f"FROM {staged.source} AS k "
        "WHERE record_versions.record_id = k.record_id AND record_versions.version = k.version",
        [snapshot_id],
    )
    staged.done()


def discard_versions(con: duckdb.DuckDBPyConnection, staged: Staged) -> None:
    """Delete what this build wrote of the staged ``(record_id, version)`` keys: versions of
    records new to the lineage, written from an incomplete delivery that a complete one now
    replaces (:mod:`pipeline.snapshot.ingest`). Everything of such a record in the file is
    this build's (the parent never held it): its version, passages and their search
    documents, annotations, relations and its row of the records seen."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE discarded AS SELECT * FROM {staged.source}")  # noqa: S608
    con.execute(
        "DELETE FROM search_terms WHERE docid IN (SELECT d.docid FROM search_docs d "
        "JOIN discarded k ON d.record_id = k.record_id AND d.version = k.version)"
    )
    for table in ("search_docs", "passages", "annotations", "records", "record_versions"):
        con.execute(
            f"DELETE FROM {table} USING discarded k WHERE {table}.record_id = k.record_id "  # noqa: S608
            f"AND {table}.version = k.version"
        )
    for table in ("relations", "seen"):
        con.execute(f"DELETE FROM {table} USING discarded k WHERE {table}.record_id = k.record_id")  # noqa: S608
    con.execute("DROP TABLE discarded")
    staged.done()


def unseen_records(
    con: duckdb.DuckDBPyConnection, sources: Collection[str]
) -> dict[str, list[str]]:
    """Per source, the record ids of the lineage (not withdrawn) this harvest has not seen."""
    rows = con.execute(
        "SELECT s.source, s.record_id FROM record_state s "
        "WHERE NOT s.withdrawn AND list_contains(string_split($1, $2), s.source) "
        "AND s.record_id NOT IN (SELECT record_id FROM seen) ORDER BY s.source, s.record_id",
        [SEP.join(sorted(sources)), SEP],
    ).fetchall()
    out: dict[str, list[str]] = {}
    for source, rid in rows:
        out.setdefault(source, []).append(rid)
    return out


def live_records(con: duckdb.DuckDBPyConnection, record_ids: Collection[str]) -> set[str]:
    """The ids among ``record_ids`` the lineage holds and has not marked withdrawn."""
    ids = sorted(set(record_ids))
    if not ids:
        return set()
    rows = con.execute(
        "SELECT s.record_id FROM record_state s "
        "JOIN (SELECT unnest(string_split($1, $2)) AS record_id) k USING (record_id) "
        "WHERE NOT s.withdrawn",
        [SEP.join(ids), SEP],
    ).fetchall()
    return {str(r[0]) for r in rows}


def lineage_controls(
    con: duckdb.DuckDBPyConnection,
    source: str,
    scheme: str,
    exclude: Collection[str],
    limit: int,
) -> list[str]:
    """Up to ``limit`` ids ``scheme:…`` of ``source`` the lineage holds, not withdrawn and not
    in ``exclude`` (lowest first: the same ones every build)."""
    rows = con.execute(
        "SELECT record_id FROM record_state WHERE NOT withdrawn AND source = $1 "
        "AND starts_with(record_id, $2) "
        "AND record_id NOT IN (SELECT unnest(string_split($3, $4))) "
        "ORDER BY record_id LIMIT $5",
        [source, f"{scheme}:", SEP.join(sorted(set(exclude))), SEP, limit],
    ).fetchall()
    return [str(r[0]) for r in rows]


def pmcid_carriers(
    con: duckdb.DuckDBPyConnection, source: str, pmcids: Collection[str]
) -> set[str]:
    """The live record ids of ``source`` whose current version carries one of ``pmcids``."""
    wanted = sorted(set(pmcids))
    if not wanted:
        return set()
    rows = con.execute(
        "SELECT s.record_id FROM record_state s JOIN records r "
        "ON r.record_id = s.record_id AND r.version = s.current_version "
        "WHERE NOT s.withdrawn AND s.source = $1 "
        "AND list_contains(string_split($2, $3), r.pmcid)",
        [source, SEP.join(wanted), SEP],
    ).fetchall()
    return {str(r[0]) for r in rows}


def current_passages(
    con: duckdb.DuckDBPyConnection, record_ids: Collection[str]
) -> dict[str, tuple[str, int]]:
    """For the records among ``record_ids`` the lineage holds (not withdrawn): their current
    version and its number of passages."""
    ids = sorted(set(record_ids))
    if not ids:
        return {}
    rows = con.execute(
        "SELECT s.record_id, s.current_version, count(p.path) FROM record_state s "
        "JOIN (SELECT unnest(string_split($1, $2)) AS record_id) k USING (record_id) "
        "LEFT JOIN passages p ON p.record_id = s.record_id AND p.version = s.current_version "
        "WHERE NOT s.withdrawn GROUP BY s.record_id, s.current_version",
        [SEP.join(ids), SEP],
    ).fetchall()
    return {str(rid): (str(version), int(n)) for rid, version, n in rows}


def unrefreshed_count(con: duckdb.DuckDBPyConnection) -> int:
    """Records of the lineage (not withdrawn) this harvest did not see completely: their
    parent state is what this snapshot holds."""
    row = con.execute(
        "SELECT count(*) FROM record_state WHERE NOT withdrawn "
        "AND record_id NOT IN (SELECT record_id FROM seen)"
    ).fetchone()
    return int(row[0]) if row else 0


def finalize_state(
    con: duckdb.DuckDBPyConnection, withdrawn: Collection[str], snapshot_id: str
) -> int:
    """Point ``record_state`` at the versions seen now and mark ``withdrawn`` ids.

    Returns the number of records newly marked withdrawn.
    """
    con.execute(
        "UPDATE record_state SET current_version = seen.version, withdrawn = FALSE, "
        "withdrawn_since = NULL FROM seen WHERE record_state.record_id = seen.record_id"
    )
    con.execute(
        "INSERT INTO record_state (record_id, source, current_version, withdrawn) "
        "SELECT record_id, source, version, FALSE FROM seen "
        "WHERE record_id NOT IN (SELECT record_id FROM record_state)"
    )
    if not withdrawn:
        return 0
    result = con.execute(
        "UPDATE record_state SET withdrawn = TRUE, withdrawn_since = $3 "
        "WHERE NOT withdrawn AND record_id IN (SELECT unnest(string_split($1, $2))) "
        "AND record_id NOT IN (SELECT record_id FROM seen)",
        [SEP.join(sorted(set(withdrawn))), SEP, snapshot_id],
    ).fetchone()
    return int(result[0]) if result else 0
