"""``snapshot summary``: one snapshot in Markdown, for a CI job summary or release notes.

What a scheduled build must leave in its log: the lineage's counts, each source's harvest,
every failed request, and what changed since the parent (new, changed, withdrawn and
reinstated records, new retractions and expressions of concern). Pure: the manifest and the
diff in, Markdown out; every untrusted text (titles, error messages) is escaped.
"""

from __future__ import annotations

from audit.render_text import md_code, md_text
from pipeline.snapshot.diff import RecordChange, SnapshotDiff
from pipeline.snapshot.manifest import Manifest

LISTED = 20  # at most this many records per list; the rest are counted


def summary_markdown(manifest: Manifest, seal: str, diff: SnapshotDiff | None) -> str:
    """The summary of the snapshot ``manifest`` describes; ``seal`` says how it checked out;
    ``diff`` is against its parent (None: no parent here)."""
    m = manifest
    new_versions = sum(s.new_versions for s in m.sources.values())
    parent = md_code(m.parent.snapshot_id or m.parent.path) if m.parent else "none (a new lineage)"
    lines = [
        f"## Snapshot {md_code(m.snapshot_id)}",
        "",
        "| | |",
        "| --- | --- |",
        f"| corpus | {md_code(m.name)} |",
        f"| parent | {parent} |",
        f"| lineage | {m.records:,} records, {m.versions:,} versions, {m.passages:,} passages |",
        f"| this build | {new_versions:,} new versions, {m.withdrawn:,} newly withdrawn |",
        f"| file | {md_code(m.file)}, {m.size / 1e6:,.1f} MB, sha256 {md_code(m.sha256)} |",
        f"| seal | {md_text(seal)} |",
        "",
        "| source | harvest | records | passages | new versions | failed requests |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for source, s in sorted(m.sources.items()):
        if s.status == "not_harvested":
            continue
        lines.append(
            f"| {source} | {s.status} | {s.records:,} | {s.passages:,} | {s.new_versions:,} "
            f"| {s.failed_requests:,} |"
        )
    lines += ["", f"### Failed requests ({len(m.failed_requests)})", ""]
    if not m.failed_requests:
        lines.append("None.")
    for failed in m.failed_requests[:LISTED]:
        lines.append(f"- {failed.source}: {md_text(failed.step)}: {md_text(failed.error)}")
    if len(m.failed_requests) > LISTED:
        lines.append(f"- … and {len(m.failed_requests) - LISTED:,} more (see the manifest)")
    lines += ["", *_changes(diff)]
    return "\n".join(lines) + "\n"


def _changes(diff: SnapshotDiff | None) -> list[str]:
    if diff is None:
        return ["### Changes", "", "No parent snapshot here to compare with."]
    lines = [f"### Changes since {md_code(diff.old)}", ""]
    if diff.empty:
        return [*lines, "No differences."]
    for label, changes in (
        ("new", diff.new_records),
        ("changed", diff.changed),
        ("withdrawn", diff.withdrawn),
        ("reinstated", diff.reinstated),
    ):
        if changes:
            lines.append(f"- **{label}** ({len(changes):,}): {_records(changes)}")
    if diff.new_flags:
        lines += ["", f"**New retractions and expressions of concern ({len(diff.new_flags)})**", ""]
    for flag in diff.new_flags[:LISTED]:
        notices = f" (notice {', '.join(md_code(n) for n in flag.notices)})" if flag.notices else ""
        title = f" — {md_text(flag.title)}" if flag.title else ""
        lines.append(f"- {md_code(flag.record_id)} {flag.flag.replace('_', ' ')}{notices}{title}")
    if len(diff.new_flags) > LISTED:
        lines.append(f"- … and {len(diff.new_flags) - LISTED:,} more")
    return lines


def _records(changes: list[RecordChange]) -> str:
    shown = ", ".join(md_code(c.record_id) for c in changes[:LISTED])
    more = len(changes) - LISTED
    return shown + (f" and {more:,} more" if more > 0 else "")
