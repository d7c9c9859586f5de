"""Crossref's update notices: asked in batches by ``updates:`` filter, merged into records.

:func:`fetch_update_notices` asks one ``filter=updates:A,updates:B,…`` list (a repeated
filter is ORed, API-FACTS §4) for up to :data:`UPDATES_BATCH` DOIs, paged by ``cursor``
(:class:`UpdatesPages`, a sans-I/O pager), and answers each DOI's notices as relations of the
updated record. :func:`apply_relations` merges relations into a record from any source
(True wins; unknown stays unknown; one retraction found through PubMed and Crossref counted
once), and :func:`with_notices` merges a batch's notices into records, making the flags of a
record whose notices could not be fetched unknown, never False.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pipeline.errors import ParseError, TerminalHarvestError
from pipeline.http import HttpClient
from pipeline.records import Flags, Record, Relation
from pipeline.sources import jsonshape as shape
from pipeline.sources.base import Request, Step
from pipeline.sources.crossref_works import ROWS, SOURCE, _doi, _notice_relations, parse
from pipeline.sources.paging import walk
from pipeline.xmlsafe import load_json

if TYPE_CHECKING:
    import httpx

WORKS_URL = "https://api.crossref.org/works"
# DOIs OR-ed into one ``filter=updates:…,updates:…`` request: the same URL budget (the
# ``updates:`` term is 8 bytes a DOI, ~2.5 kB for 50 DOIs of ~40 bytes, well inside the
# 4-8 kB servers accept); a notice list is paged by ``cursor`` in pages of ``ROWS``
UPDATES_BATCH = 50


def _page_of(body: str | bytes) -> tuple[list[dict[str, Any]], int | None, str | None]:
    """One checked page of an ``updates:`` list: its items, ``total-results``, next cursor."""
    result = parse(body)
    data = load_json(body, what="Crossref works JSON")
    items = [item for _, item in shape.objs(SOURCE, "message.items", data["message"].get("items"))]
    return items, result.count, result.next


def fetch_update_notices(client: HttpClient, dois: Sequence[str]) -> dict[str, list[Relation]]:
    """Notices (retraction, expression of concern, correction…) that update each of ``dois``
    (at most :data:`UPDATES_BATCH`, none holding a ``,``), as relations of the updated record
    (target: the notice's DOI), keyed by the DOI in lower case; a DOI no notice updates maps
    to ``[]``.

    One ``filter=updates:A,updates:B,…`` request (a repeated filter is ORed), paged by
    ``cursor`` until every notice is read: the answer must end (a page shorter than ``rows``
    or without ``next-cursor``) having listed ``total-results`` notices, without a cursor
    repeating, or it is a :class:`~pipeline.errors.ParseError` for the whole batch (the
    harvest lists it as a failure of every DOI in it)."""
    wanted = list(dict.fromkeys(_doi(d) for d in dois))
    if not wanted:
        return {}
    if len(wanted) > UPDATES_BATCH or any("," in d or not d for d in wanted):
        raise TerminalHarvestError(
            f"cannot ask Crossref for the notices of {len(wanted)} DOIs in one filter: at most "
            f"{UPDATES_BATCH}, none empty or holding a ','"
        )
    return walk(client, SOURCE, UpdatesPages(wanted))


class UpdatesPages:
    """The pages of one ``filter=updates:A,updates:B,…`` list (a
    :class:`~pipeline.sources.base.Pager`), checked as :func:`fetch_update_notices` says."""

    def __init__(self, wanted: list[str]) -> None:
        self.wanted = wanted
        self.params: dict[str, str | int] = {
            "filter": ",".join(f"updates:{d}" for d in wanted),
            "rows": ROWS,
            "cursor": "*",
        }
        self.items: list[tuple[str, dict[str, Any]]] = []
        self.total: int | None = None
        self.cursors: set[str] = set()

    def first(self) -> Request:
        return Request(WORKS_URL, self.params)

    def step(self, response: httpx.Response) -> Step:
        page, count, cursor = _page_of(response.content)
        items = self.items
        items.extend((f"message.items[{len(items) + i}]", item) for i, item in enumerate(page))
        self.total = count if self.total is None else self.total
        if cursor is None or (self.total is not None and len(items) >= self.total):
            return Step(None)
        if cursor in self.cursors:
            raise ParseError(
                f"Crossref repeated the cursor of an updates: list after {len(items)} notices"
            )
        self.cursors.add(cursor)
        self.params = {**self.params, "cursor": cursor}
        return Step(Request(WORKS_URL, self.params))

    def result(self) -> dict[str, list[Relation]]:
        if self.total is not None and len(self.items) < self.total:
            raise ParseError(
                f"Crossref listed {len(self.items)} of the {self.total} notices of an updates: "
                "list before it ended"
            )
        return {doi: _notice_relations(self.items, doi) for doi in self.wanted}


_DOI_IN_DETAIL = re.compile(r"\b(10\.\d{4,9}/\S+?)\.?(?:\s|$)")


def _notice_dois(relation: Relation) -> set[str]:
    """The DOIs (lower case) that name the notice of ``relation``: its ``doi:`` target, or a
    DOI written in its detail (PubMed's RefSource: "Lancet. 2010;375:445. doi: 10.1016/…")."""
    dois = {relation.target[4:].lower()} if relation.target.startswith("doi:") else set()
    dois.update(found.lower() for found in _DOI_IN_DETAIL.findall(f"{relation.detail or ''} "))
    return dois


def _dedupe(relations: Iterable[Relation]) -> list[Relation]:
    """One relation per notice: a relation is dropped when one kept before has the same kind
    and the same target, or the same kind and a notice DOI in common (PubMed's
    ``retraction_in pmid:N`` whose RefSource names the DOI that Crossref's ``retraction_in
    doi:…`` targets: one retraction, counted once). The first keeps its place, and takes the
    date of the later one when it has none."""
    unique: list[Relation] = []
    for relation in relations:
        dois = _notice_dois(relation)
        for n, kept in enumerate(unique):
            if kept.kind == relation.kind and (
                kept.target == relation.target or dois & _notice_dois(kept)
            ):
                if kept.date is None and relation.date is not None:
                    unique[n] = kept.model_copy(update={"date": relation.date})
                break
        else:
            unique.append(relation)
    return unique


def apply_relations(record: Record, relations: Sequence[Relation]) -> Record:
    """``record`` with ``relations`` merged in and its flags updated (True wins).

    A retraction (``retraction_in``, ``retracted_and_republished_in``) makes ``retracted``
    True, an ``expression_of_concern_in`` makes ``expression_of_concern`` True, a
    ``preprint_of`` makes ``preprint`` True; otherwise flags are left as they were, so an
    unknown (None) flag stays unknown.
    """
    merged = _dedupe([*record.relations, *relations])
    kinds = {r.kind for r in merged}
    flags = record.flags

    def wins(current: bool | None, hit: bool) -> bool | None:
        return True if hit else current

    new_flags = Flags(
        retracted=wins(
            flags.retracted, bool(kinds & {"retraction_in", "retracted_and_republished_in"})
        ),
        expression_of_concern=wins(
            flags.expression_of_concern, "expression_of_concern_in" in kinds
        ),
        preprint=wins(flags.preprint, "preprint_of" in kinds),
    )
    return record.model_copy(update={"relations": merged, "flags": new_flags})


def with_notices(
    records: Sequence[Record], notices: Mapping[str, list[Relation] | None]
) -> tuple[list[Record], set[str]]:
    """``records`` with the Crossref notices of their DOIs (``notices``: lower-cased DOI →
    its notices, or None when they could not be fetched) merged in, and the ids of the records
    whose notices are unknown: their retraction flags are made unknown, never false."""
    out: list[Record] = []
    failed: set[str] = set()
    for record in records:
        relations = notices[record.doi.lower()] if record.doi else []
        if relations is None:
            failed.add(record.record_id)
            out.append(_notices_unknown(record))
        else:
            out.append(apply_relations(record, relations) if relations else record)
    return out, failed


def _notices_unknown(record: Record) -> Record:
    """``record`` with the flags Crossref's notices decide made unknown: whether it was
    retracted or drew an expression of concern is not known without them (True stays True,
    e.g. from PubMed's own publication types)."""
    flags = record.flags
    unknown = Flags(
        retracted=True if flags.retracted else None,
        expression_of_concern=True if flags.expression_of_concern else None,
        preprint=flags.preprint,
    )
    return record if unknown == flags else record.model_copy(update={"flags": unknown})
