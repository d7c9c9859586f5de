"""Typed page contexts: what each site template may use, and nothing else.

Every page gets ``page`` (:class:`audit.render_html.Chrome`: title, relative root, CSP,
navigation) and one of the contexts below. Contexts hold plain strings and numbers; all
escaping is Jinja's autoescape. Hrefs are relative paths the build computed (never text taken
from a report or a record), so the site works from ``file://`` and from any sub-path.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Link:
    href: str
    label: str
    current: bool = False


@dataclass(frozen=True)
class Count:
    label: str
    value: str


# --- index -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexRow:
    href: str
    source: str
    verdict: str
    created_at: str
    snapshot_name: str
    snapshot_href: str | None
    citations: int
    fabricated: int
    retracted_cited: int
    cited_sentences: str  # "2/6"
    verbatim_quotes: str  # "1/2"
    changes: int  # citations whose status changed since publication (re-audit)
    changes_href: str | None


@dataclass(frozen=True)
class SortColumn:
    """A sortable column header: a link to the view sorted by it (no script needed)."""

    label: str
    href: str
    aria_sort: str | None  # "ascending" | "descending" on the current sort column
    css: str = ""


@dataclass(frozen=True)
class IndexPage:
    heading: str
    description: str
    totals: tuple[Count, ...]
    filters: tuple[Link, ...]
    sorts: tuple[SortColumn, ...]
    rows: tuple[IndexRow, ...]
    changed_citations: int
    reaudit_href: str


# --- snapshots ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SnapshotRow:
    href: str
    label: str
    name: str
    created_at: str
    sha256: str
    records: int
    passages: int
    parent: Link | None
    diff: Link | None
    newest: bool
    partial: bool = False  # requests of its harvest failed


@dataclass(frozen=True)
class SnapshotListPage:
    heading: str
    lineages: tuple[tuple[str, tuple[SnapshotRow, ...]], ...]  # (corpus name, oldest first)


@dataclass(frozen=True)
class RecordItem:
    record_id: str
    version: str
    title: str | None
    notes: tuple[str, ...]


@dataclass(frozen=True)
class RecordList:
    key: str  # anchor id
    title: str
    explanation: str
    items: tuple[RecordItem, ...]
    total: int


@dataclass(frozen=True)
class SourceLine:
    source: str
    status: str
    records: int
    passages: int
    failed_requests: int
    detail: str | None


@dataclass(frozen=True)
class SnapshotPage:
    heading: str
    facts: tuple[Count, ...]
    parent: Link | None
    children: tuple[Link, ...]
    diff: Link | None
    integrity: str  # one sentence: what was checked (file ↔ manifest ↔ seal) and the key
    integrity_ok: bool
    partial: str | None  # why the snapshot is partial (failed requests), None when complete
    first_of_lineage: bool  # built without a parent (whether or not its parent is published)
    counts: tuple[Count, ...]
    sources: tuple[SourceLine, ...]
    lists: tuple[RecordList, ...]
    manifest_json: str
    reports: tuple[Link, ...]
    snapshot_id: str  # the file is <id>.duckdb beside <id>.manifest.json and <id>.sha256
    downloads: tuple[Link, ...]  # the release and its three assets (built with --archive)


@dataclass(frozen=True)
class DiffSection:
    key: str
    title: str
    items: tuple[RecordItem, ...]


@dataclass(frozen=True)
class DiffPage:
    heading: str
    old: Link
    new: Link
    summary: tuple[Count, ...]
    sections: tuple[DiffSection, ...]


# --- re-audit ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChangeRow:
    href: str  # report page + citation anchor
    where: str  # "sentence 3, citation 1"
    handle: str
    kinds: tuple[str, ...]  # "newly retracted", "new version", "withdrawn", …
    was: str
    now: str
    details: tuple[str, ...]


@dataclass(frozen=True)
class ReauditEntry:
    anchor: str
    report: Link
    published_against: str
    published_href: str | None
    checked_against: Link | None
    method: str  # how check codes were treated
    outcome: str  # one sentence
    verdict_was: str
    verdict_now: str | None
    changes: tuple[ChangeRow, ...]


@dataclass(frozen=True)
class ReauditPage:
    heading: str
    description: str
    totals: tuple[Count, ...]
    changed: tuple[ReauditEntry, ...]
    unchanged: tuple[ReauditEntry, ...]
    not_checked: tuple[ReauditEntry, ...]
