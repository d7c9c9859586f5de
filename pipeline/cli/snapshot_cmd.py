"""CLI: ``citeseal snapshot build | info | verify | diff | list | export | rebuild | backfill``."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from audit.terminal import one_line
from pipeline.cli.options import JsonOpt
from pipeline.errors import SnapshotError
from pipeline.harvest import Progress
from pipeline.settings import Settings
from pipeline.snapshot.backfill import BackfillResult, backfill_snapshot
from pipeline.snapshot.build import BuildResult, ParentArg, build_snapshot
from pipeline.snapshot.diff import SnapshotDiff, diff_snapshots
from pipeline.snapshot.export import export_parquet
from pipeline.snapshot.locate import corpus_folders, resolve_snapshot, snapshots_in
from pipeline.snapshot.manifest import read_manifest
from pipeline.snapshot.progress import LogProgress, RichProgress
from pipeline.snapshot.rebuild import rebuild_snapshot
from pipeline.snapshot.verify import partial_summary, snapshot_info, verify_snapshot

snapshot_app = typer.Typer(
    name="snapshot",
    help="Build, inspect, verify, compare and export versioned DuckDB snapshots.",
    no_args_is_help=True,
)

PathArg = Annotated[
    Path, typer.Argument(help="Snapshot file (.duckdb), or a corpus folder (its newest).")
]
AllowPartialOpt = Annotated[
    bool,
    typer.Option(
        "--allow-partial",
        help="Seal a snapshot marked partial even when requests failed (the records they "
        "concern keep their parent state); without it such a build seals nothing (exit 3).",
    ),
]


@contextlib.contextmanager
def _progress() -> Iterator[Progress]:
    if sys.stderr.isatty():
        with RichProgress() as bars:
            yield bars
    else:
        yield LogProgress()


def _echo_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False))


@snapshot_app.command("build")
def build_command(
    spec: Annotated[Path, typer.Argument(help="Corpus spec, e.g. snapshots/demo.toml.")],
    parent: Annotated[
        str | None,
        typer.Option(
            "--parent",
            help="Parent snapshot file, or 'latest' (the default: the newest snapshot of the "
            "corpus; none yet → no parent).",
        ),
    ] = None,
    new_lineage: Annotated[
        bool,
        typer.Option(
            "--new-lineage",
            help="Start a new history without a parent, although the corpus has snapshots.",
        ),
    ] = False,
    replay: Annotated[
        list[Path] | None,
        typer.Option(
            "--replay",
            help="Folder of recorded exchanges instead of the network (repeatable; first "
            "match wins). Replaces the spec's own replay list.",
        ),
    ] = None,
    record: Annotated[
        Path | None, typer.Option("--record", help="Also record every exchange to this folder.")
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Abort on the first failed request.")
    ] = False,
    allow_partial: AllowPartialOpt = False,
    live: Annotated[
        bool, typer.Option("--live", help="Ignore the spec's replay list: ask the real APIs.")
    ] = False,
    no_resume: Annotated[
        bool,
        typer.Option("--no-resume", help="Do not reuse responses of an interrupted build."),
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """Harvest a corpus spec into a new immutable snapshot (plus its manifest).

    Exit 3 when a request failed (nothing sealed) unless --allow-partial."""
    parent_arg: ParentArg = None
    if parent is not None:
        parent_arg = "latest" if parent == "latest" else Path(parent)
    with _progress() as progress:
        result = build_snapshot(
            spec,
            parent=parent_arg,
            new_lineage=new_lineage,
            replay=replay or (),
            record=record,
            strict=strict,
            allow_partial=allow_partial,
            live=live,
            resume=not no_resume,
            settings=Settings.from_env(),
            progress=progress,
        )
    _print_build(result, json_out)


def _print_build(result: BuildResult, json_out: bool) -> None:
    m = result.manifest
    if json_out:
        _echo_json(
            {
                "path": str(result.path),
                "manifest_path": str(result.manifest_path),
                "resumed_requests": result.resumed_requests,
                "warnings": list(result.warnings),
                "manifest": m.model_dump(mode="json"),
            }
        )
        return
    new_versions = sum(s.new_versions for s in m.sources.values())
    typer.echo(f"built {result.path}{'  (PARTIAL)' if m.partial else ''}")
    typer.echo(f"  parent    {m.parent.path if m.parent else '(none)'}")
    typer.echo(
        f"  lineage   {m.records} records, {m.versions} versions, {m.passages} passages; "
        f"{new_versions} new versions, {m.withdrawn} newly withdrawn"
    )
    if m.partial:
        typer.echo(f"  partial   {partial_summary(m)}")
    for source, s in m.sources.items():
        if s.status == "not_harvested":
            continue
        typer.echo(
            f"  {source:<15} {s.status:<8} {s.records:>6} records {s.passages:>7} passages"
            f"{f'  {s.failed_requests} failed requests' if s.failed_requests else ''}"
        )
    if result.resumed_requests:
        n = result.resumed_requests
        typer.echo(f"  resumed   {n} responses kept by an earlier build that did not seal")
    for failed in m.failed_requests:
        typer.echo(f"warning: {failed.source}: {failed.step}: {one_line(failed.error)}", err=True)
    for source, s in m.sources.items():
        for reason, count in s.refused.items():
            typer.echo(
                f"warning: {source}: refused {count} record(s) that cannot be cited: "
                f"{one_line(reason)}",
                err=True,
            )
    for warning in result.warnings:
        typer.echo(f"warning: {one_line(warning)}", err=True)


@snapshot_app.command("info")
def info_command(path: PathArg, json_out: JsonOpt = False) -> None:
    """What a snapshot holds: corpus, parent, harvest status and counts per source."""
    info = snapshot_info(resolve_snapshot(path))
    if json_out:
        _echo_json(info)
        return
    meta = info["meta"]
    typer.echo(f"{info['path']}")
    typer.echo(f"  corpus    {meta.get('name')}: {one_line(meta.get('description') or '')}")
    typer.echo(f"  snapshot  {meta.get('snapshot_id')} (created {meta.get('created_at')})")
    typer.echo(f"  parent    {meta.get('parent_snapshot_id') or '(none)'}")
    typer.echo(
        f"  versions  tool {meta.get('tool_version')}, schema {meta.get('schema_version')}, "
        f"segmentation {meta.get('segmentation_version')}; mode {meta.get('mode')}"
    )
    typer.echo(f"  spec hash {meta.get('spec_hash')}")
    typer.echo(
        f"  harvest   {'PARTIAL: ' + info['partial_detail'] if info['partial'] else 'complete'}"
    )
    typer.echo("  source          harvest   records versions passages withdrawn")
    held = info["lineage"]
    for row in info["harvest"]:
        h = held.get(row["source"], {})
        typer.echo(
            f"  {row['source']:<15} {row['status']:<9} {h.get('records', 0):>7} "
            f"{h.get('versions', 0):>8} {h.get('passages', 0):>8} {h.get('withdrawn', 0):>9}"
        )
    current = info["current"]
    typer.echo(
        f"  flags     {current['retracted']} retracted, {current['expression_of_concern']} "
        f"with an expression of concern, {current['preprint']} preprints (current versions)"
    )


@snapshot_app.command("verify")
def verify_command(path: PathArg, json_out: JsonOpt = False) -> None:
    """Check the file against its manifest (sha256) and its schema; exit 1 on tampering."""
    report = verify_snapshot(resolve_snapshot(path))
    if json_out:
        _echo_json(
            {
                "path": str(report.path),
                "ok": True,
                "checks": report.checks,
                "parent": report.parent,
            }
        )
        return
    typer.echo(f"ok {report.path}")
    for check in report.checks:
        typer.echo(f"  {check}")
    typer.echo(f"  parent: {report.parent}")


@snapshot_app.command("diff")
def diff_command(
    old: Annotated[Path, typer.Argument(help="The older snapshot (file or corpus folder).")],
    new: Annotated[Path, typer.Argument(help="The newer snapshot (file or corpus folder).")],
    json_out: JsonOpt = False,
) -> None:
    """New, changed and withdrawn records, and new retractions/expressions of concern."""
    result = diff_snapshots(resolve_snapshot(old), resolve_snapshot(new))
    if json_out:
        _echo_json(result.to_json())
        return
    _print_diff(result)


def _print_diff(d: SnapshotDiff) -> None:
    typer.echo(f"{d.old} → {d.new}")
    if d.empty:
        typer.echo("  no differences")
        return
    sections = (
        ("new", d.new_records, lambda c: f"{c.record_id} @{c.new_version}"),
        ("changed", d.changed, lambda c: f"{c.record_id} @{c.old_version} → @{c.new_version}"),
        ("withdrawn", d.withdrawn, lambda c: f"{c.record_id} (last version @{c.new_version})"),
        ("reinstated", d.reinstated, lambda c: f"{c.record_id} @{c.new_version}"),
    )
    for label, changes, fmt in sections:
        if changes:
            typer.echo(f"  {label} ({len(changes)})")
        for change in changes:
            title = f"  {one_line(change.title or '')[:70]}" if change.title else ""
            typer.echo(f"    {fmt(change)}{title}")
    if d.new_flags:
        typer.echo(f"  new retractions / expressions of concern ({len(d.new_flags)})")
    for flag in d.new_flags:
        notices = f" (notice {one_line(', '.join(flag.notices))})" if flag.notices else ""
        typer.echo(f"    {flag.record_id} {flag.flag}{notices}")


@snapshot_app.command("list")
def list_command(
    root: Annotated[
        Path, typer.Argument(help="Folder of corpus folders, or one corpus folder.")
    ] = Path("snapshots"),
    json_out: JsonOpt = False,
) -> None:
    """Every snapshot under ROOT, oldest first, with its parent and counts."""
    folders = [root] if snapshots_in(root) else corpus_folders(root)
    rows: list[dict[str, Any]] = []
    for folder in folders:
        for snap in snapshots_in(folder):
            row: dict[str, Any] = {"path": str(snap.path), "corpus": snap.name, "stamp": snap.stamp}
            try:
                m = read_manifest(snap.path)
            except SnapshotError as error:
                row["error"] = error.message
            else:
                row.update(
                    records=m.records,
                    versions=m.versions,
                    passages=m.passages,
                    parent=m.parent.snapshot_id if m.parent else None,
                    size=m.size,
                    partial=m.partial,
                    failed_requests=len(m.failed_requests),
                )
            rows.append(row)
    if json_out:
        _echo_json(rows)
        return
    if not rows:
        typer.echo(f"no snapshots under {root}")
        return
    for row in rows:
        if "error" in row:
            typer.echo(f"{one_line(row['path'])}  ({one_line(row['error'])})")
            continue
        parent = f"  parent {row['parent']}" if row["parent"] else ""
        n = row["failed_requests"]
        partial = f"  PARTIAL ({n} failed request{'s' if n != 1 else ''})" if row["partial"] else ""
        typer.echo(
            f"{row['path']}  {row['records']} records, {row['versions']} versions, "
            f"{row['passages']} passages, {row['size'] / 1e6:.1f} MB{parent}{partial}"
        )


@snapshot_app.command("export")
def export_command(
    path: PathArg,
    parquet: Annotated[Path, typer.Option("--parquet", help="Folder to write (absent or empty).")],
    responses: Annotated[
        bool, typer.Option("--responses", help="Also export the raw responses (large).")
    ] = False,
) -> None:
    """Write every table as Parquet, Hive-partitioned by table and source."""
    snapshot = resolve_snapshot(path)
    for table in export_parquet(snapshot, parquet, responses=responses):
        typer.echo(f"{table.table:<18} {table.rows:>8} rows  {table.path}")


@snapshot_app.command("rebuild")
def rebuild_command(
    path: PathArg, allow_partial: AllowPartialOpt = False, json_out: JsonOpt = False
) -> None:
    """Re-parse the stored responses with today's parsers into a new snapshot (offline)."""
    with _progress() as progress:
        result = rebuild_snapshot(
            resolve_snapshot(path),
            allow_partial=allow_partial,
            settings=Settings.from_env(),
            progress=progress,
        )
    _print_build(result, json_out)


