"""CLI: ``citeseal scale ingest | snapshot | generate`` — all of PubMed on Apache Spark.

``ingest`` reads PubMed baseline and update files on Spark into a scale folder (Parquet),
``snapshot`` turns a scale folder into a sealed snapshot that ``audit``, ``search`` and
``serve`` read, ``generate`` writes a synthetic baseline in the real format (docs/scale.md).
PySpark and Java load only inside ``ingest``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pipeline.cli.options import DemoKeyOpt, JsonOpt

scale_app = typer.Typer(
    name="scale",
    help="All of PubMed on Apache Spark: baseline files → Parquet → a sealed snapshot.",
    no_args_is_help=True,
)


@scale_app.command("ingest")
def ingest_command(
    baseline: Annotated[
        Path,
        typer.Option("--baseline", help="Folder of PubMed baseline files (pubmedNNnNNNN.xml.gz)."),
    ],
    out: Annotated[
        Path, typer.Option("--out", help="The scale folder to write (must not exist yet).")
    ],
    updates: Annotated[
        Path | None,
        typer.Option("--updates", help="Folder of PubMed daily update files, applied in order."),
    ] = None,
    master: Annotated[
        str,
        typer.Option(
            "--master",
            help="Spark master URL: local[N] on this machine, spark://HOST:7077, yarn, "
            "k8s://… on a cluster.",
        ),
    ] = "local[*]",
    name: Annotated[
        str, typer.Option("--name", help="Corpus name (generation and snapshot ids).")
    ] = "pubmed",
    json_out: JsonOpt = False,
) -> None:
    """Parse baseline (and update) files on Spark, one task per file, into Hive-partitioned
    Parquet: records/, passages/, versions/, state/, relations/."""
    from pipeline.scale.ingest import ingest

    result = ingest(baseline, updates, out, name=name, master=master)
    m = result.manifest
    if json_out:
        typer.echo(m.model_dump_json(indent=2))
        return
    typer.echo(f"wrote {result.out} in {result.seconds:.1f} s")
    typer.echo(f"  files       {len(m.files)} ({len(m.generations)} generations)")
    typer.echo(f"  snapshot id {m.generations[-1]}")
    for table, rows in m.rows.items():
        typer.echo(f"  {table:<11} {rows:>10,} rows")
    refused = sum(sum(f.refused.values()) for f in m.files)
    if refused:
        typer.echo(f"warning: {refused} record(s) refused: their ids cannot be cited", err=True)
    for warning in m.warnings:
        typer.echo(f"warning: {warning}", err=True)


@scale_app.command("snapshot")
def snapshot_command(
    folder: Annotated[Path, typer.Argument(help="A scale folder (what scale ingest wrote).")],
    out: Annotated[Path, typer.Option("--out", help="The snapshot file to write (.duckdb).")],
    demo_key: DemoKeyOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Build a sealed snapshot from a scale folder (for audit, search and serve)."""
    from pipeline.cli.common import sealing_keyring
    from pipeline.scale.snapshot import build_from_folder
    from pipeline.settings import Settings

    settings = Settings.from_env()
    result = build_from_folder(
        folder, out, keyring=sealing_keyring(settings, demo_key), settings=settings
    )
    m = result.manifest
    if json_out:
        typer.echo(m.model_dump_json(indent=2))
        return
    typer.echo(f"built {result.path}")
    typer.echo(
        f"  lineage   {m.records} records, {m.versions} versions, {m.passages} passages; "
        f"{m.withdrawn} withdrawn by the last update"
    )


@scale_app.command("generate")
def generate_command(
    out: Annotated[Path, typer.Argument(help="Folder to write baseline/ and updates/ into.")],
    records: Annotated[
        int, typer.Option("--records", min=1, help="Records in the baseline.")
    ] = 10_000,
    files: Annotated[int, typer.Option("--files", min=1, help="Baseline files.")] = 4,
    updates: Annotated[int, typer.Option("--updates", min=0, help="Update files.")] = 1,
) -> None:
    """Write a generated PubMed baseline (real file format, synthetic records) for trying
    scale ingest and for the bench."""
    from audit.errors import InputError
    from pipeline.scale.generate import generate_baseline

    if out.exists():
        raise InputError(f"{out} exists: generate writes a new folder", advice="give a new one")
    try:
        made = generate_baseline(out, records, files=files, updates=updates)
    except ValueError as error:
        raise InputError(str(error)) from None
    typer.echo(f"wrote {made.records:,} records in {files} files to {made.baseline}")
    typer.echo(
        f"wrote {updates} update file(s) to {made.updates}: {len(made.revised)} revised, "
        f"{len(made.added)} new, {len(made.deleted)} deleted, {len(made.retracted)} retracted"
    )


def register(app: typer.Typer) -> None:
    """Attach ``citeseal scale …`` to the root app."""
    app.add_typer(scale_app)
