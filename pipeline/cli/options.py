"""Options shared by several commands, defined once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
SnapshotOpt = Annotated[
    Path,
    typer.Option(
        "--snapshot",
        "-s",
        help="Snapshot file (.duckdb), or a corpus folder (its newest snapshot is used).",
    ),
]
DemoKeyOpt = Annotated[
    bool,
    typer.Option(
        "--demo-key",
        help="Use the fixed, public demo key (demo only: reports made with it say so).",
        envvar="CITESEAL_DEMO_KEY",
    ),
]
