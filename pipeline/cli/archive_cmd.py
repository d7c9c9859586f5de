"""CLI: ``citeseal snapshot push | pull | prune`` — sealed snapshots in a durable archive.

An archive is a folder (the default kind) or GitHub Releases (``github:OWNER/REPO``); see
:mod:`pipeline.archive`. Snapshots are checked against their manifests and seals on the way
out and on the way in, so a corrupted or forged snapshot never enters a lineage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from audit.errors import InputError
from pipeline.archive import open_archive, snapshot_id_parts
from pipeline.archive.transfer import choose, cited_snapshots, plan_prune, pull, push
from pipeline.cli.common import seal_policy
from pipeline.cli.options import DemoKeyOpt
from pipeline.settings import Settings
from pipeline.snapshot.locate import resolve_snapshot

TargetHelp = "github:OWNER/REPO (GitHub Releases; token from GITHUB_TOKEN) or a folder."


def push_command(
    snapshot: Annotated[
        Path, typer.Argument(help="Snapshot file (.duckdb), or a corpus folder (its newest).")
    ],
    to: Annotated[str, typer.Option("--to", help=f"The archive: {TargetHelp}")],
    demo_key: DemoKeyOpt = False,
) -> None:
    """Check a snapshot against its manifest and seal, then store it (with its manifest and a
    sha256 checksum file) in an archive; archived snapshots never change."""
    settings = Settings.from_env()
    archive = open_archive(to, settings)
    done = push(resolve_snapshot(snapshot), archive, seal_policy(settings, demo_key))
    typer.echo(f"{done.status}: {done.snapshot_id} → {done.location}")


def pull_command(
    corpus: Annotated[str, typer.Argument(help="The corpus name, e.g. demo.")],
    source: Annotated[str, typer.Option("--from", help=f"The archive: {TargetHelp}")],
    latest: Annotated[
        bool, typer.Option("--latest", help="Only the newest snapshot (the default).")
    ] = False,
    every: Annotated[bool, typer.Option("--all", help="Every snapshot the archive holds.")] = False,
    snapshot_id: Annotated[
        str | None, typer.Option("--id", help="One snapshot, e.g. demo-20250602T100000Z.")
    ] = None,
    into: Annotated[
        Path, typer.Option("--into", help="Folder of corpus folders to pull into.")
    ] = Path("snapshots"),
    demo_key: DemoKeyOpt = False,
) -> None:
    """Download snapshots of CORPUS, each checked against its checksum, manifest and seal before
    it lands in INTO/CORPUS; fails (and writes nothing) when the archive holds none."""
    if sum((latest, every, snapshot_id is not None)) > 1:
        raise InputError("give at most one of --latest, --all and --id")
    if snapshot_id is not None and snapshot_id_parts(snapshot_id)[0] != corpus:
        raise InputError(f"{snapshot_id} is not a snapshot of corpus {corpus!r}")
    settings = Settings.from_env()
    archive = open_archive(source, settings)
    policy = seal_policy(settings, demo_key)
    which = "all" if every else snapshot_id or "latest"
    for item in choose(archive, corpus, which):
        done = pull(item, archive, into / corpus, policy)
        typer.echo(f"{done.status}: {done.snapshot_id} → {done.path}")


def prune_command(
    corpus: Annotated[str, typer.Argument(help="The corpus name, e.g. demo.")],
    source: Annotated[str, typer.Option("--from", help=f"The archive: {TargetHelp}")],
    keep: Annotated[
        int, typer.Option("--keep", min=1, help="How many of the newest snapshots to keep.")
    ] = 4,
    reports: Annotated[
        Path | None,
        typer.Option(
            "--reports",
            help="Published reports (JSON, searched recursively): every snapshot one was "
            "audited against is kept.",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be deleted; delete nothing.")
    ] = False,
) -> None:
    """Delete archived snapshots of CORPUS except the KEEP newest and every snapshot a
    published report was audited against."""
    archive = open_archive(source, Settings.from_env())
    plan = plan_prune(archive.list(corpus), keep, cited_snapshots(reports))
    for item in plan.keep:
        typer.echo(f"keep    {item.snapshot_id}  ({plan.reasons[item.snapshot_id]})")
    for item in plan.drop:
        if not dry_run:
            archive.delete(item)
        typer.echo(f"{'would delete' if dry_run else 'deleted'} {item.snapshot_id}")


def attach(app: typer.Typer) -> None:
    """Add ``push``, ``pull`` and ``prune`` to ``citeseal snapshot``."""
    app.command("push")(push_command)
    app.command("pull")(pull_command)
    app.command("prune")(prune_command)
