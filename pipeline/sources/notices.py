"""Notices (retraction notices, errata, expressions of concern) as relations and flags of the
records they concern. Pure.

A notice is kept as a record: its ``content_type`` names the notice
(:data:`pipeline.records.NOTICE_CONTENT_TYPES`) and its own flags never say retracted. Its
relation to the record it concerns (``retraction_of``, ``erratum_for``,
``expression_of_concern_for``… :data:`pipeline.records.NOTICE_OF`) is turned round: a record of
the same batch that the notice names (by ``record_id``, PMID, PMCID or DOI) gets the inverse
relation (``retraction_in`` → the notice) and the flag it sets (``retracted``,
``expression_of_concern``; True wins, as with Crossref's notices). A notice about a record
outside the batch changes nothing: that record's own upstream entry has to say so.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.records import NOTICE_OF, Flags, Record, Relation


def _keys(record: Record) -> set[str]:
    """The ids a relation target can name ``record`` by."""
    keys = {record.record_id}
    if record.pmid:
        keys.add(f"pmid:{record.pmid}")
    if record.pmcid:
        keys.add(f"pmcid:{record.pmcid}")
    if record.doi:
        keys.add(f"doi:{record.doi.lower()}")
    return keys


def _target_key(target: str) -> str:
    scheme, _, ident = target.partition(":")
    return f"doi:{ident.lower()}" if scheme == "doi" else target


def apply_notices(records: Sequence[Record]) -> list[Record]:
    """``records`` with every notice among them applied to the records it concerns (see the
    module docstring); records no notice names come back unchanged, in the same order."""
    found: dict[str, list[tuple[Relation, str | None]]] = {}
    for notice in records:
        for relation in notice.relations:
            inverse = NOTICE_OF.get(relation.kind)
            if inverse is None:
                continue
            kind, flag = inverse
            given = Relation(
                kind=kind,
                target=notice.record_id,
                source=relation.source,
                detail=notice.title or None,
                date=relation.date,
            )
            found.setdefault(_target_key(relation.target), []).append((given, flag))
    if not found:
        return list(records)
    out: list[Record] = []
    for record in records:
        hits = [hit for key in sorted(_keys(record)) for hit in found.get(key, ())]
        out.append(_with(record, hits) if hits else record)
    return out


def _with(record: Record, hits: list[tuple[Relation, str | None]]) -> Record:
    have = {(r.kind, r.target) for r in record.relations}
    relations = list(record.relations)
    for relation, _ in hits:
        if (relation.kind, relation.target) not in have and relation.target != record.record_id:
            have.add((relation.kind, relation.target))
            relations.append(relation)
    flags = record.flags
    raised = {flag for _, flag in hits if flag}
    new_flags = Flags(
        retracted=True if "retracted" in raised else flags.retracted,
        expression_of_concern=True
        if "expression_of_concern" in raised
        else flags.expression_of_concern,
        preprint=flags.preprint,
    )
    return record.model_copy(update={"relations": relations, "flags": new_flags})