@snapshot_app.command("backfill")
def backfill_command(
    path: PathArg,
    handles: Annotated[
        list[str],
        typer.Argument(
            help="nct: or setid: handles or locators that pin a version (@VERSION).",
            show_default=False,
        ),
    ],
    replay: Annotated[
        list[Path] | None,
        typer.Option(
            "--replay",
            help="Folder of recorded history exchanges instead of the network (repeatable).",
        ),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Fetch pinned trial/label versions the snapshot lacks from the registry history into a
    new child snapshot (needs CITESEAL_HISTORY_BACKFILL=1)."""
    result = backfill_snapshot(
        resolve_snapshot(path), handles, replay=replay or (), settings=Settings.from_env()
    )
    _print_backfill(result, json_out)


def _print_backfill(result: BackfillResult, json_out: bool) -> None:
    build = result.build
    if json_out:
        _echo_json(
            {
                "items": [
                    {
                        "target": i.target,
                        "record_id": i.record_id,
                        "version": i.version,
                        "status": i.status,
                        "detail": i.detail,
                    }
                    for i in result.items
                ],
                "backfilled": result.backfilled,
                "path": str(build.path) if build else None,
                "manifest": build.manifest.model_dump(mode="json") if build else None,
            }
        )
        return
    for item in result.items:
        typer.echo(one_line(item.line))
    if build is None:
        typer.echo("nothing backfilled: no new snapshot written")
        return
    m = build.manifest
    plural = "s" if result.backfilled != 1 else ""
    typer.echo(f"wrote {build.path}")
    typer.echo(f"  parent    {m.parent.path if m.parent else '(none)'}")
    typer.echo(
        f"  lineage   {m.records} records, {m.versions} versions, {m.passages} passages; "
        f"{result.backfilled} version{plural} backfilled"
    )


def register(app: typer.Typer) -> None:
    """Attach ``citeseal snapshot …`` to the root app."""
    app.add_typer(snapshot_app)
