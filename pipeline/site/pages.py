"""Phase two of the site build: turn :class:`~pipeline.site.build.SiteData` into pages.

Pure: it reads no file and no clock; ``render_pages`` returns ``{relative path: html}``.

Layout of the site (every link relative, so it works from ``file://`` and a sub-path)::

    index.html                     all reports, newest first
    reports-<filter>-by-<sort>.html   the same list filtered by verdict and/or sorted otherwise
    reports/<slug>.html            one page per report (anchors #s3, #s3c1)
    snapshots.html                 every snapshot, grouped by corpus, with lineage links
    snapshots/<slug>.html          one page per snapshot
    diffs/<old>--<new>.html        what changed between consecutive snapshots
    reaudit.html                   citations whose status changed since publication
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import jinja2

from audit.publish import licences_of, published_report, with_licences
from audit.render_html import Chrome, NavLink, render_report_page, report_view
from audit.report import OVERALLS, Report
from pipeline.archive.releases import download_urls
from pipeline.site.contexts import (
    ChangeRow,
    Count,
    DiffPage,
    DiffSection,
    IndexPage,
    IndexRow,
    Link,
    ReauditEntry,
    ReauditPage,
    RecordItem,
    RecordList,
    SnapshotListPage,
    SnapshotPage,
    SnapshotRow,
    SortColumn,
)
from pipeline.site.diffs import SnapshotDiff
from pipeline.site.loaders import LoadedReport
from pipeline.site.snapshots import LoadedSnapshot

if TYPE_CHECKING:
    from pipeline.site.build import SiteData

GRAVEST_FIRST = tuple(reversed(OVERALLS))  # fail, incomplete, warn, pass
FILTERS = ("all", *GRAVEST_FIRST)
SORTS = ("date", "source", "fabricated")
SORT_LABELS = {"date": "Audited", "source": "Answer", "fabricated": "Fabricated"}
VERDICT_ORDER = {verdict: rank for rank, verdict in enumerate(GRAVEST_FIRST)}


def view_path(filter_: str, sort: str) -> str:
    return (
        "index.html" if (filter_, sort) == ("all", "date") else f"reports-{filter_}-by-{sort}.html"
    )


def report_path(slug: str) -> str:
    return f"reports/{slug}.html"


def report_json_path(slug: str) -> str:
    """The report itself, as JSON, beside its page: what ``citeseal reaudit`` reads."""
    return f"reports/{slug}.json"


def snapshot_path(slug: str) -> str:
    return f"snapshots/{slug}.html"


def diff_path(slug: str) -> str:
    return f"diffs/{slug}.html"


def _chrome(data: SiteData, title: str, root: str, section: str) -> Chrome:
    nav = tuple(
        NavLink(root + href, label, current=(key == section))
        for key, href, label in (
            ("reports", "index.html", "Reports"),
            ("snapshots", "snapshots.html", "Snapshots"),
            ("reaudit", "reaudit.html", "Re-audit"),
        )
    )
    return Chrome(
        title=title, root=root, stylesheet="static/site.css", nav=nav, build_date=data.build_date
    )


def render_pages(data: SiteData, env: jinja2.Environment) -> dict[str, str]:
    """Every page of the site, keyed by its path relative to the site root."""
    pages: dict[str, str] = {}
    index = env.get_template("index.html.j2")
    for filter_ in FILTERS:
        for sort in SORTS:
            context = index_page(data, filter_, sort)
            chrome = _chrome(data, context.heading, "", "reports")
            pages[view_path(filter_, sort)] = index.render(page=chrome, index=context)
    for loaded in data.reports:
        licensed = _licensed(data, loaded)
        pages[report_path(loaded.slug)] = _report_page(data, loaded, licensed, env)
        published = published_report(licensed, data.publish)
        pages[report_json_path(loaded.slug)] = published.model_dump_json(indent=2) + "\n"
    pages["snapshots.html"] = env.get_template("snapshots.html.j2").render(
        page=_chrome(data, "Snapshots", "", "snapshots"), listing=snapshot_list_page(data)
    )
    snapshot_template = env.get_template("snapshot.html.j2")
    for snapshot in data.lineage.snapshots:
        context = snapshot_page(data, snapshot)
        chrome = _chrome(data, context.heading, "../", "snapshots")
        pages[snapshot_path(snapshot.slug)] = snapshot_template.render(page=chrome, snap=context)
    diff_template = env.get_template("diff.html.j2")
    for diff in data.diffs:
        context = diff_page(diff)
        chrome = _chrome(data, context.heading, "../", "snapshots")
        pages[diff_path(diff.slug)] = diff_template.render(page=chrome, diff=context)
    pages["reaudit.html"] = env.get_template("reaudit.html.j2").render(
        page=_chrome(data, "Re-audit", "", "reaudit"), reaudit=reaudit_page(data)
    )
    return pages


# --- index -------------------------------------------------------------------------------------


def _sort_key(sort: str) -> Callable[[IndexRow], tuple[object, ...]]:
    if sort == "source":
        return lambda r: (r.source.lower(), r.href)
    if sort == "fabricated":
        return lambda r: (-r.fabricated, VERDICT_ORDER.get(r.verdict, len(VERDICT_ORDER)), r.href)
    return lambda r: (_Desc(r.created_at), r.href)


class _Desc:
    """Sorts strings in reverse inside an otherwise ascending key."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __lt__(self, other: _Desc) -> bool:
        return self.value > other.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.value == other.value

    __hash__ = None  # type: ignore[assignment]


