"""CLI: ``citeseal site build`` — render the static audit site."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from audit.errors import InputError
from audit.terminal import one_line
from pipeline.cli.common import digest_cache, installation_keyring, seal_policy
from pipeline.cli.options import DemoKeyOpt
from pipeline.settings import Settings


class Publish(StrEnum):
    """``--publish``: the modes of :mod:`audit.publish`."""

    POLICY = "policy"
    FULL = "full"
    EXCERPT = "excerpt"


site_app = typer.Typer(
    name="site",
    help="The static audit site (index, report pages, snapshots, re-audit).",
    no_args_is_help=True,
)


@site_app.command("build")
def build(
    reports: Annotated[
        Path, typer.Option("--reports", help="Folder of report JSON files (searched recursively).")
    ] = Path("site/reports"),
    snapshots: Annotated[
        Path, typer.Option("--snapshots", help="Folder of snapshots (*.duckdb + manifests).")
    ] = Path("snapshots"),
    out: Annotated[
        Path, typer.Option("--out", help="Output folder; replaced as a whole when the build ends.")
    ] = Path("site/public"),
    strict: Annotated[
        bool, typer.Option("--strict", help="Fail on warnings (a report's snapshot missing…).")
    ] = False,
    archive: Annotated[
        str | None,
        typer.Option(
            "--archive",
            help="github:OWNER/REPO whose releases hold the snapshots: each snapshot page "
            "links its release and files.",
        ),
    ] = None,
    demo_key: DemoKeyOpt = False,
    publish: Annotated[
        Publish,
        typer.Option(
            "--publish",
            help="What report pages show of each cited passage: policy (in full where the "
            "record's licence allows republishing it, else at most 300 characters around the "
            "quote with a link to the source), excerpt (always that) or full (always whole).",
            case_sensitive=False,
        ),
    ] = Publish.POLICY,
) -> None:
    """Render every report, snapshot, snapshot diff and the re-audit page into --out.

    Dates come from SOURCE_DATE_EPOCH (else the newest date in the inputs): building twice
    gives identical bytes. Every snapshot must match its manifest and the manifest's seal must
    verify under the installation's key (or the demo key with --demo-key), or nothing is built.
    """
    from pipeline.site.build import build_site  # heavy: jinja, the engine; only when building

    if archive is not None and not archive.startswith("github:"):
        raise InputError(
            f"--archive {archive!r}: the site links only a public archive, github:OWNER/REPO"
        )
    settings = Settings.from_env()
    keyring = installation_keyring(settings)
    result = build_site(
        reports,
        snapshots,
        out,
        strict=strict,
        keyring=keyring,
        trust=seal_policy(settings, demo_key, keyring=keyring),
        digests=digest_cache(settings),
        archive=archive.removeprefix("github:") if archive else None,
        on_warning=lambda warning: typer.echo(f"warning: {one_line(warning.line())}", err=True),
        publish=publish.value,
    )
    typer.echo(
        f"site: {result.pages} pages ({result.reports} reports, {result.snapshots} snapshots) "
        f"in {out}/index.html"
    )


def register(app: typer.Typer) -> None:
    """Attach ``citeseal site …`` to the root app."""
    app.add_typer(site_app)
