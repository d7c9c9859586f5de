"""CLI: ``citeseal evaluate [--seed N] [--per-category K] [--json-out F] [--snapshot PATH]
[--generated-only] [--faults]``.

Plants cases whose verdict the reference oracle decides (:mod:`audit.evaluation`) on the
generated world and on a snapshot — the demo snapshot, built from the bundled recorded
responses into a temporary folder, unless ``--snapshot`` names one (checked against its
manifest and seal first, like every command that reads a snapshot) — audits them and prints
the per-category table and the confusion matrix. ``--faults`` then injects every fault
(:mod:`audit.evaluation.faults`). Exit 0 when every case came out as planted (and every fault
was caught or explained), 1 otherwise.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from audit.errors import InputError
from pipeline.cli.common import keyring_from_settings, seal_policy, trusted_snapshot
from pipeline.cli.options import DemoKeyOpt
from pipeline.settings import Settings

if TYPE_CHECKING:
    from audit.evaluation import Result, World


def _demo_snapshot(folder: Path) -> Path:
    """The demo corpus built twice, as ``citeseal demo`` does (the second is the child)."""
    import shutil

    from audit.keys import Keyring
    from audit.resources import resources
    from pipeline.snapshot.build import build_snapshot

    found = resources()
    spec = folder / "demo.toml"
    shutil.copyfile(found.demo_spec, spec)
    demo = Keyring.demo_keyring()
    first = build_snapshot(spec, keyring=demo, replay=[found.demo_replay])
    second = build_snapshot(
        spec, keyring=demo, parent=first.path, replay=[found.demo_replay_update, found.demo_replay]
    )
    return second.path


def _write_json(path: Path, data: object) -> None:
    try:
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot write {path}: {error.strerror or error}") from None


def evaluate_command(
    seed: Annotated[int, typer.Option("--seed", help="Chooses the planted cases.")] = 0,
    per_category: Annotated[
        int, typer.Option("--per-category", min=1, max=1000, help="Cases per category.")
    ] = 25,
    json_out: Annotated[
        Path | None,
        typer.Option(
            "--json-out", help="Write the full report (with the confusion matrix).", dir_okay=False
        ),
    ] = None,
    snapshot: Annotated[
        Path | None,
        typer.Option(
            "--snapshot",
            "-s",
            help="Plant on this snapshot too (default: the demo snapshot, built offline).",
        ),
    ] = None,
    generated_only: Annotated[
        bool, typer.Option("--generated-only", help="Plant on the generated world only.")
    ] = False,
    faults: Annotated[
        bool,
        typer.Option("--faults", help="Then inject every fault and rerun (generated world)."),
    ] = False,
    demo_key: DemoKeyOpt = False,
) -> None:
    """Prove the audit's decisions on planted cases (exit 1 when any case fails).

    Plants cases in 92 categories on a generated world and on the demo snapshot (or
    --snapshot), writes each as answer text in several citation styles and as claims, audits
    them and compares every verdict, flag, status, metric, reference tier, support label and
    the overall verdict with the oracle's."""
    from audit.evaluation import generated_world, run
    from audit.evaluation.report import to_json, to_text

    if generated_only and snapshot is not None:
        raise InputError("--generated-only and --snapshot exclude each other")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="citeseal-evaluate-") as scratch:
        worlds: list[World] = [generated_world()]
        if generated_only:
            result = run(seed, per_category, worlds)
        else:
            result = _with_snapshot(worlds, snapshot, Path(scratch), demo_key, seed, per_category)
    seconds = time.perf_counter() - started
    typer.echo(to_text(result))
    typer.echo(f"run time {seconds:.1f} s")
    report = to_json(result, seconds)
    ok = result.ok
    if faults:
        from audit.evaluation.faults import EvaluationFailed, run_faults
        from audit.evaluation.faults import to_json as faults_json
        from audit.evaluation.faults import to_text as faults_text

        started = time.perf_counter()
        try:
            outcomes = run_faults(seed, max(per_category, 16))
        except EvaluationFailed as error:  # the faults would be caught for the wrong reason
            typer.echo(f"error: {error}", err=True)
            raise typer.Exit(1) from None
        typer.echo("")
        typer.echo(faults_text(outcomes))
        typer.echo(f"faults run time {time.perf_counter() - started:.1f} s")
        report["faults"] = faults_json(outcomes)
        ok = ok and all(o.ok for o in outcomes)
    if json_out is not None:
        _write_json(json_out, report)
    if not ok:
        raise typer.Exit(1)


def _with_snapshot(
    worlds: list[World],
    snapshot: Path | None,
    scratch: Path,
    demo_key: bool,
    seed: int,
    per_category: int,
) -> Result:
    from audit.evaluation import close_world, run, snapshot_world

    settings = Settings.from_env()
    if snapshot is None:
        from audit.duckdb_corpus import DuckDBCorpus

        path = _demo_snapshot(scratch)
        with DuckDBCorpus(path) as corpus:
            world = snapshot_world(path, corpus, "demo")
            try:
                return run(seed, per_category, [*worlds, world])
            finally:
                close_world(world)
    keyring = keyring_from_settings(settings, demo_key, create=False)
    trusted = trusted_snapshot(snapshot, settings, seal_policy(settings, demo_key, keyring=keyring))
    with trusted.corpus() as corpus:
        world = snapshot_world(trusted.path, corpus)
        try:
            return run(seed, per_category, [*worlds, world])
        finally:
            close_world(world)


def register(app: typer.Typer) -> None:
    """Attach ``citeseal evaluate`` to the root app."""
    app.command("evaluate")(evaluate_command)