def index_rows(data: SiteData) -> list[IndexRow]:
    rows: list[IndexRow] = []
    for loaded in data.reports:
        report = loaded.report
        snapshot = data.report_snapshots.get(loaded.slug)
        outcome = data.reaudits.get(loaded.slug)
        changes = len(outcome.changes) if outcome else 0
        m = report.metrics
        rows.append(
            IndexRow(
                href=report_path(loaded.slug),
                source=report.source,
                verdict=report.verdict,
                created_at=report.created_at,
                snapshot_name=report.snapshot.name,
                snapshot_href=snapshot_path(snapshot.slug) if snapshot else None,
                citations=m.citations,
                fabricated=m.fabricated,
                retracted_cited=m.retracted_cited,
                cited_sentences=f"{m.cited_sentences}/{m.sentences}",
                verbatim_quotes=f"{m.verbatim_quotes}/{m.quotes}",
                changes=changes,
                changes_href=f"reaudit.html#r-{loaded.slug}" if changes else None,
            )
        )
    return rows


def index_page(data: SiteData, filter_: str, sort: str) -> IndexPage:
    everything = index_rows(data)
    rows = [r for r in everything if filter_ == "all" or r.verdict == filter_]
    rows.sort(key=_sort_key(sort))
    counts = {v: sum(1 for r in everything if r.verdict == v) for v in GRAVEST_FIRST}
    filters = tuple(
        Link(
            view_path(f, sort),
            f"all ({len(everything)})" if f == "all" else f"{f} ({counts[f]})",
            current=(f == filter_),
        )
        for f in FILTERS
    )
    sorts = tuple(
        SortColumn(
            label=SORT_LABELS[s],
            href=view_path(filter_, s),
            aria_sort=(None if s != sort else "ascending" if s == "source" else "descending"),
            css="num" if s == "fabricated" else "",
        )
        for s in SORTS
    )
    heading = "Published audits" if filter_ == "all" else f"Published audits: {filter_}"
    return IndexPage(
        heading=heading,
        description=(
            "Every answer audited against a frozen snapshot: each citation's handle verified, "
            "each quote compared with the cited passage, each cited record checked for "
            "retractions and new versions."
        ),
        totals=(
            Count("reports", str(len(everything))),
            *(Count(v, str(counts[v])) for v in GRAVEST_FIRST),
        ),
        filters=filters,
        sorts=sorts,
        rows=tuple(rows),
        changed_citations=sum(len(o.changes) for o in data.reaudits.values()),
        reaudit_href="reaudit.html",
    )


# --- reports -----------------------------------------------------------------------------------


def _licensed(data: SiteData, loaded: LoadedReport) -> Report:
    """The report with each record's licence as the snapshot of its re-audit says (unknown
    when it could not be re-audited): :func:`audit.publish.with_licences`."""
    outcome = data.reaudits.get(loaded.slug)
    return with_licences(loaded.report, licences_of(outcome.rechecked if outcome else None))


