"""Works: the records of one paper across sources, grouped at search time.

A PubMed record, its Europe PMC copy, its Crossref record and its preprint are four records of
one *work*. Two records belong to the same work when they share an identifier, or when one is
linked to the other by a preprint relation, and the relation is transitive (a PubMed record
that shares its PMID with a Europe PMC record that shares its DOI with a Crossref record: one
work of three). The graph::

    node        a record id (current version, not withdrawn: what search ranks), or an
                identifier: its record id itself, ``pmid:`` + pmid, ``pmcid:`` + PMCID
                (upper-cased), ``doi:`` + DOI (case-folded: DOIs are case-insensitive)
    edge        record — each identifier it carries; record — the target of each of its
                ``preprint_of`` / ``has_preprint`` relations (Europe PMC "Preprint of" /
                "Preprint in", Crossref ``is-preprint-of`` / ``has-preprint``)
    work        a connected component; its id is the smallest record id in it

The components are found in SQL, at search time, only for the records a search keeps
(:func:`works_sql`): a recursive walk from each kept record over the identifiers that at least
two records share (an identifier only one record carries connects nothing, so the walk skips
the bulk of the graph). Nothing is stored in the snapshot, so every snapshot, older ones
included, groups the same way, and the grouping is a pure function of the snapshot: the same
snapshot and query give the same works on every run.

Flags of a work: ``retracted`` and ``expression_of_concern`` are about the paper, so a work
carries them **fail closed** over every record of the work (matching the query or not): True
when any record says True, else unknown (None) when any record does not know, else False.
``preprint`` is a property of each record (a preprint and its published version are one work),
so a result shows the flag of the record it shows.
"""

from __future__ import annotations

PREPRINT_KINDS = ("preprint_of", "has_preprint")
"""Relation kinds that join a preprint and its published version into one work."""

WORK_FLAGS = ("retracted", "expression_of_concern")
"""Flags a work carries fail closed over all its records (module docstring)."""

_IDENT_SQL = "CASE WHEN starts_with({x}, 'doi:') THEN lower({x}) ELSE {x} END"


def _ident(column: str) -> str:
    return _IDENT_SQL.format(x=column)


def fold_flag_sql(column: str) -> str:
    """A work's flag over its records' ``column``: True if any True, NULL if any NULL, else
    False (an aggregate)."""
    return (
        f"CASE WHEN bool_or({column}) THEN TRUE "
        f"WHEN count({column}) < count(*) THEN NULL ELSE FALSE END"
    )


def works_sql(kept: str) -> str:
    """CTEs (to follow ``WITH RECURSIVE``) that group the records of ``kept`` (a CTE with a
    ``record_id`` column) into works:

    ``work_of (record_id, work)``          each kept record and its work id
    ``work_members (work, record_id)``     every record of those works, kept or not
    ``work_flags (work, retracted, expression_of_concern)``  the works' flags, fail closed
    """
    kinds = ", ".join(f"'{kind}'" for kind in PREPRINT_KINDS)
    flags = ", ".join(f"{fold_flag_sql('r.' + flag)} AS {flag}" for flag in WORK_FLAGS)
    return f"""
live AS MATERIALIZED (
    SELECT r.record_id, r.pmid, r.pmcid, r.doi, r.retracted, r.expression_of_concern
    FROM records r JOIN record_state s
      ON s.record_id = r.record_id AND s.current_version = r.version
    WHERE NOT s.withdrawn),
carried AS (
    SELECT record_id, {_ident("record_id")} AS ident FROM live
    UNION ALL SELECT record_id, 'pmid:' || trim(pmid) FROM live WHERE trim(pmid) <> ''
    UNION ALL SELECT record_id, 'pmcid:' || upper(trim(pmcid)) FROM live WHERE trim(pmcid) <> ''
    UNION ALL SELECT record_id, 'doi:' || lower(trim(doi)) FROM live WHERE trim(doi) <> ''
    UNION ALL SELECT l.record_id, {_ident("trim(l.target)")} FROM relations l
      SEMI JOIN live USING (record_id) WHERE l.kind IN ({kinds})),
shared AS MATERIALIZED (
    SELECT * FROM (SELECT DISTINCT record_id, ident FROM carried)
    QUALIFY count(*) OVER (PARTITION BY ident) > 1),
reach (seed, record_id) AS (
    SELECT DISTINCT record_id, record_id FROM {kept}
    UNION
    SELECT reach.seed, b.record_id FROM reach
    JOIN shared a ON a.record_id = reach.record_id
    JOIN shared b ON b.ident = a.ident),
work_of AS MATERIALIZED (SELECT seed AS record_id, min(record_id) AS work FROM reach GROUP BY seed),
work_members AS MATERIALIZED (
    SELECT DISTINCT w.work, reach.record_id FROM reach JOIN work_of w ON w.record_id = reach.seed),
work_flags AS MATERIALIZED (
    SELECT m.work, {flags} FROM work_members m JOIN live r USING (record_id) GROUP BY m.work)"""  # noqa: S608
