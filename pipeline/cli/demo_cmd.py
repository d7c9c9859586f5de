"""CLI: ``citeseal demo`` — the whole system, offline, on the bundled demo corpus."""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Annotated

import typer

from audit.resources import resources

# the same folder as pipeline.demo.DEFAULT_OUT, without importing the demo machinery
DEFAULT_OUT = resources().demo_out


def demo(
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            help="Working folder the demo owns (wiped on every run).",
            show_default="site/demo in a source checkout, ./citeseal-demo when installed",
        ),
    ] = DEFAULT_OUT,
    open_: Annotated[
        bool, typer.Option("--open", help="Open the rendered site in a web browser.")
    ] = False,
) -> None:
    """Build the demo snapshots, search, cite, audit a planted answer, render the site.

    Offline and with the fixed, public demo key. Exits 0 when the demo ran (the audit itself
    is planted to FAIL).
    """
    from pipeline.demo import run_demo  # heavy: snapshots, engine, site

    result = run_demo(out, echo=typer.echo)
    if open_:
        webbrowser.open(result.index.resolve().as_uri())


def register(app: typer.Typer) -> None:
    """Attach ``citeseal demo`` to the root app."""
    app.command("demo")(demo)