def _report_page(
    data: SiteData, loaded: LoadedReport, licensed: Report, env: jinja2.Environment
) -> str:
    """The page of ``loaded``, showing ``licensed`` (its report with the snapshot's licences)."""
    snapshot = data.report_snapshots.get(loaded.slug)
    href = "../" + snapshot_path(snapshot.slug) if snapshot else None
    view = report_view(licensed, snapshot_href=href, publish=data.publish)
    outcome = data.reaudits.get(loaded.slug)
    reaudit = None
    if outcome is not None and outcome.changes:
        n = len(outcome.changes)
        reaudit = {
            "summary": f"{n} citation{'s' if n > 1 else ''} changed status since publication.",
            "href": f"../reaudit.html#r-{loaded.slug}",
        }
    chrome = _chrome(data, view.title, "../", "reports")
    json_href = report_json_path(loaded.slug).removeprefix("reports/")
    return render_report_page(env, view, chrome, reaudit=reaudit, json_href=json_href)


# --- snapshots ---------------------------------------------------------------------------------


def _snapshot_link(snapshot: LoadedSnapshot, prefix: str = "") -> Link:
    return Link(prefix + snapshot_path(snapshot.slug), snapshot.label)


def _diff_for(data: SiteData, child: LoadedSnapshot) -> SnapshotDiff | None:
    return next((d for d in data.diffs if d.new is child), None)


def snapshot_list_page(data: SiteData) -> SnapshotListPage:
    lineages: list[tuple[str, tuple[SnapshotRow, ...]]] = []
    for name, members in data.lineage.groups():
        rows: list[SnapshotRow] = []
        for snapshot in members:
            parent = data.lineage.parent(snapshot)
            diff = _diff_for(data, snapshot)
            rows.append(
                SnapshotRow(
                    href=snapshot_path(snapshot.slug),
                    label=snapshot.label,
                    name=snapshot.name,
                    created_at=snapshot.created_at,
                    sha256=snapshot.sha256,
                    records=snapshot.records,
                    passages=snapshot.passages,
                    parent=_snapshot_link(parent) if parent else None,
                    diff=Link(diff_path(diff.slug), "changes") if diff else None,
                    newest=snapshot is members[-1],
                    partial=snapshot.partial is not None,
                )
            )
        lineages.append((name, tuple(rows)))
    return SnapshotListPage(heading="Snapshots", lineages=tuple(lineages))


def snapshot_page(data: SiteData, snapshot: LoadedSnapshot) -> SnapshotPage:
    parent = data.lineage.parent(snapshot)
    children = data.lineage.children.get(snapshot.slug, ())
    diff = _diff_for(data, snapshot)
    sealer = (
        f"the public demo key {snapshot.seal_key} (a demo seal proves nothing)"
        if snapshot.seal == "demo"
        else f"key {snapshot.seal_key}"
    )
    integrity = (
        f"The file matches its manifest ({snapshot.manifest_name}), whose seal was verified "
        f"under {sealer} when this site was built."
    )
    ok = snapshot.seal == "sealed"
    totals = snapshot.list_totals
    lists = tuple(
        RecordList(key, title, explanation, records, totals.get(key, len(records)))
        for key, title, explanation, records in (
            (
                "retracted",
                "Retracted records",
                "The current version is flagged retracted; citing them gives the flag.",
                snapshot.retracted,
            ),
            (
                "expression_of_concern",
                "Expressions of concern",
                "The journal published an expression of concern about these records.",
                snapshot.expression_of_concern,
            ),
            (
                "withdrawn",
                "Withdrawn upstream",
                "Gone from the source; their earlier versions stay here for verification.",
                snapshot.withdrawn,
            ),
            (
                "multi_version",
                "Records with several versions",
                "Handles pinned to any of these versions still verify against this file.",
                snapshot.multi_version,
            ),
        )
    )
    facts = [
        Count("corpus", snapshot.name),
        Count("file", snapshot.label),
        Count("sha256", snapshot.sha256),
    ]
    for key in ("snapshot_id", "created_at", "tool_version", "schema_version", "spec_hash"):
        if snapshot.meta.get(key):
            facts.append(Count(key.replace("_", " "), snapshot.meta[key]))
    reports = tuple(
        Link("../" + report_path(r.slug), r.report.source)
        for r in data.reports
        if data.report_snapshots.get(r.slug) is snapshot
    )
    manifest = json.dumps(snapshot.manifest, indent=2, sort_keys=True, ensure_ascii=False)
    return SnapshotPage(
        heading=f"Snapshot {snapshot.label}",
        facts=tuple(facts),
        parent=_snapshot_link(parent, "../") if parent else None,
        children=tuple(_snapshot_link(c, "../") for c in children),
        diff=Link("../" + diff_path(diff.slug), f"changes since {diff.old.label}")
        if diff
        else None,
        integrity=integrity,
        integrity_ok=ok,
        partial=snapshot.partial,
        first_of_lineage=snapshot.parent_sha256 is None,
        counts=(
            Count("records", f"{snapshot.records:,}"),
            Count("record versions", f"{snapshot.record_versions:,}"),
            Count("passages", f"{snapshot.passages:,}"),
        ),
        sources=snapshot.sources,
        lists=lists,
        manifest_json=manifest,
        reports=reports,
        snapshot_id=snapshot.snapshot_id or snapshot.path.stem,
        downloads=_downloads(data, snapshot),
    )


