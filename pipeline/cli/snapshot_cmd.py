"""CLI: ``citeseal snapshot build | info | verify | seal | diff | list | export | rebuild |
backfill`` (and ``push | pull | prune``: :mod:`pipeline.cli.archive_cmd`).

Every command that reads a snapshot checks it against its manifest, and the manifest against
its seal, first (:mod:`pipeline.snapshot.trust`); a snapshot that fails is refused (exit 1).
Commands that write a snapshot seal its manifest with the installation's key (created on first
use, like ``handle mint``), or with the public demo key under ``--demo-key``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from audit.terminal import one_line
from pipeline.cli import archive_cmd
from pipeline.cli.common import (
    digest_cache,
    note_unchecked,
    seal_policy,
    sealing_keyring,
    trusted_snapshot,
)
from pipeline.cli.options import DemoKeyOpt, JsonOpt
from pipeline.errors import SnapshotError
from pipeline.harvest import Progress
from pipeline.settings import HARVEST_JOBS, HARVEST_JOBS_LIMIT, Settings
from pipeline.snapshot.backfill import BackfillResult, backfill_snapshot
from pipeline.snapshot.build import BuildResult, ParentArg, build_snapshot
from pipeline.snapshot.diff import SnapshotDiff, diff_snapshots
from pipeline.snapshot.export import export_parquet
from pipeline.snapshot.locate import corpus_folders, resolve_snapshot, snapshots_in
from pipeline.snapshot.manifest import sealed_with, write_manifest
from pipeline.snapshot.progress import LogProgress, RichProgress
from pipeline.snapshot.rebuild import rebuild_snapshot
from pipeline.snapshot.summary import summary_markdown
from pipeline.snapshot.trust import SealPolicy, refuse, run_checks
from pipeline.snapshot.verify import check_snapshot, partial_summary, snapshot_info

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
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            min=1,
            max=HARVEST_JOBS_LIMIT,
            help="Threads the harvest uses: each chunk's enrichment runs beside the next "
            "chunks' fetch, each host at its own pace (default CITESEAL_HARVEST_JOBS, else "
            f"{HARVEST_JOBS}; 1: one step at a time, for debugging).",
        ),
    ] = None,
    demo_key: DemoKeyOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Harvest a corpus spec into a new immutable snapshot (plus its sealed manifest).

    Exit 3 when a request failed (nothing sealed) unless --allow-partial."""
    parent_arg: ParentArg = None
    if parent is not None:
        parent_arg = "latest" if parent == "latest" else Path(parent)
    settings = Settings.from_env()
    if jobs is not None:
        settings = dataclasses.replace(settings, harvest_jobs=jobs)
    keyring = sealing_keyring(settings, demo_key)
    with _progress() as progress:
        result = build_snapshot(
            spec,
            keyring=keyring,
            parent=parent_arg,
            new_lineage=new_lineage,
            replay=replay or (),
            record=record,
            strict=strict,
            allow_partial=allow_partial,
            live=live,
            resume=not no_resume,
            settings=settings,
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
def info_command(path: PathArg, demo_key: DemoKeyOpt = False, json_out: JsonOpt = False) -> None:
    """What a snapshot holds: corpus, parent, harvest status and counts per source."""
    settings = Settings.from_env()
    trusted = trusted_snapshot(path, settings, seal_policy(settings, demo_key, required=False))
    info = snapshot_info(trusted.path)
    info["seal"] = {"status": trusted.seal, "key": trusted.seal_key}
    if json_out:
        _echo_json(info)
        return
    note_unchecked(trusted)
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
    typer.echo(f"  seal      {_seal_line(trusted.seal, trusted.seal_key)}")
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
def verify_command(path: PathArg, demo_key: DemoKeyOpt = False, json_out: JsonOpt = False) -> None:
    """Check the file against its manifest (sha256), the manifest against its seal (the key),
    and the file's contents; print every check; exit 1 when any fails."""
    settings = Settings.from_env()
    snapshot = resolve_snapshot(path)
    report = check_snapshot(snapshot, seal_policy(settings, demo_key), digest_cache(settings))
    if json_out:
        _echo_json(
            {
                "path": str(report.path),
                "ok": report.ok,
                "checks": [
                    {"check": c.name, "ok": c.ok, "detail": c.detail, "advice": c.advice}
                    for c in report.checks
                ],
                "parent": report.parent,
            }
        )
    else:
        typer.echo(f"{'ok' if report.ok else 'FAILED'} {report.path}")
        for check in report.checks:
            mark = {True: "ok", False: "FAILED", None: "-"}[check.ok]
            typer.echo(f"  {mark:<7} {check.name:<13} {one_line(check.detail)}")
        typer.echo(f"  parent: {report.parent}")
    refuse(snapshot, report.checks)  # the first failure, as a one-line error (exit 1)


def _seal_line(status: str, key: str | None) -> str:
    return {
        "sealed": f"sealed with key {key} (verified)",
        "demo": f"sealed with the public demo key {key} (proves nothing)",
        "unchecked": f"sealed with key {key}; not checked (no key here)",
    }[status]


@snapshot_app.command("seal")
def seal_command(path: PathArg, demo_key: DemoKeyOpt = False) -> None:
    """Seal the manifest of a snapshot written before manifests were sealed (after checking the
    file against it and its contents), with the installation's key."""
    settings = Settings.from_env()
    snapshot = resolve_snapshot(path)
    keyring = sealing_keyring(settings, demo_key)
    report = check_snapshot(snapshot, SealPolicy.of(keyring), digest_cache(settings))
    if report.ok:
        typer.echo(f"already sealed: {snapshot} ({_seal_line('sealed', keyring.fingerprint)})")
        return
    unsealed = report.manifest is not None and report.manifest.seal is None
    others = [c for c in report.failed if c.name != "seal"]
    if not unsealed or others:
        failed = (others or report.failed)[0]
        raise SnapshotError(
            f"refusing to seal {snapshot}: its {failed.name} check fails: {failed.detail}",
            advice="only an unsealed manifest that matches its file is sealed",
        )
    assert report.manifest is not None
    write_manifest(snapshot, sealed_with(report.manifest, keyring))
    typer.echo(f"sealed {snapshot} with key {keyring.fingerprint}")


@snapshot_app.command("summary")
def summary_command(path: PathArg, demo_key: DemoKeyOpt = False) -> None:
    """Markdown for a CI job summary: counts, each source's harvest, failed requests, and what
    changed since the parent (when it is here)."""
    settings = Settings.from_env()
    policy = seal_policy(settings, demo_key, required=False)
    trusted = trusted_snapshot(path, settings, policy)
    note_unchecked(trusted)
    diff = None
    parent = trusted.manifest.parent
    if parent is not None and (trusted.path.parent / parent.path).is_file():
        older = trusted_snapshot(trusted.path.parent / parent.path, settings, policy)
        diff = diff_snapshots(older.path, trusted.path)
    seal = _seal_line(trusted.seal, trusted.seal_key)
    typer.echo(summary_markdown(trusted.manifest, seal, diff), nl=False)


@snapshot_app.command("diff")
def diff_command(
    old: Annotated[Path, typer.Argument(help="The older snapshot (file or corpus folder).")],
    new: Annotated[Path, typer.Argument(help="The newer snapshot (file or corpus folder).")],
    demo_key: DemoKeyOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """New, changed and withdrawn records, and new retractions/expressions of concern."""
    settings = Settings.from_env()
    policy = seal_policy(settings, demo_key, required=False)
    before, after = (trusted_snapshot(p, settings, policy) for p in (old, new))
    for trusted in (before, after):
        note_unchecked(trusted)
    result = diff_snapshots(before.path, after.path)
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
    demo_key: DemoKeyOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Every snapshot under ROOT, oldest first, with its parent, counts and whether it checks
    out against its manifest and seal (exit 1 when one does not)."""
    settings = Settings.from_env()
    policy, digests = seal_policy(settings, demo_key, required=False), digest_cache(settings)
    folders = [root] if snapshots_in(root) else corpus_folders(root)
    rows: list[dict[str, Any]] = []
    for folder in folders:
        for snap in snapshots_in(folder):
            row: dict[str, Any] = {"path": str(snap.path), "corpus": snap.name, "stamp": snap.stamp}
            checks, m = run_checks(snap.path, policy, digests)
            failed = next((c for c in checks if c.ok is False), None)
            seal = next(c for c in checks if c.name == "seal")
            row["trust"] = (
                f"{failed.name} check failed: {failed.detail}"
                if failed
                else "seal not checked (no key here)"
                if seal.ok is None
                else "ok"
            )
            row["ok"] = failed is None
            if m is not None:
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
    elif not rows:
        typer.echo(f"no snapshots under {root}")
    for row in [] if json_out else rows:
        if "records" not in row:
            typer.echo(f"{one_line(row['path'])}  REFUSED: {one_line(row['trust'])}")
            continue
        parent = f"  parent {row['parent']}" if row["parent"] else ""
        n = row["failed_requests"]
        partial = f"  PARTIAL ({n} failed request{'s' if n != 1 else ''})" if row["partial"] else ""
        mark = "REFUSED: " if not row["ok"] else ""
        trust = "" if row["trust"] == "ok" else f"  {mark}{one_line(row['trust'])}"
        typer.echo(
            f"{row['path']}  {row['records']} records, {row['versions']} versions, "
            f"{row['passages']} passages, {row['size'] / 1e6:.1f} MB{parent}{partial}{trust}"
        )
    if any(not row["ok"] for row in rows):
        raise typer.Exit(1)


@snapshot_app.command("export")
def export_command(
    path: PathArg,
    parquet: Annotated[Path, typer.Option("--parquet", help="Folder to write (absent or empty).")],
    responses: Annotated[
        bool, typer.Option("--responses", help="Also export the raw responses (large).")
    ] = False,
    demo_key: DemoKeyOpt = False,
) -> None:
    """Write every table as Parquet, Hive-partitioned by table and source."""
    settings = Settings.from_env()
    trusted = trusted_snapshot(path, settings, seal_policy(settings, demo_key, required=False))
    note_unchecked(trusted)
    for table in export_parquet(trusted.path, parquet, responses=responses):
        typer.echo(f"{table.table:<18} {table.rows:>8} rows  {table.path}")


@snapshot_app.command("rebuild")
def rebuild_command(
    path: PathArg,
    allow_partial: AllowPartialOpt = False,
    demo_key: DemoKeyOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Re-parse the stored responses with today's parsers into a new snapshot (offline)."""
    settings = Settings.from_env()
    keyring = sealing_keyring(settings, demo_key)
    with _progress() as progress:
        result = rebuild_snapshot(
            resolve_snapshot(path),
            keyring=keyring,
            allow_partial=allow_partial,
            settings=settings,
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
    demo_key: DemoKeyOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Fetch pinned trial/label versions the snapshot lacks from the registry history into a
    new child snapshot (needs CITESEAL_HISTORY_BACKFILL=1)."""
    settings = Settings.from_env()
    keyring = sealing_keyring(settings, demo_key)
    result = backfill_snapshot(
        resolve_snapshot(path), handles, keyring=keyring, replay=replay or (), settings=settings
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
    """Attach ``citeseal snapshot …`` (with the archive commands) to the root app."""
    archive_cmd.attach(snapshot_app)
    app.add_typer(snapshot_app)
