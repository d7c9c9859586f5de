"""CLI: ``citeseal site build`` — render the static audit site."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from audit.keys import Keyring, key_file_path, load_keyring
from audit.terminal import one_line
from pipeline.settings import Settings

site_app = typer.Typer(
    name="site",
    help="The static audit site (index, report pages, snapshots, re-audit).",
    no_args_is_help=True,
)


def _installation_keyring(settings: Settings) -> Keyring | None:
    """The installation key when one is configured (never created here), else None."""
    key_text = os.environ.get("CITESEAL_KEY")
    if not key_text and not key_file_path(settings).is_file():
        return None
    return load_keyring(settings, key_text=key_text, create=False)


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
        bool, typer.Option("--strict", help="Fail on warnings (missing snapshot, manifest…).")
    ] = False,
) -> None:
    """Render every report, snapshot, snapshot diff and the re-audit page into --out.

    Dates come from SOURCE_DATE_EPOCH (else the newest date in the inputs): building twice
    gives identical bytes.
    """
    from pipeline.site.build import build_site  # heavy: jinja, the engine; only when building

    keyring = _installation_keyring(Settings.from_env())
    result = build_site(
        reports,
        snapshots,
        out,
        strict=strict,
        keyring=keyring,
        on_warning=lambda warning: typer.echo(f"warning: {one_line(warning.line())}", err=True),
    )
    typer.echo(
        f"site: {result.pages} pages ({result.reports} reports, {result.snapshots} snapshots) "
        f"in {out}/index.html"
    )


def register(app: typer.Typer) -> None:
    """Attach ``citeseal site …`` to the root app."""
    app.add_typer(site_app)
