"""CLI: ``citeseal replay import DIR --into REPLAYDIR`` — make recorded responses replayable.

DIR holds wrapper files or raw bodies, in any layout; every file is placed by what it answers
(:mod:`pipeline.replay_import`), and REPLAYDIR is what ``snapshot build --replay REPLAYDIR``
reads. The report lists every file not placed with its reason. Exit 0 when files were placed;
2 (nothing written) when DIR holds no file, none could be placed, or, with ``--strict``, any
could not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from audit.errors import InputError
from audit.terminal import one_line
from pipeline.cli.options import JsonOpt
from pipeline.replay import public_folder
from pipeline.replay_import import ImportPlan, plan_import, write_import
from pipeline.replay_match import KINDS
from pipeline.settings import Settings

replay_app = typer.Typer(
    name="replay",
    help="Turn recorded API responses into a folder that --replay reads.",
    no_args_is_help=True,
)


def report_lines(plan: ImportPlan, folder: str, into: str) -> list[str]:
    """The text report of an import."""
    placed = sum(plan.placed_files.values())
    by_source = ", ".join(f"{s} {n}" for s, n in sorted(plan.placed_files.items()))
    lines = [
        f"read {plan.files} file(s) from {folder}; placed {placed}"
        + (f" ({by_source})" if by_source else "")
        + (f" into {into}" if placed else "")
    ]
    absent = plan.absent()
    for kind, count in sorted(plan.held().items()):
        source, what = KINDS[kind]
        extra = f", {absent[kind]} recorded absent" if absent.get(kind) else ""
        lines.append(f"  {source}: {count} {what}(s) held for by-id requests{extra}")
    if plan.exchanges:
        lines.append(f"  {len(plan.exchanges)} exchange(s) kept for their exact request")
    redact = plan.redact
    for name, reason in plan.not_placed:
        lines.append(f"not placed: {one_line(redact(name))}: {one_line(redact(reason))}")
    for name, note in plan.notes:
        lines.append(f"note: {one_line(redact(name))}: {one_line(redact(note))}")
    return lines


@replay_app.command("import")
def import_command(
    folder: Annotated[
        Path, typer.Argument(metavar="DIR", help="Recorded wrapper files or raw bodies.")
    ],
    into: Annotated[
        Path,
        typer.Option(
            "--into", metavar="REPLAYDIR", help="The replay folder to write (new or empty)."
        ),
    ],
    strict: Annotated[
        bool, typer.Option("--strict", help="Write nothing if any file cannot be placed.")
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """Index recorded responses by what they answer, for snapshot build --replay."""
    plan = plan_import(folder, Settings.from_env())
    shown = public_folder(folder)
    if json_out:
        typer.echo(json.dumps(plan.summary(), ensure_ascii=False, indent=2))
    else:
        for line in report_lines(plan, shown, public_folder(into)):
            typer.echo(line)
    if not plan.placed_files:
        raise InputError(
            f"none of the {plan.files} file(s) in {shown} could be placed; nothing written"
        )
    if strict and plan.not_placed:
        raise InputError(
            f"{len(plan.not_placed)} of the {plan.files} file(s) in {shown} could not be "
            "placed (--strict); nothing written"
        )
    write_import(plan, into, read_from=folder)


def register(app: typer.Typer) -> None:
    """Attach ``citeseal replay …`` to the root app."""
    app.add_typer(replay_app)