def _downloads(data: SiteData, snapshot: LoadedSnapshot) -> tuple[Link, ...]:
    """Where to download the snapshot's files: its release in the archive, when there is one."""
    if data.archive is None:
        return ()
    urls = download_urls(data.archive, snapshot.snapshot_id or snapshot.path.stem)
    return tuple(
        Link(url, "the release" if name == "release" else name) for name, url in urls.items()
    )


def diff_page(diff: SnapshotDiff) -> DiffPage:
    return DiffPage(
        heading=f"Changes from {diff.old.label} to {diff.new.label}",
        old=_snapshot_link(diff.old, "../"),
        new=_snapshot_link(diff.new, "../"),
        summary=tuple(Count(lst.title, str(lst.total)) for lst in diff.lists),
        sections=tuple(
            DiffSection(
                lst.key,
                lst.title,
                tuple(
                    RecordItem(i.record_id, i.version, i.title, (i.note,) if i.note else ())
                    for i in lst.items
                ),
            )
            for lst in diff.lists
        ),
    )


# --- re-audit ----------------------------------------------------------------------------------


def reaudit_page(data: SiteData) -> ReauditPage:
    changed: list[ReauditEntry] = []
    unchanged: list[ReauditEntry] = []
    not_checked: list[ReauditEntry] = []
    for loaded in data.reports:
        outcome = data.reaudits.get(loaded.slug)
        report = loaded.report
        link = Link(report_path(loaded.slug), report.source)
        own = data.report_snapshots.get(loaded.slug)
        published = own.label if own else f"{report.snapshot.name} (file not present)"
        published_href = snapshot_path(own.slug) if own else None
        if outcome is None or outcome.rechecked is None:
            reason = outcome.reason if outcome and outcome.reason else "not re-checked"
            entry = ReauditEntry(
                f"r-{loaded.slug}",
                link,
                published,
                published_href,
                None,
                "",
                reason,
                report.verdict,
                None,
                (),
            )
            not_checked.append(entry)
            continue
        against = outcome.against
        rows = tuple(
            ChangeRow(
                href=f"{report_path(loaded.slug)}#{c.anchor}",
                where=f"sentence {c.sentence}, citation {c.number}",
                handle=c.handle,
                kinds=c.kinds,
                was=c.was,
                now=c.now,
                details=c.details,
            )
            for c in outcome.changes
        )
        n = len(rows)
        outcome_text = (
            f"{n} citation{'s' if n > 1 else ''} changed status."
            if n
            else "No citation changed status."
        )
        entry = ReauditEntry(
            anchor=f"r-{loaded.slug}",
            report=link,
            published_against=published,
            published_href=published_href,
            checked_against=_snapshot_link(against) if against else None,
            method=outcome.method,
            outcome=outcome_text,
            verdict_was=report.verdict,
            verdict_now=outcome.rechecked.verdict,
            changes=rows,
        )
        (changed if rows else unchanged).append(entry)
    total_changes = sum(len(e.changes) for e in changed)
    return ReauditPage(
        heading="Re-audit: what changed since publication",
        description=(
            "Every published report is audited again against the newest snapshot of its "
            "lineage. Listed here: citations that became retracted, got an expression of "
            "concern or a new version, or whose record or passage was withdrawn since the "
            "report was published."
        ),
        totals=(
            Count("reports re-checked", str(len(changed) + len(unchanged))),
            Count("reports with changes", str(len(changed))),
            Count("citations changed", str(total_changes)),
            Count("reports not re-checked", str(len(not_checked))),
        ),
        changed=tuple(changed),
        unchanged=tuple(unchanged),
        not_checked=tuple(not_checked),
    )
