"""CLI: ``citeseal reaudit REPORT.json... --snapshot S`` — published reports audited again.

What a reader of the published site does to check a report themselves: download the snapshot
from the archive (its release links sit on the site's snapshot page), then re-audit the
report's JSON (linked from its page) against it. The report's citations are rebuilt from the
report and judged afresh (:func:`audit.engine.reaudit`); what changed since publication is
listed. Check codes are verified again only with the key that made them (the demo key, or this
installation's when it is that key); without it they are taken as published, and the output
says so — the corpus side (passages, quotes, retractions, versions) is always checked again.
The snapshot is checked against its manifest first; its seal only where the key is here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from audit.errors import InputError
from audit.terminal import one_line
from pipeline.cli.audit_cmd import Format, render
from pipeline.cli.common import installation_keyring, note_unchecked, seal_policy, trusted_snapshot
from pipeline.cli.options import DemoKeyOpt, SnapshotOpt
from pipeline.settings import Settings, source_date_epoch

MAX_REPORT_BYTES = 20 * 1024 * 1024


def reaudit_command(
    reports: Annotated[
        list[Path],
        typer.Argument(help="Report JSON files (as `citeseal audit --format json` writes them)."),
    ],
    snapshot: SnapshotOpt,
    fmt: Annotated[
        Format | None,
        typer.Option(
            "--format",
            "-f",
            help="Also print each re-audited report in this format.",
            case_sensitive=False,
        ),
    ] = None,
    demo_key: DemoKeyOpt = False,
) -> None:
    """Audit published reports again against a snapshot and list the citations whose status
    changed since publication (exit 1 when a re-audited report fails)."""
    from pipeline.site.loaders import parse_report
    from pipeline.site.reaudit_run import reaudit_one

    settings = Settings.from_env()
    keyring = installation_keyring(settings)
    policy = seal_policy(settings, demo_key, required=False, keyring=keyring)
    trusted = trusted_snapshot(snapshot, settings, policy)
    note_unchecked(trusted)
    published = [parse_report(path, _read(path), name=path.name) for path in reports]
    failed = False
    with trusted.corpus() as corpus:
        for path, report in zip(reports, published, strict=True):
            done = reaudit_one(report, corpus, keyring, now=source_date_epoch(os.environ))
            again = done.rechecked
            failed |= again.verdict == "fail"
            typer.echo(
                f"{one_line(path.name)}: {report.verdict} → {again.verdict} against "
                f"{trusted.manifest.snapshot_id}; {done.method}"
            )
            for change in done.changes:
                typer.echo(f"  {change.line()}")
            if not done.changes:
                typer.echo("  no citation changed status since publication")
            if fmt is not None:
                typer.echo(render(again, fmt), nl=False)
    if failed:
        raise typer.Exit(1)


def _read(path: Path) -> bytes:
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_REPORT_BYTES + 1)
    except OSError as error:
        raise InputError(f"{path}: cannot read: {error.strerror or error}") from None
    if len(data) > MAX_REPORT_BYTES:
        raise InputError(f"{path}: a report is at most {MAX_REPORT_BYTES:,} bytes")
    return data  # parse_report names what is wrong with it


def register(app: typer.Typer) -> None:
    """Attach ``citeseal reaudit`` to the root app."""
    app.command("reaudit")(reaudit_command)
