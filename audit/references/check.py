"""Checking every reference of a document against a resolver: tiers, flags and a trace.

Tiers, the first rule that applies (docs/references.md has the table):

1. ``hallucinated`` — an identifier is invalid (an ISBN check digit, an NCT number without 8
   digits: no such identifier can exist), or resolves to a record that is clearly another work
   (title of little in common, and no shared first author), while nothing else in the
   reference, nor a title search, finds the work it describes (when something does, the work
   is real and the bad identifier makes it a ``mismatch``; when the title search failed, it is
   ``unresolved``). Online also: every identifier resolves to nothing at resolvers that
   answered (their lookups ``absent``) and the title, when given, was searched online and found
   nothing — never for a reference with an ISBN.
2. ``mismatch`` — the work is real (an identifier resolves to it, or its title finds it) but a
   field disagrees (title, authors, year beyond ±1, venue) or an identifier is another one's
   (a DOI that is another paper's, while the PMID is this one's): each in ``diffs``, seen vs
   expected.
3. ``verified`` — an identifier resolves to the work and nothing disagrees; or, for an entry
   without identifiers, the title search finds it and nothing disagrees.
4. ``needs_review`` — a book (an ISBN and nothing resolvable), or an entry with no identifier
   that the title search does not find: kinds a registry snapshot does not index.
5. ``unresolved`` — otherwise: an identifier not in the snapshot (offline, absence is never
   evidence of fabrication), an arXiv id offline (no corpus source holds arXiv), or a lookup
   failed (online: an outage, a storm, a body the parser rejects).

Flags (tri-state, None when no record was found): ``retracted``, ``expression_of_concern``,
``preprint`` and, for a preprint, its ``published_version`` when the snapshot links one. Each
reference carries a ``trace``: every lookup made (resolver, key, matched / unmatched /
unreachable, the records and a note). Pure apart from the resolver's lookups.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from audit.references.compare import (
    FieldCheck,
    compare_authors,
    compare_titles,
    compare_venues,
    compare_years,
)
from audit.references.model import ExtractedDocument, Identifier, InputFormat, Reference, Span
from audit.references.resolve import RESOLVABLE, Key, Lookup, Resolver, WorkRecord
from audit.terminal import one_line

Tier = Literal["verified", "mismatch", "hallucinated", "needs_review", "unresolved"]
TIERS: tuple[Tier, ...] = ("verified", "mismatch", "hallucinated", "needs_review", "unresolved")
FLAGS = ("retracted", "expression_of_concern", "preprint")
Judgement = Literal["same", "differs", "other"]
_RANK: dict[Judgement, int] = {"same": 0, "differs": 1, "other": 2}


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FieldDiff(_Model):
    """One field that disagrees: what the document says and what the record holds."""

    field: str
    seen: str | None
    expected: str | None


class TraceStep(_Model):
    """One lookup: which resolver, keyed by what, and what it gave."""

    resolver: str
    key: str
    outcome: Literal["matched", "unmatched", "unreachable"]
    records: tuple[str, ...] = ()
    detail: str | None = None


class Flags(_Model):
    retracted: bool | None = None
    expression_of_concern: bool | None = None
    preprint: bool | None = None
    published_version: str | None = None


class ReferenceCheck(_Model):
    """The check of one reference."""

    label: str | None
    kind: str
    span: Span
    location: Span
    """Where to point a reader: the first identifier's span, else the reference's."""
    identifiers: tuple[str, ...]
    """``scheme:value`` of each identifier, as normalised."""
    title: str | None
    tier: Tier
    reason: str
    record: str | None = None
    """The record id of the work it was checked against, when one was found."""
    diffs: tuple[FieldDiff, ...] = ()
    flags: Flags = Flags()
    trace: tuple[TraceStep, ...] = ()


class DocumentCheck(_Model):
    file: str
    format: InputFormat
    references: tuple[ReferenceCheck, ...]
    counts: dict[str, int]


class SnapshotRef(_Model):
    name: str
    sha256: str
    snapshot_id: str | None


class LookupRef(SnapshotRef):
    """The lookup snapshot of an online check: where it was written, and its identity."""

    path: str
    """As given to ``--lookup`` to re-run the check offline (relative to the working folder
    when inside it, else the file's name only)."""


class CheckReport(_Model):
    """Every checked document of one run, against one snapshot."""

    tool: str
    online: bool
    snapshot: SnapshotRef
    documents: tuple[DocumentCheck, ...]
    counts: dict[str, int]
    lookup: LookupRef | None = None
    """The lookup snapshot of an online check (or of its offline re-run), when one was made;
    left out of the JSON when there is none."""

    @model_serializer(mode="wrap")
    def _without_empty_lookup(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        if data.get("lookup") is None:
            data.pop("lookup", None)
        return data


def tier_counts(tiers: Sequence[Tier]) -> dict[str, int]:
    held = Counter(tiers)
    return {tier: held.get(tier, 0) for tier in TIERS}


def _judge(ref: Reference, record: WorkRecord) -> tuple[Judgement, list[FieldCheck]]:
    """Same work, same work with disagreeing fields, or clearly another work."""
    title = compare_titles(ref.title, record.title)
    authors = compare_authors(ref.authors, record.authors)
    checks = [
        title,
        authors,
        compare_years(ref.year, record.year),
        compare_venues(ref.venue, record.venue),
    ]
    if title.outcome == "other" and authors.outcome != "match":
        return "other", checks
    if title.outcome == "absent" and authors.outcome == "other" and checks[2].outcome != "match":
        return "other", checks
    if any(c.outcome in ("differs", "other") for c in checks):
        return "differs", checks
    return "same", checks


def _diffs(checks: list[FieldCheck]) -> list[FieldDiff]:
    return [
        FieldDiff(field=c.field, seen=c.seen, expected=c.expected)
        for c in checks
        if c.outcome in ("differs", "other")
    ]


def _best(ref: Reference, records: Sequence[WorkRecord]) -> tuple[WorkRecord, Judgement, list]:
    judged = [(r, *_judge(ref, r)) for r in records]
    return min(judged, key=lambda j: (_RANK[j[1]], j[0].source != "pubmed", j[0].record_id))


def _step(lookup: Lookup, outcome: str | None = None) -> TraceStep:
    return TraceStep(
        resolver=lookup.resolver,
        key=lookup.key,
        outcome=outcome or lookup.status,  # type: ignore[arg-type]
        records=tuple(r.record_id for r in lookup.records),
        detail=lookup.detail,
    )


def _flags(record: WorkRecord | None) -> Flags:
    if record is None:
        return Flags()
    return Flags(
        retracted=record.retracted,
        expression_of_concern=record.expression_of_concern,
        preprint=record.preprint,
        published_version=record.published_version,
    )


def _title_match(
    ref: Reference, resolver: Resolver, trace: list[TraceStep], seen: list[Lookup] | None = None
) -> WorkRecord | None:
    """The record the reference's title confidently finds (title matches, authors agree);
    ``seen`` gets the title's lookup."""
    if not ref.title:
        return None
    lookup = resolver.by_title(ref.title)
    if seen is not None:
        seen.append(lookup)
    confident = [
        r
        for r in lookup.records
        if compare_titles(ref.title, r.title).outcome == "match"
        and compare_authors(ref.authors, r.authors).outcome != "other"
    ]
    if lookup.status == "unreachable":
        trace.append(_step(lookup))
        return None
    found = _best(ref, confident)[0] if confident else None
    trace.append(
        TraceStep(
            resolver=lookup.resolver,
            key=lookup.key,
            outcome="matched" if found else "unmatched",
            records=(found.record_id,) if found else (),
            detail=None if found else "no title in the snapshot matches",
        )
    )
    return found


def _conflicts(ref: Reference, record: WorkRecord, found: dict[Key, Lookup]) -> list[FieldDiff]:
    """Identifiers of the reference that are not the record's (another work's, or absent
    while the record holds another value of that scheme)."""
    diffs = []
    for ident in _resolvable(ref):
        lookup = found.get((ident.scheme, ident.value))
        points_here = lookup is not None and any(
            r.record_id == record.record_id or _same_ids(r, record) for r in lookup.records
        )
        expected = record.value(ident.scheme)
        if not points_here and (expected is not None or (lookup and lookup.records)):
            diffs.append(FieldDiff(field=ident.scheme, seen=ident.value, expected=expected))
    return diffs


def _same_ids(a: WorkRecord, b: WorkRecord) -> bool:
    """Two records of one work from two sources (they share a DOI or a PMID)."""
    return bool((a.doi and a.value("doi") == b.value("doi")) or (a.pmid and a.pmid == b.pmid))


def _invalid(invalid: list[Identifier], record: WorkRecord) -> list[FieldDiff]:
    """The impossible identifiers of a reference to a real work, against the work's own."""
    return [FieldDiff(field=i.scheme, seen=i.raw, expected=record.value(i.scheme)) for i in invalid]


def _resolvable(ref: Reference) -> list[Identifier]:
    return [i for i in ref.identifiers if i.valid and i.scheme in RESOLVABLE]


def check_reference(ref: Reference, resolver: Resolver, found: dict[Key, Lookup]) -> ReferenceCheck:
    """The tier of one reference (module docstring); ``found``: the identifier lookups."""
    trace: list[TraceStep] = []
    ids = tuple(f"{i.scheme}:{i.value}" for i in ref.identifiers)

    def result(
        tier: Tier, reason: str, record: WorkRecord | None = None, diffs=()
    ) -> ReferenceCheck:
        return ReferenceCheck(
            label=ref.label,
            kind=ref.kind,
            span=ref.span,
            location=ref.identifiers[0].span if ref.identifiers else ref.span,
            identifiers=ids,
            title=ref.title,
            tier=tier,
            reason=reason,
            record=record.record_id if record else None,
            diffs=tuple(diffs),
            flags=_flags(record),
            trace=tuple(trace),
        )

    invalid = [i for i in ref.identifiers if not i.valid]
    for ident in invalid:
        key = f"{ident.scheme}:{ident.value}"
        trace.append(
            TraceStep(resolver="grammar", key=key, outcome="unmatched", detail=ident.problem)
        )
    judged: list[tuple[Identifier, WorkRecord, Judgement, list[FieldCheck]]] = []
    unreachable = False
    for ident in ref.identifiers:
        lookup = found.get((ident.scheme, ident.value)) if ident.valid else None
        if lookup is None:
            continue
        trace.append(_step(lookup))
        unreachable |= lookup.status == "unreachable"
        if lookup.status == "matched":
            judged.append((ident, *_best(ref, lookup.records)))
    real = [j for j in judged if j[2] != "other"]
    if real:
        ident, record, _, checks = min(real, key=lambda j: _RANK[j[2]])
        diffs = _diffs(checks) + _conflicts(ref, record, found) + _invalid(invalid, record)
        if diffs:
            fields = ", ".join(d.field for d in diffs)
            return result("mismatch", f"{record.record_id} disagrees on {fields}", record, diffs)
        return result("verified", f"{ident.scheme}:{ident.value} is {record.record_id}", record)
    title_lookups: list[Lookup] = []
    if judged or invalid:  # an impossible identifier, or every one that resolves is another's
        titled = _title_match(ref, resolver, trace, title_lookups)
        wrong = invalid[0] if invalid else judged[0][0]
        if titled is not None:
            diffs = _conflicts(ref, titled, found) + _invalid(invalid, titled)
            reason = f"the title is {titled.record_id}, but {wrong.scheme}:{wrong.value} is not"
            return result("mismatch", reason, titled, diffs)
        if any(t.status == "unreachable" for t in title_lookups):  # the work may be real
            return result("unresolved", "the title search failed (see the trace)")
        if invalid:
            reason = f"{wrong.raw} is not a valid {wrong.scheme}: {wrong.problem}"
            return result("hallucinated", reason)
        _, other, _, checks = judged[0]
        reason = f"{wrong.scheme}:{wrong.value} is {other.record_id}, a different work"
        return result("hallucinated", reason, None, _diffs(checks))
    titled = _title_match(ref, resolver, trace, title_lookups)
    if titled is not None:
        record_diffs = _diffs(_judge(ref, titled)[1])
        conflicts = _conflicts(ref, titled, found)
        if conflicts or record_diffs:
            fields = ", ".join(d.field for d in record_diffs + conflicts)
            reason = f"the title is {titled.record_id}, which disagrees on {fields}"
            return result("mismatch", reason, titled, record_diffs + conflicts)
        if not ref.identifiers:
            return result("verified", f"the title is {titled.record_id}", titled)
        reason = f"the title is {titled.record_id}, which holds none of its identifiers"
        return result("unresolved", reason, titled)
    if unreachable or any(t.status == "unreachable" for t in title_lookups):
        return result("unresolved", "a lookup failed (see the trace)")
    nowhere = _nowhere(ref, found, title_lookups)
    if nowhere is not None:
        return result("hallucinated", nowhere)
    if any(i.scheme == "isbn" for i in ref.identifiers) and not _resolvable(ref):
        return result("needs_review", "a book (ISBN): the snapshot does not index books")
    if ref.identifiers:
        notes = []
        for ident in ref.identifiers:
            lookup = found.get((ident.scheme, ident.value))
            note = lookup.detail if lookup and lookup.detail else "not in this snapshot"
            notes.append(f"{ident.scheme}:{ident.value}: {note}")
        return result("unresolved", "; ".join(notes) + " (offline: not evidence of fabrication)")
    return result("needs_review", "no identifier, and no title in the snapshot matches")


def _nowhere(ref: Reference, found: dict[Key, Lookup], titles: list[Lookup]) -> str | None:
    """Why the reference is fabricated when every identifier of it resolves to nothing at
    resolvers that answered (online: ``absent``) and no work of its title exists either (its
    title searched online, with nothing found); None when that is not so. A reference with an
    ISBN is never called so (a book may be in no registry)."""
    ids = [i for i in ref.identifiers if i.valid]
    if not ids or any(i.scheme == "isbn" for i in ids):
        return None
    lookups = [found.get((i.scheme, i.value)) for i in ids]
    if not all(lookup is not None and lookup.absent for lookup in lookups):
        return None
    if ref.title and not (titles and all(t.absent for t in titles)):
        return None
    named = ", ".join(f"{i.scheme}:{i.value}" for i in ids)
    title = "; no work of its title exists either" if ref.title else ""
    return f"{named} resolves to nothing at registries that answered{title}"


def check_document(document: ExtractedDocument, resolver: Resolver) -> DocumentCheck:
    """Every reference of one document, the identifier lookups made in one batch."""
    return check_documents([document], resolver)[0]


def check_documents(
    documents: Sequence[ExtractedDocument], resolver: Resolver
) -> list[DocumentCheck]:
    """Every reference of each document, the identifier lookups of all of them made in one
    batch (an audit's chunk of answers: one query, not one per answer)."""
    keys = sorted({(i.scheme, i.value) for d in documents for i in d.identifiers if i.valid})
    found = resolver.by_identifiers(keys) if keys else {}
    checked = []
    for document in documents:
        checks = tuple(check_reference(ref, resolver, found) for ref in document.references)
        checked.append(
            DocumentCheck(
                file=document.file,
                format=document.format,
                references=checks,
                counts=tier_counts([c.tier for c in checks]),
            )
        )
    return checked


def make_report(
    documents: Sequence[DocumentCheck],
    snapshot: SnapshotRef,
    tool: str,
    *,
    online: bool = False,
    lookup: LookupRef | None = None,
) -> CheckReport:
    tiers: list[Tier] = [c.tier for d in documents for c in d.references]
    return CheckReport(
        tool=tool,
        online=online,
        snapshot=snapshot,
        documents=tuple(documents),
        counts=tier_counts(tiers),
        lookup=lookup,
    )


def failing(report: CheckReport, items: Sequence[str]) -> list[ReferenceCheck]:
    """The references that make ``--fail-on items`` fail (a tier, or a flag that is true)."""
    wanted = set(items)
    return [
        c
        for d in report.documents
        for c in d.references
        if c.tier in wanted or any(f in wanted and getattr(c.flags, f) is True for f in FLAGS)
    ]


def reference_lines(c: ReferenceCheck, indent: str = "  ") -> list[str]:
    """The text lines of one checked reference: where, label, tier, flags and reason, then
    each field that disagrees. Document text goes through :func:`audit.terminal.one_line`
    (line breaks, controls and bidi characters escaped); ``repr`` quotes the seen/expected."""
    where = f"{c.span.line}:{c.span.column}"
    label = f"[{one_line(c.label)}] " if c.label else ""
    flags = [f for f in FLAGS if getattr(c.flags, f) is True]
    if c.flags.published_version:
        flags.append(f"published as {one_line(c.flags.published_version)}")
    extra = f" [{', '.join(flags)}]" if flags else ""
    lines = [f"{indent}{where} {label}{c.tier}{extra}: {one_line(c.reason)}"]
    lines.extend(
        f"{indent}    {d.field}: seen {d.seen!r}, expected {d.expected!r}" for d in c.diffs
    )
    return lines


def render_text(report: CheckReport) -> str:
    """One line per reference, grouped by document, then the totals."""
    mode = "online" if report.online else "offline"
    lines = [f"snapshot: {report.snapshot.name} (sha256 {report.snapshot.sha256[:12]}), {mode}"]
    if report.lookup is not None:
        lookup = report.lookup
        lines.append(
            f"lookup snapshot: {lookup.snapshot_id or lookup.name} (sha256 {lookup.sha256[:12]})"
        )
    for doc in report.documents:
        lines.append(f"{one_line(doc.file)} ({doc.format}): {_summary(doc.counts)}")
        for c in doc.references:
            lines.extend(reference_lines(c))
    lines.append(f"total: {_summary(report.counts)}")
    return "\n".join(lines) + "\n"


def _summary(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts[t]} {t}" for t in TIERS if counts.get(t)) or "no references"
